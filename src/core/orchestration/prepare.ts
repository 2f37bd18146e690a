import { failed } from '../results.ts';
import { isLifecycleClient, knownClient, supportsOrchestration } from '../clients.ts';
import { prepareDelegation } from '../receipts.ts';
import type { OrchestrationResult } from '../types.ts';
import { errorMessage, pauseRun, reportRun, resolve, loadRun, save, withUpdates } from './steps.ts';
import type { OrchestrationContext } from './steps.ts';
import { guardHolders } from './guard.ts';
import { policyModel, requestedModelRefusal, runPolicyOf } from './modelPolicy.ts';
import { route } from './run.ts';
import { vendorRefusal } from './vendorPolicy.ts';
import { refusedForRepository, repositoryViolation } from './violations.ts';

// prepare: a new delegation for the routed stage, under the one-pending-per-repository guard.

export async function prepare(
  ctx: OrchestrationContext,
  taskRef: string,
  input: { client: string; requestedModel?: string | null },
): Promise<OrchestrationResult> {
  const task = resolve(ctx, taskRef);
  if (!task.ok) return task.result;
  const { taskId } = task.value;
  // 0.9.2's registry threw on an unknown client; baton answers with a usage error instead.
  if (!knownClient(input.client)) return failed('ORCHESTRATION_PAYLOAD_INVALID', `unknown client '${input.client}'`, taskId);
  if (!supportsOrchestration(input.client)) {
    return failed('ORCHESTRATION_CLIENT_UNSUPPORTED', `client '${input.client}' does not support lifecycle orchestration`, taskId);
  }
  const loaded = loadRun(ctx, task.value);
  if (!loaded.ok) return loaded.result;
  const run = loaded.value;
  if (run?.status !== 'running') return failed('ORCHESTRATION_RUN_NOT_RUNNING', 'a running orchestration is required', taskId);
  if (run.pendingDelegation) return failed('ORCHESTRATION_DELEGATION_BUSY', 'the run already has a pending delegation', taskId);
  // One pending delegation per repository: under 0.9.2 whatever the other run's status, under the
  // later profile only a running run's (guard.ts).
  const repositoryPending = guardHolders(ctx, (receipt) => isLifecycleClient(receipt.client));
  if (repositoryPending.length > 0) {
    return failed('ORCHESTRATION_DELEGATION_BUSY', 'the repository already has a pending lifecycle delegation', taskId);
  }
  // baton (docs/lifecycle.md §6.3): a before-fingerprint would take refused changes for the baseline.
  const violated = repositoryViolation(ctx, null);
  if (violated) return refusedForRepository(taskId, violated);
  if (run.stepCount >= run.maxSteps) {
    return pauseRun(ctx, task.value, run, 'ORCHESTRATION_MAX_STEPS', 'maximum orchestration steps reached', true);
  }
  const routed = route(ctx, taskRef);
  if (!routed.next) return routed;
  const next = routed.next;
  // Later profile: the role's model from the run's policy (modelPolicy.ts), requested before the snapshot.
  const policy = runPolicyOf(ctx, run);
  if (!policy.ok) return failed(policy.code, policy.message, taskId);
  const policyModelOfRole = policyModel(policy.policy, next.role);
  const wrongModel = requestedModelRefusal(policyModelOfRole, input.requestedModel, next.role);
  if (wrongModel) return failed(wrongModel.code, wrongModel.message, taskId);
  // Later profile: the repository's reviewer-vendor policy, from the client named and the model requested (vendorPolicy.ts).
  const requested = input.requestedModel ?? policyModelOfRole;
  const vendor = vendorRefusal(ctx, run, { ...next, client: input.client, model: requested, taskId }, 'prepared for it');
  if (vendor) return failed(vendor.code, `${vendor.message}; nothing was prepared`, taskId);
  let beforeFingerprint: string;
  try {
    beforeFingerprint = await ctx.fingerprinter.capture(ctx.repoRoot);
  } catch (error) {
    return failed('ORCHESTRATION_SNAPSHOT_FAILED', errorMessage(error), taskId);
  }
  const receipt = prepareDelegation(
    {
      taskId,
      runId: run.runId,
      role: next.role,
      stage: next.stage,
      round: next.round,
      artifact: next.artifact,
      client: input.client,
      requestedModel: input.requestedModel ?? policyModelOfRole,
      beforeFingerprint,
    },
    { id: ctx.newId, now: ctx.now },
  );
  const updated = withUpdates(ctx, run, {
    nextStage: next.stage,
    pendingDelegation: receipt,
    commitAuthorization:
      next.stage === 'commit' && run.commitAuthorization.issuedAt === null
        ? { issuedAt: ctx.now(), consumedAt: null }
        : run.commitAuthorization,
  });
  save(ctx, task.value, updated);
  return reportRun(taskId, updated, true, next);
}
