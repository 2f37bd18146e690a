import { failed } from '../results.ts';
import { activeTaskDirs } from '../taskLayout.ts';
import { readRunFile } from '../runStore.ts';
import type { RunRead } from '../runStore.ts';
import type { DelegationReceipt, OrchestrationResult, OrchestrationRun } from '../types.ts';
import type { OrchestrationContext } from './steps.ts';

// The repository scan: the runs of every active task, read through the event's transaction (so an
// event reads each run file once however often it looks), and what is found in them: pending
// delegations (the prepare guard, native hooks, the spawn check), the receipts of children whose
// delegation was consumed.

export type ActiveRun = { taskId: string; run: OrchestrationRun };
export type PendingMatch = ActiveRun & { receipt: DelegationReceipt };

/** The active runs of a repository; `corrupt` says which run files could not be read (skipped). */
export type RepositoryScan = Readonly<{ runs: readonly ActiveRun[]; corrupt: readonly string[] }>;

function scan(repoRoot: string, read: (taskDir: string) => RunRead): RepositoryScan {
  const runs: ActiveRun[] = [];
  const corrupt: string[] = [];
  for (const { taskId, dir } of activeTaskDirs(repoRoot)) {
    const run = read(dir);
    if (run.kind === 'invalid') corrupt.push(run.message);
    else if (run.kind === 'ok') runs.push({ taskId, run: run.run });
  }
  return { runs, corrupt };
}

/** The scan of the event's repository; with `warn`, a corrupt run file is said in the result's warnings. */
export function scanRepository(ctx: OrchestrationContext, options: { warn?: boolean } = {}): RepositoryScan {
  const found = scan(ctx.repoRoot, (dir) => ctx.tx.read(dir));
  if (options.warn) for (const message of found.corrupt) ctx.warnings.push(`skipped corrupt run state: ${message}`);
  return found;
}

/** The active runs (corrupt ones skipped silently). */
export function activeRuns(ctx: OrchestrationContext): readonly ActiveRun[] {
  return scanRepository(ctx).runs;
}

/** The pending delegations of `runs` that `predicate` accepts. */
export function pendingIn(runs: readonly ActiveRun[], predicate: (receipt: DelegationReceipt) => boolean): PendingMatch[] {
  return runs.flatMap(({ taskId, run }) =>
    run.pendingDelegation && predicate(run.pendingDelegation) ? [{ taskId, run, receipt: run.pendingDelegation }] : [],
  );
}

/** The repository's pending delegations that `predicate` accepts; corrupt run files are said in the warnings. */
export function pendingDelegations(ctx: OrchestrationContext, predicate: (receipt: DelegationReceipt) => boolean): PendingMatch[] {
  return pendingIn(scanRepository(ctx, { warn: true }).runs, predicate);
}

/**
 * Every pending delegation in the repository, read straight from the run files (read-only callers
 * such as the PreToolUse spawn check and the worker's reconciliation scan).
 */
export function repositoryPendingDelegations(repoRoot: string): { matches: PendingMatch[]; warnings: string[] } {
  const found = scan(repoRoot, readRunFile);
  return { matches: pendingIn(found.runs, () => true), warnings: found.corrupt.map((message) => `skipped corrupt run state: ${message}`) };
}

/** The one match a native hook event applies to, or the failure that says none or several do. */
export function uniqueMatch(matches: readonly PendingMatch[]): PendingMatch | OrchestrationResult {
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
export function nativeEventTarget(ctx: OrchestrationContext, client: string): string | null {
  const matches = pendingIn(activeRuns(ctx), (receipt) => receipt.client === client);
  return matches.length === 1 ? matches[0]!.receipt.id : null;
}

/** The latest consumed receipt of `client` whose child is `childId`, among `runs`. */
export function consumedReceiptOfChild(runs: readonly ActiveRun[], client: string, childId: string): PendingMatch | null {
  let found: PendingMatch | null = null;
  for (const { taskId, run } of runs) {
    for (const receipt of run.receipts) {
      if (receipt.status !== 'consumed' || receipt.client !== client || receipt.childId !== childId) continue;
      if (!found || (receipt.consumedAt ?? '') > (found.receipt.consumedAt ?? '')) found = { taskId, run, receipt };
    }
  }
  return found;
}
