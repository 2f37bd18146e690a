import { failed } from '../results.ts';
import { activateDelegation, managedDelegationRole } from '../receipts.ts';
import type { ActivationEvent } from '../receipts.ts';
import type { OrchestrationResult } from '../types.ts';
import { pauseByRef, pauseRun, reportRun, requirePending, save, withUpdates } from './steps.ts';
import type { OrchestrationContext } from './steps.ts';
import { consumedReceiptOfChild, isResult, pendingDelegations, uniquePending } from './scan.ts';

// Activation (SubagentStart): the prepared delegation gets its child.

export function activate(ctx: OrchestrationContext, taskRef: string, event: ActivationEvent): OrchestrationResult {
  const opened = requirePending(ctx, taskRef);
  if (!opened.ok) return opened.result;
  const { task, run, receipt } = opened.value;
  const outcome = activateDelegation(receipt, event, { now: ctx.now });
  if (!outcome.ok) {
    if (outcome.code === 'DELEGATION_IGNORED') return reportRun(task.taskId, run, false);
    return pauseRun(ctx, task, run, outcome.code, outcome.message, true);
  }
  const updated = withUpdates(ctx, run, { pendingDelegation: outcome.receipt });
  save(ctx, task, updated);
  return reportRun(task.taskId, updated, true);
}

export function activateMatching(ctx: OrchestrationContext, client: string, event: ActivationEvent): OrchestrationResult {
  if (!managedDelegationRole(event.nativeAgent)) {
    return failed('DELEGATION_IGNORED', `subagent '${event.nativeAgent}' is not lifecycle-managed`);
  }
  // baton (multi-turn children): a resumed child (Claude Code SendMessage, Codex send_input) starts
  // another turn of its own delegation; that is recorded in the result, not an error.
  const ofClient = pendingDelegations(ctx, (receipt) => receipt.client === client);
  const own = ofClient.find((match) => match.receipt.status !== 'prepared' && match.receipt.childId === event.childId);
  if (own) {
    ctx.warnings.push(`child ${event.childId} started another turn of delegation ${own.receipt.id} (${own.receipt.status})`);
    return reportRun(own.taskId, own.run, false);
  }
  if (!ofClient.some((match) => match.receipt.status === 'prepared')) {
    const consumed = consumedReceiptOfChild(ctx, client, event.childId);
    if (consumed) {
      ctx.warnings.push(`child ${event.childId} started a turn after its delegation ${consumed.receipt.id} was consumed`);
      return reportRun(consumed.taskId, consumed.run, false);
    }
  }
  const matched = uniquePending(ctx, client, (receipt) => receipt.status === 'prepared');
  if (isResult(matched)) return matched;
  if (matched.run.receipts.some((receipt) => receipt.childId === event.childId)) {
    return pauseByRef(ctx, matched.taskId, 'DELEGATION_IDENTITY_REUSED', 'native child identity was already used by this run', true);
  }
  return activate(ctx, matched.taskId, event);
}
