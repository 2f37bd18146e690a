import { failed } from '../results.ts';
import { activeTaskDirs } from '../taskLayout.ts';
import { readRunFile } from '../runStore.ts';
import type { RunRead } from '../runStore.ts';
import type { DelegationReceipt, OrchestrationResult, OrchestrationRun } from '../types.ts';
import type { OrchestrationContext } from './steps.ts';

// The repository scan: pending delegations across every active task (the prepare guard, native
// hooks, the spawn check), and the receipts of children whose delegation was consumed.

export type PendingMatch = { taskId: string; run: OrchestrationRun; receipt: DelegationReceipt };

export function pendingDelegations(ctx: OrchestrationContext, predicate: (receipt: DelegationReceipt) => boolean): PendingMatch[] {
  return scanPending(ctx.repoRoot, (dir) => ctx.tx.read(dir), ctx.warnings, predicate);
}

function scanPending(
  repoRoot: string,
  read: (taskDir: string) => RunRead,
  warnings: string[],
  predicate: (receipt: DelegationReceipt) => boolean,
): PendingMatch[] {
  const matches: PendingMatch[] = [];
  for (const { taskId, dir } of activeTaskDirs(repoRoot)) {
    const run = read(dir);
    if (run.kind === 'invalid') {
      warnings.push(`skipped corrupt run state: ${run.message}`);
      continue;
    }
    if (run.kind === 'missing') continue;
    const receipt = run.run.pendingDelegation;
    if (receipt && predicate(receipt)) matches.push({ taskId, run: run.run, receipt });
  }
  return matches;
}

/**
 * Every pending delegation in the repository, read straight from the run files (read-only callers
 * such as the PreToolUse spawn check and `baton runs`).
 */
export function repositoryPendingDelegations(repoRoot: string): { matches: PendingMatch[]; warnings: string[] } {
  const warnings: string[] = [];
  return { matches: scanPending(repoRoot, readRunFile, warnings, () => true), warnings };
}

export function uniquePending(ctx: OrchestrationContext, client: string, predicate: (receipt: DelegationReceipt) => boolean): PendingMatch | OrchestrationResult {
  const matches = pendingDelegations(ctx, (receipt) => receipt.client === client && predicate(receipt));
  if (matches.length === 0) return failed('ORCHESTRATION_DELEGATION_MISSING', 'no matching lifecycle delegation exists');
  if (matches.length > 1) return failed('ORCHESTRATION_DELEGATION_AMBIGUOUS', 'multiple lifecycle delegations match the native hook event');
  return matches[0]!;
}

export function isResult(value: PendingMatch | OrchestrationResult): value is OrchestrationResult {
  return 'status' in value && 'error' in value;
}

/**
 * The id of the receipt a native hook event of `client` would be applied to: the repository's one
 * pending delegation of that client, or null. The worker's journal stores it with each native event
 * so a repeated event id is replayed only when it still targets the same delegation: a reused child
 * id for a later delegation is a new event, not a duplicate (docs/hooks.md "Duplicates").
 */
export function nativeEventTarget(repoRoot: string, client: string, read: (taskDir: string) => RunRead = readRunFile): string | null {
  const matches = scanPending(repoRoot, read, [], (receipt) => receipt.client === client);
  return matches.length === 1 ? matches[0]!.receipt.id : null;
}

type RunEntry = { taskId: string; run: OrchestrationRun };

export function activeRuns(ctx: OrchestrationContext): RunEntry[] {
  const runs: RunEntry[] = [];
  for (const { taskId, dir } of activeTaskDirs(ctx.repoRoot)) {
    const read = ctx.tx.read(dir);
    if (read.kind === 'ok') runs.push({ taskId, run: read.run });
  }
  return runs;
}

/** The latest consumed receipt of `client` whose child is `childId`, across the active runs. */
export function consumedReceiptOfChild(ctx: OrchestrationContext, client: string, childId: string): PendingMatch | null {
  let found: PendingMatch | null = null;
  for (const { taskId, run } of activeRuns(ctx)) {
    for (const receipt of run.receipts) {
      if (receipt.status !== 'consumed' || receipt.client !== client || receipt.childId !== childId) continue;
      if (!found || (receipt.consumedAt ?? '') > (found.receipt.consumedAt ?? '')) found = { taskId, run, receipt };
    }
  }
  return found;
}
