import type { ErrorCode } from '../errorCodes.ts';
import { failed } from '../results.ts';
import { isActiveRunFilePath } from '../taskLayout.ts';
import { extendSealedDelegation, firstForbiddenReviewerPath, forbiddenReviewerPaths, reviewerAllowedPaths } from '../receipts.ts';
import type { OrchestrationResult } from '../types.ts';
import { errorMessage, pauseRun, reportRun, resolve, save, withUpdates } from './steps.ts';
import type { OrchestrationContext } from './steps.ts';
import type { PendingMatch } from './scan.ts';
import { activeRuns } from './scan.ts';
import { pauseForViolation } from './violations.ts';

// Later turns of a child (baton addition, docs/hooks.md "Multi-turn children").

/**
 * The most recent workspace fingerprint baton recorded in the repository: the pending delegation's
 * after- (sealed) or before-fingerprint, else the after-fingerprint of the last consumed receipt.
 */
function latestRecordedFingerprint(ctx: OrchestrationContext): string | null {
  let latest: { at: string; fingerprint: string } | null = null;
  for (const { run } of activeRuns(ctx)) {
    const pending = run.pendingDelegation;
    if (pending) {
      const fingerprint = pending.status === 'sealed' && pending.afterFingerprint ? pending.afterFingerprint : pending.beforeFingerprint;
      return fingerprint;
    }
    for (const receipt of run.receipts) {
      if (receipt.status !== 'consumed' || !receipt.afterFingerprint) continue;
      const at = receipt.consumedAt ?? '';
      if (!latest || at > latest.at) latest = { at, fingerprint: receipt.afterFingerprint };
    }
  }
  return latest?.fingerprint ?? null;
}

export const TURN_AFTER_CONSUMED_CODE = 'DELEGATION_TURN_AFTER_CONSUMED';

/** A later turn of a sealed child: no change is harmless; changes are measured against the receipt. */
export async function laterTurnOfSealed(ctx: OrchestrationContext, match: PendingMatch, childId: string): Promise<OrchestrationResult> {
  const task = resolve(ctx, match.taskId);
  if (!task.ok) return task.result;
  const receipt = match.receipt;
  let after: string;
  let sinceSeal: string[];
  let sincePrepare: string[];
  try {
    after = await ctx.fingerprinter.capture(ctx.repoRoot);
    // Run files are baton's own writes after every fingerprint it records, never a child's change.
    sinceSeal = (await ctx.fingerprinter.diff(ctx.repoRoot, receipt.afterFingerprint ?? receipt.beforeFingerprint, after)).filter(
      (item) => !isActiveRunFilePath(item),
    );
    sincePrepare = sinceSeal.length === 0 ? [] : await ctx.fingerprinter.diff(ctx.repoRoot, receipt.beforeFingerprint, after);
  } catch (error) {
    return pauseRun(ctx, task.value, match.run, 'ORCHESTRATION_SNAPSHOT_FAILED', errorMessage(error), true);
  }
  if (sinceSeal.length === 0) {
    ctx.warnings.push(`child ${childId} ended another turn of sealed delegation ${receipt.id} without changes`);
    return reportRun(match.taskId, match.run, false);
  }
  const outcome = extendSealedDelegation(receipt, { childId, afterFingerprint: after, changedPaths: sincePrepare });
  if (!outcome.ok && outcome.code === 'DELEGATION_REVIEWER_WRITE_FORBIDDEN') {
    // Sticky (docs/lifecycle.md §6.3): the sealed receipt is not consumed until the writes are gone.
    return pauseForViolation(ctx, task.value, match.run, {
      code: outcome.code,
      message: outcome.message,
      receiptId: receipt.id,
      childId,
      baseline: receipt.afterFingerprint ?? receipt.beforeFingerprint,
      allowedPaths: reviewerAllowedPaths(receipt),
      paths: forbiddenReviewerPaths(receipt, sinceSeal),
    });
  }
  if (!outcome.ok) return pauseRun(ctx, task.value, match.run, outcome.code, outcome.message, true);
  ctx.warnings.push(
    `child ${childId} ended another turn of sealed delegation ${receipt.id}; changed since the seal: ${sinceSeal.join(', ')}`,
  );
  const updated = withUpdates(ctx, match.run, { pendingDelegation: outcome.receipt });
  save(ctx, task.value, updated);
  return reportRun(match.taskId, updated, true);
}

/** A turn of a child whose delegation was already consumed: its changes belong to no delegation. */
export async function turnAfterConsumed(ctx: OrchestrationContext, match: PendingMatch, childId: string): Promise<OrchestrationResult> {
  const task = resolve(ctx, match.taskId);
  if (!task.ok) return task.result;
  const baseline = latestRecordedFingerprint(ctx) ?? match.receipt.afterFingerprint ?? match.receipt.beforeFingerprint;
  let changed: string[];
  try {
    changed = (await ctx.fingerprinter.diff(ctx.repoRoot, baseline, await ctx.fingerprinter.capture(ctx.repoRoot))).filter(
      (item) => !isActiveRunFilePath(item),
    );
  } catch (error) {
    return pauseRun(ctx, task.value, match.run, 'ORCHESTRATION_SNAPSHOT_FAILED', errorMessage(error), true);
  }
  if (changed.length === 0) {
    ctx.warnings.push(`child ${childId} ended a turn after its delegation ${match.receipt.id} was consumed, without changes`);
    return reportRun(match.taskId, match.run, false);
  }
  const forbidden = firstForbiddenReviewerPath(match.receipt, changed);
  const [code, message]: [ErrorCode, string] =
    forbidden !== undefined
      ? ['DELEGATION_REVIEWER_WRITE_FORBIDDEN', `reviewer changed forbidden path '${forbidden}'`]
      : [
          TURN_AFTER_CONSUMED_CODE,
          `child ${childId} ran a turn after its delegation ${match.receipt.id} (${match.receipt.stage} round ${match.receipt.round}) was consumed and changed ${changed.map((item) => `'${item}'`).join(', ')}; these changes belong to no delegation`,
        ];
  if (match.run.status === 'completed') return failed(code, message, match.taskId);
  // Sticky (docs/lifecycle.md §6.3): the run is not resumed, nor anything prepared, until they are gone.
  return pauseForViolation(ctx, task.value, match.run, {
    code,
    message,
    receiptId: match.receipt.id,
    childId,
    baseline,
    allowedPaths: [],
    paths: changed,
  });
}
