import { failed } from '../results.ts';
import { forbiddenReviewerPaths, managedDelegationRole, reviewerAllowedPaths, sealDelegation } from '../receipts.ts';
import type { DelegationReceipt, OrchestrationResult, OrchestrationRun } from '../types.ts';
import { errorMessage, pauseRun, reportRun, requirePending, resolve, save, withUpdates } from './steps.ts';
import type { OrchestrationContext, Resolved } from './steps.ts';
import { consumedReceiptOfChild, isResult, pendingIn, scanRepository, uniqueMatch } from './scan.ts';
import { laterTurnOfSealed, turnAfterConsumed } from './laterTurns.ts';
import { pauseForViolation } from './violations.ts';
import { afterStopEvidence, recordStopBeforeCompletion } from './lifecycleRecovery.ts';
import { unrecordedCost } from '../stageCost.ts';
import type { StageCost } from '../stageCost.ts';

// Sealing (SubagentStop): the workspace after the delegation, measured by baton itself.

type SealEvent = { childId: string; exitCode: number; afterFingerprint: string; changedPaths: readonly string[] };

/** Why a seal has no cost read from the client's record. */
const NO_STOP_RECORD = 'sealed without a SubagentStop, and nothing named a record of the child';
const NO_EXPLICIT_RECORD = 'an explicit hook-stop names no record of the child';

/**
 * The stage's cost for a stop: the caller's reading of the record the stop named (ctx.stopCost),
 * else a note that none was named (an `--ephemeral` Codex session, a client without one).
 */
function stopCost(ctx: OrchestrationContext, client: string): StageCost {
  return ctx.stopCost ?? unrecordedCost(null, null, `the SubagentStop payload of ${client} named no record of the child's requests`);
}

function sealLoaded(
  ctx: OrchestrationContext,
  task: Resolved,
  run: OrchestrationRun,
  receipt: DelegationReceipt,
  event: SealEvent,
  cost: StageCost,
): OrchestrationResult {
  if (ctx.rules.recoveryFromEvidence && receipt.status === 'activated' && event.childId === receipt.childId && event.exitCode === 0) {
    // Later profile: the child ended without handing its stage over; the evidence recover-started needs.
    return recordStopBeforeCompletion(ctx, task, run, receipt);
  }
  const outcome = sealDelegation(receipt, event, { now: ctx.now });
  if (!outcome.ok && outcome.code === 'DELEGATION_REVIEWER_WRITE_FORBIDDEN') {
    // Sticky (docs/lifecycle.md §6.3): the receipt stays unsealed until the writes are gone.
    return pauseForViolation(ctx, task, run, {
      code: outcome.code,
      message: outcome.message,
      receiptId: receipt.id,
      childId: event.childId,
      baseline: receipt.beforeFingerprint,
      allowedPaths: reviewerAllowedPaths(receipt),
      paths: forbiddenReviewerPaths(receipt, event.changedPaths),
    });
  }
  if (!outcome.ok) return pauseRun(ctx, task, run, outcome.code, outcome.message, true);
  const sealed: DelegationReceipt = { ...outcome.receipt, cost };
  const updated = withUpdates(ctx, run, { pendingDelegation: sealed, ...afterStopEvidence(ctx, run) });
  save(ctx, task, updated);
  return reportRun(task.taskId, updated, true);
}

/** Captures the workspace after a delegation and lists what changed since its receipt was prepared. */
async function workspaceChange(
  ctx: OrchestrationContext,
  receipt: DelegationReceipt,
): Promise<{ afterFingerprint: string; changedPaths: string[] }> {
  const afterFingerprint = await ctx.fingerprinter.capture(ctx.repoRoot);
  const changedPaths = await ctx.fingerprinter.diff(ctx.repoRoot, receipt.beforeFingerprint, afterFingerprint);
  return { afterFingerprint, changedPaths };
}

/**
 * baton (docs/architecture.md "Reconciliation"): seals `receipt`, the run's pending delegation, with
 * the workspace measured now and every check a stop makes, for a completed stage whose stop never came.
 */
