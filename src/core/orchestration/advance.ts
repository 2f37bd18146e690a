import { failed } from '../results.ts';
import { abortDelegation, consumeDelegation } from '../receipts.ts';
import type { DelegationReceipt, OrchestrationResult, OrchestrationRun, PauseInfo } from '../types.ts';
import { pauseByRef, pauseRun, reportRun, requirePending, requireRun, save, withUpdates } from './steps.ts';
import type { OrchestrationContext } from './steps.ts';
import { keepViolation, refusedForRepository, repositoryViolation, settleViolation } from './violations.ts';

// advance, pause, abort.

/** Receipts whose subagent has not stopped yet: advancing them is early, not wrong. */
const IN_FLIGHT: ReadonlySet<string> = new Set(['prepared', 'activated', 'stage-completed']);

/**
 * baton: what an orchestrator that advanced too early should do (Claude Code runs subagents in the
 * background unless told otherwise, so its completion notice can come after the parent moved on).
 * The pause is recoverable: the late SubagentStop still seals the receipt and `advance` resumes.
 */
export function prematureAdvanceAdvice(taskId: string, receipt: Pick<DelegationReceipt, 'status'>): string {
  const waitFor =
    receipt.status === 'prepared'
      ? 'no subagent has started for it yet: spawn the routed lifecycle subagent (fresh, in the foreground)'
      : 'its subagent has not finished: wait for the subagent to return (spawn it in the foreground, never in the background) and for its SubagentStop hook, which seals the receipt';
  return `${waitFor}; check with 'baton task ${taskId} status' until run.pendingDelegation.status is 'sealed', then advance again; if the subagent is gone, 'baton task ${taskId} abort --reason "…"' and 'baton task ${taskId} begin-or-resume'`;
}

export async function advance(ctx: OrchestrationContext, taskRef: string): Promise<OrchestrationResult> {
  const opened = requirePending(ctx, taskRef);
  if (!opened.ok) return opened.result;
  const { task } = opened.value;
  // baton (docs/lifecycle.md §6.3): refused changes are never consumed with a delegation, whatever
  // the run's status (0.9.2 advanced a paused run regardless).
  const elsewhere = repositoryViolation(ctx, task.taskId);
  if (elsewhere) return refusedForRepository(task.taskId, elsewhere);
  const settled = await settleViolation(ctx, task, opened.value.run);
  if (!settled.ok) return settled.result;
  const run = settled.run;
  const receipt = run.pendingDelegation ?? opened.value.receipt;
  // One instant for the receipt and the commit authorization: the same event consumed both.
  const consumedAt = ctx.now();
  const outcome = consumeDelegation(receipt, { now: () => consumedAt });
  if (!outcome.ok) {
    const message = IN_FLIGHT.has(receipt.status) ? `${outcome.message}; ${prematureAdvanceAdvice(task.taskId, receipt)}` : outcome.message;
    return pauseRun(ctx, task, run, outcome.code, message, true);
  }
  const completed = outcome.receipt.stage === 'commit';
  const updated = withUpdates(ctx, run, {
    status: completed ? 'completed' : 'running',
    nextStage: null,
    stepCount: run.stepCount + 1,
    pendingDelegation: null,
    receipts: Object.freeze([...run.receipts, outcome.receipt]),
    commitAuthorization: completed ? { ...run.commitAuthorization, consumedAt } : run.commitAuthorization,
  });
  save(ctx, task, updated);
  return reportRun(task.taskId, updated, true);
}

export function pause(
  ctx: OrchestrationContext,
  taskRef: string,
  input: { code: string; message: string; recoverable: boolean },
): OrchestrationResult {
  return pauseByRef(ctx, taskRef, input.code, input.message, input.recoverable);
}

export const ABORT_PAUSE_CODE = 'ORCHESTRATION_DELEGATION_ABORTED';

/**
 * The run once its pending delegation is given up (`receipts`: the history with the aborted receipt):
 * paused with `pause`, nothing pending, so the repository-wide guard no longer counts it.
 */
export function pausedWithoutPending(
  ctx: OrchestrationContext,
  run: OrchestrationRun,
  receipts: readonly DelegationReceipt[],
  pause: PauseInfo | null,
  extra: Partial<OrchestrationRun> = {},
): OrchestrationRun {
  return withUpdates(ctx, run, { status: 'paused', nextStage: null, pendingDelegation: null, receipts, pause, ...extra });
}

/**
 * baton's way out of 0.9.2's dead end (decision 6): the pending receipt becomes `aborted` and joins
 * the history, and the run is paused recoverably with no pending delegation, so begin-or-resume can
 * resume it and the repository-wide guard no longer counts it.
 */
export function abort(ctx: OrchestrationContext, taskRef: string, input: { reason?: string }): OrchestrationResult {
  const opened = requireRun(ctx, taskRef);
  if (!opened.ok) return opened.result;
  const { task, run } = opened.value;
  // baton (docs/lifecycle.md §6.3): abort is also the human's decision to keep changes the write
  // restriction refused, with or without a pending delegation.
  const kept = keepViolation(ctx, run, input.reason);
  if (!run.pendingDelegation && !kept) return failed('ORCHESTRATION_DELEGATION_MISSING', 'no pending delegation exists', task.taskId);
  let receipts = run.receipts;
  let message = input.reason;
  if (run.pendingDelegation) {
    const outcome = abortDelegation(run.pendingDelegation, { now: ctx.now });
    if (!outcome.ok) return failed(outcome.code, outcome.message, task.taskId);
    receipts = Object.freeze([...run.receipts, outcome.receipt]);
    message ??= `delegation ${outcome.receipt.id} was aborted`;
  }
  message = kept ? `${message ?? 'aborted without a reason'}; ${kept.note}` : message!;
  const updated = pausedWithoutPending(
    ctx,
    run,
    receipts,
    { code: ABORT_PAUSE_CODE, message, recoverable: true },
    kept ? { violations: kept.violations } : {},
  );
  save(ctx, task, updated);
  return reportRun(task.taskId, updated, true);
}
