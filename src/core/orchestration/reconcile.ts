import { abortDelegation } from '../receipts.ts';
import { NOT_STARTED_PAUSE_CODE, STALLED_PAUSE_CODE, awaited, dueReconciliation, graceText } from '../reconciliation.ts';
import type { DelegationReceipt, OrchestrationResult, OrchestrationRun, Reconciliation, ReconciliationKind } from '../types.ts';
import { pauseRun, reportRun, requireRun, save, withUpdates } from './steps.ts';
import type { OrchestrationContext, Resolved } from './steps.ts';
import { sealMeasured } from './seal.ts';
import { pausedWithoutPending } from './advance.ts';
import { pauseIncompleteRecovery } from './lifecycleRecovery.ts';

// Reconciliation (baton addition, docs/architecture.md "Reconciliation"): a delegation that waits
// past its grace for an event that did not come is settled by the worker, through the same
// serialized queue as every event (the `reconcile` job). Each reconciliation is recorded on its
// receipt and happens once; the clocks are in ../reconciliation.ts.

export type ReconcileEvent = { receiptId: string; kind: ReconciliationKind; since: string; graceMs: number };

/** The worker's `reconcile` job: acts only if the receipt still waits where the worker saw it, past the grace. */
export async function reconcile(ctx: OrchestrationContext, taskRef: string, event: ReconcileEvent): Promise<OrchestrationResult> {
  const opened = requireRun(ctx, taskRef);
  if (!opened.ok) return opened.result;
  const { task, run } = opened.value;
  const receipt = run.pendingDelegation;
  const now = ctx.now();
  const due =
    receipt?.id === event.receiptId ? dueReconciliation(receipt, { stopGraceMs: event.graceMs, spawnGraceMs: event.graceMs }) : null;
  if (!receipt || !due || due.kind !== event.kind || due.since !== event.since || Date.parse(now) < due.dueAt) {
    // The awaited event came after the job was queued (or another worker acted first): nothing to do.
    ctx.warnings.push(
      `nothing to reconcile: delegation ${event.receiptId} no longer waits for ${awaited(event.kind)} since ${event.since}`,
    );
    return reportRun(task.taskId, run, false);
  }
  const mark: Reconciliation = { kind: event.kind, since: event.since, graceMs: event.graceMs, at: now };
  const marked: DelegationReceipt = { ...receipt, reconciliations: [...(receipt.reconciliations ?? []), mark] };
  const markedRun: OrchestrationRun = { ...run, pendingDelegation: marked };
  switch (event.kind) {
    case 'sealed':
      // Later profile: no seal without the child's stop (lifecycleRecovery.ts).
      return ctx.rules.recoveryFromEvidence
        ? pauseIncompleteRecovery(ctx, task, markedRun, marked, event.graceMs)
        : sealMeasured(ctx, task, markedRun, marked, ctx.stopCost);
    case 'stalled':
      return pauseStalled(ctx, task, markedRun, marked, event.graceMs);
    case 'not-started':
      return giveUp(ctx, task, markedRun, marked, event.graceMs);
  }
}

/** How a reconciliation's messages name the delegation (also the client's evidence, gone.ts). */
export function describeDelegation(receipt: DelegationReceipt): string {
  return `delegation ${receipt.id} (${receipt.stage} round ${receipt.round}, ${receipt.role}, client ${receipt.client})`;
}

/** Activated, never completed: the run pauses with what to do; a child still at work may still complete and stop. */
function pauseStalled(
  ctx: OrchestrationContext,
  task: Resolved,
  run: OrchestrationRun,
  receipt: DelegationReceipt,
  graceMs: number,
): OrchestrationResult {
  if (run.status === 'paused') {
    // Already paused for its own reason: that pause says more; the clock is recorded, once.
    ctx.warnings.push(
      `${describeDelegation(receipt)} has not completed its stage within ${graceText(graceMs)}; the run stays paused (${run.pause?.code ?? 'no code'})`,
    );
    const updated = withUpdates(ctx, run, {});
    save(ctx, task, updated);
    return reportRun(task.taskId, updated, true);
  }
  const message =
    `${describeDelegation(receipt)} started child ${receipt.childId} at ${receipt.activatedAt}, which has not completed its stage within ${graceText(graceMs)} and has not stopped. ` +
    `If that subagent is gone: baton task ${task.taskId} abort --reason "…", then baton task ${task.taskId} begin-or-resume. ` +
    `If it is still working, nothing needs doing: its complete-stage lifts this pause, its stop seals the delegation, and advance goes on`;
  return pauseRun(ctx, task, run, STALLED_PAUSE_CODE, message, true);
}

/** Prepared, never started: given up as `abort` does, so the repository is free for other tasks. */
function giveUp(
  ctx: OrchestrationContext,
  task: Resolved,
  run: OrchestrationRun,
  receipt: DelegationReceipt,
  graceMs: number,
): OrchestrationResult {
  const outcome = abortDelegation(receipt, { now: ctx.now });
  // Unreachable: a prepared receipt can always be aborted.
  if (!outcome.ok) return pauseRun(ctx, task, run, outcome.code, outcome.message, true);
  const message =
    `${describeDelegation(receipt)} was prepared at ${receipt.createdAt}${receipt.spawnClaim ? ` (spawn claimed at ${receipt.spawnClaim.claimedAt})` : ''} and no subagent started for it within ${graceText(graceMs)}; ` +
    `baton gave it up and released the repository. To go on: baton task ${task.taskId} begin-or-resume, then route and prepare again`;
  const keepPause = run.status === 'paused' && run.pause !== null;
  const pause = keepPause ? run.pause : { code: NOT_STARTED_PAUSE_CODE, message, recoverable: true };
  const updated = pausedWithoutPending(ctx, run, Object.freeze([...run.receipts, outcome.receipt]), pause);
  if (keepPause) ctx.warnings.push(message);
  save(ctx, task, updated);
  return reportRun(task.taskId, updated, true);
}