export async function sealMeasured(
  ctx: OrchestrationContext,
  task: Resolved,
  run: OrchestrationRun,
  receipt: DelegationReceipt,
  cost: StageCost = unrecordedCost(null, null, NO_STOP_RECORD),
): Promise<OrchestrationResult> {
  let change: { afterFingerprint: string; changedPaths: string[] };
  try {
    change = await workspaceChange(ctx, receipt);
  } catch (error) {
    return pauseRun(ctx, task, run, 'ORCHESTRATION_SNAPSHOT_FAILED', errorMessage(error), true);
  }
  return sealLoaded(ctx, task, run, receipt, { childId: receipt.childId ?? '', exitCode: 0, ...change }, cost);
}

/**
 * Explicit-task stop (`baton task <ref> hook-stop --child-id --exit-code`). Unlike 0.9.2, baton
 * captures the after-fingerprint and the changed paths itself: a caller-supplied list could slip
 * past the reviewer write restriction.
 */
export async function sealExplicit(
  ctx: OrchestrationContext,
  taskRef: string,
  event: { childId: string; exitCode: number },
): Promise<OrchestrationResult> {
  const opened = requirePending(ctx, taskRef);
  if (!opened.ok) return opened.result;
  const { task, run, receipt } = opened.value;
  let change: { afterFingerprint: string; changedPaths: string[] };
  try {
    change = await workspaceChange(ctx, receipt);
  } catch (error) {
    return pauseRun(ctx, task, run, 'ORCHESTRATION_SNAPSHOT_FAILED', errorMessage(error), true);
  }
  return sealLoaded(ctx, task, run, receipt, { ...event, ...change }, unrecordedCost(null, null, NO_EXPLICIT_RECORD));
}

export async function sealMatching(
  ctx: OrchestrationContext,
  client: string,
  event: { nativeAgent: string; childId: string },
): Promise<OrchestrationResult> {
  const role = managedDelegationRole(event.nativeAgent);
  if (!role) return failed('DELEGATION_IGNORED', `subagent '${event.nativeAgent}' is not lifecycle-managed`);
  // baton (multi-turn children): Codex stops every turn, Claude Code stops a resumed child again.
  const { runs } = scanRepository(ctx, { warn: true });
  const ofClient = pendingIn(runs, (receipt) => receipt.client === client && receipt.status !== 'prepared');
  const own = ofClient.find((match) => match.receipt.childId === event.childId);
  if (own?.receipt.status === 'sealed') return laterTurnOfSealed(ctx, own, event.childId);
  if (!own) {
    const consumed = consumedReceiptOfChild(runs, client, event.childId);
    if (consumed) return turnAfterConsumed(ctx, consumed, event.childId);
  }
  const matched = uniqueMatch(ofClient);
  if (isResult(matched)) return matched;
  const task = resolve(ctx, matched.taskId);
  if (!task.ok) return task.result;
  // baton (with decision 6): the stop of a child whose delegation was aborted can still arrive
  // while the next delegation runs; it says nothing about that delegation, so it changes nothing.
  if (
    matched.receipt.childId !== event.childId &&
    matched.run.receipts.some((receipt) => receipt.status === 'aborted' && receipt.childId === event.childId)
  ) {
    ctx.warnings.push(`ignored the stop of child ${event.childId}: its delegation was aborted`);
    return reportRun(task.value.taskId, matched.run, false);
  }
  if (matched.receipt.role !== role) {
    return pauseRun(
      ctx,
      task.value,
      matched.run,
      'DELEGATION_ROLE_MISMATCH',
      `managed role ${role} does not match ${matched.receipt.role}`,
      true,
    );
  }
  let change: { afterFingerprint: string; changedPaths: string[] };
  try {
    change = await workspaceChange(ctx, matched.receipt);
  } catch (error) {
    return pauseRun(ctx, task.value, matched.run, 'ORCHESTRATION_SNAPSHOT_FAILED', errorMessage(error), true);
  }
  // Native stop payloads carry no exit status: 0.9.2 hard-wires 0.
  return sealLoaded(
    ctx,
    task.value,
    matched.run,
    matched.receipt,
    { childId: event.childId, exitCode: 0, ...change },
    stopCost(ctx, client),
  );
}
