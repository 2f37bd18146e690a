import type { DelegationReceipt, OrchestrationResult, OrchestrationRun } from '../types.ts';
import { abortDelegation } from '../receipts.ts';
import { failed } from '../results.ts';
import { save, withUpdates } from './steps.ts';
import type { OrchestrationContext, Resolved } from './steps.ts';

// The activation deadline of the later profile (agent-infra #854, #870; src/core/profile.ts). The
// spawn claim, baton's point where the orchestrator's spawn is dispatched, starts the clock; a child
// whose start arrives after it does not activate the delegation (DELEGATION_ACTIVATION_TIMEOUT), and
// the never-activated delegation is released as upstream's `recover-prepared` releases it: the
// receipt becomes `aborted` and joins the history, the run goes on with no pending delegation.
// Under agent-infra-0.9.2 no deadline is set, so nothing here applies.

/** The receipt with its activation deadline, when the profile has one: the claim just made starts it (a claim made again, after a release, starts it again). */
export function withActivationDeadline(ctx: OrchestrationContext, receipt: DelegationReceipt): DelegationReceipt {
  const ms = ctx.rules.activationDeadlineMs;
  if (ms === null || !receipt.spawnClaim) return receipt;
  return { ...receipt, activationDeadlineAt: new Date(Date.parse(receipt.spawnClaim.claimedAt) + ms).toISOString() };
}

/** Whether activation evidence arriving now comes after the receipt's deadline. */
export function activationTooLate(ctx: OrchestrationContext, receipt: DelegationReceipt): boolean {
  // A claim released since (its spawn was blocked) leaves no clock running.
  if (receipt.status !== 'prepared' || !receipt.spawnClaim || !receipt.activationDeadlineAt) return false;
  return Date.parse(ctx.now()) > Date.parse(receipt.activationDeadlineAt);
}

/**
 * Late activation evidence: upstream's code and message, and the delegation released (upstream's
 * recover-prepared, done at once: nothing can activate it any more). The run stays running.
 */
export function releaseTimedOut(
  ctx: OrchestrationContext,
  task: Resolved,
  run: OrchestrationRun,
  receipt: DelegationReceipt,
  childId: string,
): OrchestrationResult {
  const aborted = abortDelegation(receipt, { now: ctx.now });
  if (!aborted.ok) return failed(aborted.code, aborted.message, task.taskId);
  const released = withUpdates(ctx, run, {
    nextStage: null,
    pendingDelegation: null,
    receipts: Object.freeze([...run.receipts, aborted.receipt]),
  });
  save(ctx, task, released);
  return failed(
    'DELEGATION_ACTIVATION_TIMEOUT',
    `delegation ${receipt.id} activation evidence arrived after its deadline (${receipt.activationDeadlineAt}); ` +
      `the delegation was released and child ${childId} does not count: stop it, then baton task ${task.taskId} route and prepare again`,
    task.taskId,
  );
}
