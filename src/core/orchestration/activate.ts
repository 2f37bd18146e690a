import { failed } from '../results.ts';
import { activateDelegation, managedDelegationRole } from '../receipts.ts';
import type { ActivationEvent } from '../receipts.ts';
import type { DelegationReceipt, OrchestrationResult } from '../types.ts';
import { graceText } from '../reconciliation.ts';
import { pauseByRef, pauseRun, reportRun, requirePending, save, withUpdates } from './steps.ts';
import type { OrchestrationContext } from './steps.ts';
import { consumedReceiptOfChild, isResult, pendingIn, scanRepository, uniqueMatch } from './scan.ts';
import type { ActiveRun } from './scan.ts';
import { activationTooLate, releaseTimedOut } from './activationDeadline.ts';
import { separationRefusal } from './modelPolicy.ts';
import { vendorRefusal } from './vendorPolicy.ts';
import { vendorOf } from '../vendors.ts';

// Activation (SubagentStart): the prepared delegation gets its child.

export function activate(ctx: OrchestrationContext, taskRef: string, event: ActivationEvent): OrchestrationResult {
  const opened = requirePending(ctx, taskRef);
  if (!opened.ok) return opened.result;
  const { task, run, receipt } = opened.value;
  // Later profile: a start after the activation deadline does not activate (activationDeadline.ts).
  if (managedDelegationRole(event.nativeAgent) && activationTooLate(ctx, receipt))
    return releaseTimedOut(ctx, task, run, receipt, event.childId);
  // Later profile: the model the client reports, against the run's model policy (modelPolicy.ts).
  const separation =
    managedDelegationRole(event.nativeAgent) && receipt.status === 'prepared'
      ? separationRefusal(ctx, run, receipt, event.actualModel, 'reported by its client at SubagentStart')
      : null;
  if (separation) {
    const wayOn = `; child ${event.childId} does not count: stop it, then baton task ${task.taskId} abort --reason "reviewer on the executor's model" and prepare again`;
    return pauseRun(ctx, task, run, separation.code, `${separation.message}${wayOn}`, true);
  }
  // Later profile: the reviewer-vendor policy against the model its client reports, when it reports
  // one (prepare and the spawn claim checked the rest; vendorPolicy.ts).
  const vendor =
    managedDelegationRole(event.nativeAgent) && receipt.status === 'prepared' && event.actualModel
      ? vendorRefusal(ctx, run, { ...receipt, model: event.actualModel, taskId: task.taskId }, 'reported at its start')
      : null;
  if (vendor) {
    const wayOn = `; child ${event.childId} does not count: stop it, then baton task ${task.taskId} abort --reason "reviewer of the executor's vendor" and prepare again`;
    return pauseRun(ctx, task, run, vendor.code, `${vendor.message}${wayOn}`, true);
  }
  const outcome = activateDelegation(receipt, event, { now: ctx.now });
  if (!outcome.ok) {
    if (outcome.code === 'DELEGATION_IGNORED') return reportRun(task.taskId, run, false);
    return pauseRun(ctx, task, run, outcome.code, outcome.message, true);
  }
  // Later profile: the vendor it runs in, from its client and the model it reported (src/core/vendors.ts).
  const activated = ctx.rules.reviewerVendorPolicy
    ? { ...outcome.receipt, vendor: vendorOf(receipt.client, outcome.receipt.actualModel).vendor }
    : outcome.receipt;
  const updated = withUpdates(ctx, run, { pendingDelegation: activated });
  save(ctx, task, updated);
  return reportRun(task.taskId, updated, true);
}

export function activateMatching(ctx: OrchestrationContext, client: string, event: ActivationEvent): OrchestrationResult {
  if (!managedDelegationRole(event.nativeAgent)) {
    return failed('DELEGATION_IGNORED', `subagent '${event.nativeAgent}' is not lifecycle-managed`);
  }
  // One scan of the repository answers every question below.
  const { runs } = scanRepository(ctx, { warn: true });
  // baton (multi-turn children): a resumed child (Claude Code SendMessage, Codex send_input) starts
  // another turn of its own delegation; that is recorded in the result, not an error.
  const ofClient = pendingIn(runs, (receipt) => receipt.client === client);
  const own = ofClient.find((match) => match.receipt.status !== 'prepared' && match.receipt.childId === event.childId);
  if (own) {
    ctx.warnings.push(`child ${event.childId} started another turn of delegation ${own.receipt.id} (${own.receipt.status})`);
    return reportRun(own.taskId, own.run, false);
  }
  const prepared = ofClient.filter((match) => match.receipt.status === 'prepared');
  if (prepared.length === 0) {
    const consumed = consumedReceiptOfChild(runs, client, event.childId);
    if (consumed) {
      ctx.warnings.push(`child ${event.childId} started a turn after its delegation ${consumed.receipt.id} was consumed`);
      return reportRun(consumed.taskId, consumed.run, false);
    }
  }
  const matched = uniqueMatch(prepared);
  if (isResult(matched)) return lateStartRefusal(runs, client, event.childId) ?? matched;
  if (matched.run.receipts.some((receipt) => receipt.childId === event.childId)) {
    return pauseByRef(ctx, matched.taskId, 'DELEGATION_IDENTITY_REUSED', 'native child identity was already used by this run', true);
  }
  return activate(ctx, matched.taskId, event);
}

/**
 * baton (docs/architecture.md "Reconciliation"): the start of a subagent for a delegation the worker
 * gave up (no SubagentStart within the spawn grace) is refused with 0.9.2's code for a receipt that
 * is no longer prepared, and changes nothing. Only while that receipt is the client's latest.
 */
function lateStartRefusal(runs: readonly ActiveRun[], client: string, childId: string): OrchestrationResult | null {
  let latest: { taskId: string; receipt: DelegationReceipt } | null = null;
  for (const { taskId, run } of runs) {
    for (const receipt of [...run.receipts, ...(run.pendingDelegation ? [run.pendingDelegation] : [])]) {
      if (receipt.client === client && (!latest || receipt.createdAt > latest.receipt.createdAt)) latest = { taskId, receipt };
    }
  }
  const givenUp =
    latest?.receipt.status === 'aborted' ? latest.receipt.reconciliations?.find((done) => done.kind === 'not-started') : undefined;
  if (!latest || !givenUp) return null;
  return failed(
    'DELEGATION_STATE_INVALID',
    `delegation ${latest.receipt.id} is aborted, expected prepared: baton gave it up at ${givenUp.at} because no subagent started for it within ${graceText(givenUp.graceMs)}. ` +
      `Child ${childId} is not recorded and its work does not count; stop it, then baton task ${latest.taskId} begin-or-resume, route and prepare again`,
    latest.taskId,
  );
}
