import { STALLED_PAUSE_CODE } from '../reconciliation.ts';
import type { EvidenceMark } from '../reconciliation.ts';
import type { DelegationReceipt, OrchestrationResult, OrchestrationRun } from '../types.ts';
import { pauseRun, reportRun, resolve, save, withUpdates } from './steps.ts';
import type { OrchestrationContext } from './steps.ts';
import { pendingDelegations } from './scan.ts';
import { sealMeasured } from './seal.ts';
import { describeDelegation } from './reconcile.ts';

// Evidence first (baton addition, docs/architecture.md "Reconciliation", issue 25): the client
// itself reports a child gone without a stop (Claude Code's TaskStop of a background subagent; Codex
// v2's interrupt_agent), so the delegation is reconciled at once, from that evidence, instead of after
// the --stop-grace: a completed stage is sealed as its stop would seal it, an unfinished one pauses
// the run with BATON_DELEGATION_STALLED. The outcome is the grace's; only the wait and the reason
// differ, and the reason (the evidence) is recorded on the receipt's reconciliation mark.

/** What the client said: the tool that ended the child (`TaskStop`, `interrupt_agent`). */
export type GoneEvent = { childId: string; evidence: string };

/** The hook's `child-gone` event: the pending delegation of `client` whose child is `event.childId`, if any. */
export async function childGone(ctx: OrchestrationContext, client: string, event: GoneEvent): Promise<OrchestrationResult> {
  const matches = pendingDelegations(ctx, (receipt) => receipt.client === client && receipt.childId === event.childId);
  const match = matches[0];
  if (!match) {
    // A task, shell or child baton does not hold (or a delegation already consumed): nothing to do.
    ctx.warnings.push(`nothing to reconcile: no pending delegation of ${client} has child ${event.childId} (${event.evidence})`);
    return { status: 'running', changed: false, taskId: null, run: null, next: null, error: null };
  }
  const task = resolve(ctx, match.taskId);
  if (!task.ok) return task.result;
  const { run, receipt } = match;
  const since = receipt.status === 'stage-completed' ? (receipt.stageCompletedAt ?? receipt.activatedAt) : receipt.activatedAt;
  if ((receipt.status !== 'activated' && receipt.status !== 'stage-completed') || !since) {
    // Sealed already (its stop came first): the evidence changes nothing.
    ctx.warnings.push(`nothing to reconcile: delegation ${receipt.id} is ${receipt.status} (${event.evidence} of child ${event.childId})`);
    return reportRun(task.value.taskId, run, false);
  }
  const kind = receipt.status === 'stage-completed' ? 'sealed' : 'stalled';
  const mark: EvidenceMark = { kind, since, graceMs: 0, at: ctx.now(), evidence: event.evidence };
  const marked: DelegationReceipt = { ...receipt, reconciliations: [...(receipt.reconciliations ?? []), mark] };
  const markedRun: OrchestrationRun = { ...run, pendingDelegation: marked };
  // The client's record of the child, when its report led to one (ctx.stopCost); else the seal notes that none was named.
  if (kind === 'sealed') return sealMeasured(ctx, task.value, markedRun, marked, ctx.stopCost);
  if (run.status === 'paused') {
    // Already paused for its own reason: that pause says more; the evidence is recorded.
    ctx.warnings.push(`${describeDelegation(marked)}: ${gone(event)}; the run stays paused (${run.pause?.code ?? 'no code'})`);
    const updated = withUpdates(ctx, markedRun, {});
    save(ctx, task.value, updated);
    return reportRun(task.value.taskId, updated, true);
  }
  const taskId = task.value.taskId;
  const message =
    `${describeDelegation(marked)}: ${gone(event)} before it completed its stage. ` +
    `To go on: baton task ${taskId} abort --reason "…", then baton task ${taskId} begin-or-resume, and route and prepare again`;
  return pauseRun(ctx, task.value, markedRun, STALLED_PAUSE_CODE, message, true);
}

function gone(event: GoneEvent): string {
  return `the client reported child ${event.childId} gone (${event.evidence})`;
}
