import type { DelegationReceipt, OrchestrationResult, OrchestrationRun } from '../types.ts';
import { graceText } from '../reconciliation.ts';
import { pauseRun, reportRun, save, withUpdates } from './steps.ts';
import type { OrchestrationContext, Resolved } from './steps.ts';

// Recovery from positive evidence, the later profile's rule `recoveryFromEvidence` (agent-infra
// #993, #994): a delegation whose child was started is recovered only on evidence that the child
// ended, its stage completion and its stop, never because it went quiet. baton's reconciliation
// (`--stop-grace`, docs/architecture.md "Reconciliation") seals, under agent-infra-0.9.2, a completed
// stage whose SubagentStop never came; under the later profile that missing stop makes the recovery
// incomplete: the run pauses with upstream's code instead, and the child's own stop (the evidence
// that was missing) seals the delegation and lifts that pause. A stalled child (never completed) is
// paused under both profiles, which recovers nothing. A child that stops before completing its stage
// has ended (its stop is the evidence) without handing its results over: under the later profile the
// stop is recorded on the receipt (`childStoppedAt`) and the run pauses with the same code, and the
// orchestrator's `recover-started` (recoverStarted.ts) releases that delegation from this evidence.

export const RECOVERY_INCOMPLETE_CODE = 'ORCHESTRATION_LIFECYCLE_RECOVERY_INCOMPLETE';

/** Under the later profile: the completed stage whose stop did not come is not sealed; the run pauses. */
export function pauseIncompleteRecovery(
  ctx: OrchestrationContext,
  task: Resolved,
  run: OrchestrationRun,
  receipt: DelegationReceipt,
  graceMs: number,
): OrchestrationResult {
  const message =
    `delegation ${receipt.id} (${receipt.stage} round ${receipt.round}): child ${receipt.childId} completed its stage at ${receipt.stageCompletedAt ?? 'an unknown time'} ` +
    `but its stop has not come within ${graceText(graceMs)}; profile ${ctx.rules.name} recovers a delegation only from its completion and its stop. ` +
    `Its stop seals it and lifts this pause; if that subagent is gone, baton task ${task.taskId} abort --reason "…", then begin-or-resume`;
  return pauseRun(ctx, task, run, RECOVERY_INCOMPLETE_CODE, message, true);
}

/** What a seal changes in the run besides its receipt: the missing stop came, so an incomplete recovery's pause is lifted. */
export function afterStopEvidence(ctx: OrchestrationContext, run: OrchestrationRun): Partial<OrchestrationRun> {
  if (!ctx.rules.recoveryFromEvidence || run.status !== 'paused' || run.pause?.code !== RECOVERY_INCOMPLETE_CODE) return {};
  return { status: 'running', pause: null };
}

/**
 * Under the later profile: the stop of a child that had not completed its stage. The child ended
 * (positive evidence) and its results never came; the stop is recorded and the run pauses until
 * `recover-started` releases the delegation (or the child, given another turn, completes and stops).
 * A run already paused keeps that pause, which says more; the stop is recorded all the same.
 */
export function recordStopBeforeCompletion(
  ctx: OrchestrationContext,
  task: Resolved,
  run: OrchestrationRun,
  receipt: DelegationReceipt,
): OrchestrationResult {
  const stopped: DelegationReceipt = { ...receipt, childStoppedAt: ctx.now() };
  const recorded: OrchestrationRun = { ...run, pendingDelegation: stopped };
  const message =
    `delegation ${receipt.id} (${receipt.stage} round ${receipt.round}): child ${receipt.childId} stopped at ${stopped.childStoppedAt} without completing its stage, so its results never came. ` +
    `baton task ${task.taskId} recover-started releases the delegation from that stop; then route and prepare again`;
  if (run.status === 'paused') {
    ctx.warnings.push(`${message} (the run stays paused: ${run.pause?.code ?? 'no code'})`);
    const updated = withUpdates(ctx, recorded, {});
    save(ctx, task, updated);
    return reportRun(task.taskId, updated, true);
  }
  return pauseRun(ctx, task, recorded, RECOVERY_INCOMPLETE_CODE, message, true);
}
