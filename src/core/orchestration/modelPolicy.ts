import { clientAdapter } from '../../clients/registry.ts';
import type { ErrorCode } from '../errorCodes.ts';
import { lifecycleAgentName } from '../receipts.ts';
import type { DelegationReceipt, DelegationRole, ModelPolicy, OrchestrationNext, OrchestrationRun } from '../types.ts';
import type { OrchestrationContext } from './steps.ts';

// Executor/reviewer model separation, the later profile's rule `modelSeparation` (agent-infra #783,
// its first policy shape: one model per role, and one model for both only with a reason). The
// policy is given to begin-or-resume and kept in the run; prepare requests the role's model; and,
// beyond upstream, baton checks it against evidence, the model the client itself reports: Codex's
// SubagentStart `model` (the receipt's actualModel) and Claude Code's spawning tool call
// (`tool_input.model`, at the spawn claim). Under agent-infra-0.9.2 none of this applies.

export type PolicyInput = Readonly<{ executorModel?: string; reviewerModel?: string; sameModelReason?: string }>;
export type Refusal = Readonly<{ code: ErrorCode; message: string }>;

function modelText(value: string | undefined): value is string {
  return typeof value === 'string' && value.length > 0 && value.trim() === value;
}

/** Whether begin-or-resume was given any part of a policy. */
export function policyGiven(input: PolicyInput): boolean {
  return input.executorModel !== undefined || input.reviewerModel !== undefined || input.sameModelReason !== undefined;
}

/** The policy as given, or upstream's code and message for what is wrong with it. */
export function validateModelPolicy(input: PolicyInput): Readonly<{ ok: true; policy: ModelPolicy }> | (Refusal & { ok: false }) {
  const { executorModel: executor, reviewerModel: reviewer } = input;
  if (!modelText(executor) || !modelText(reviewer)) {
    return { ok: false, code: 'ORCHESTRATION_MODEL_POLICY_REQUIRED', message: 'executor and reviewer model identities are required' };
  }
  const reason = input.sameModelReason ?? null;
  if (executor === reviewer) {
    if (!modelText(reason ?? undefined)) {
      return {
        ok: false,
        code: 'ORCHESTRATION_MODEL_SEPARATION_REQUIRED',
        message: 'using the same executor and reviewer model requires a reason',
      };
    }
  } else if (reason !== null) {
    return {
      ok: false,
      code: 'ORCHESTRATION_MODEL_POLICY_INVALID',
      message: 'same-model reason must be null when executor and reviewer models differ',
    };
  }
  return { ok: true, policy: { executor, reviewer, sameModelReason: reason } };
}

export function samePolicy(left: ModelPolicy, right: ModelPolicy): boolean {
  return left.executor === right.executor && left.reviewer === right.reviewer && left.sameModelReason === right.sameModelReason;
}

export const POLICY_MISMATCH: Refusal = {
  code: 'ORCHESTRATION_MODEL_POLICY_MISMATCH',
  message: 'provided model policy does not match the persisted run policy',
};

export type RunPolicy = Readonly<{ ok: true; policy: ModelPolicy | null }> | (Refusal & { ok: false });

/**
 * The run's recorded policy under the rules (none under 0.9.2, whatever the file holds). A shape
 * baton cannot honour, such as a later upstream's per-role `{ model, reasoningEffort }`, is an
 * error naming the field, never a silent pass.
 */
export function runPolicyOf(ctx: OrchestrationContext, run: OrchestrationRun): RunPolicy {
  const recorded = run.modelPolicy;
  if (!ctx.rules.modelSeparation || recorded === undefined) return { ok: true, policy: null };
  const field = unhonoured(recorded);
  if (field !== null) {
    return {
      ok: false,
      code: 'ORCHESTRATION_MODEL_POLICY_INVALID',
      message: `orchestration.json ${field}: profile ${ctx.rules.name} honours a policy of one model name per role (executor, reviewer, sameModelReason); this run's cannot be honoured`,
    };
  }
  return { ok: true, policy: recorded as ModelPolicy };
}

/** The first field of a recorded policy that is not the honoured shape, or null. */
function unhonoured(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'modelPolicy';
  const record = value as Record<string, unknown>;
  for (const role of ['executor', 'reviewer'] as const) {
    const model = record[role];
    if (typeof model === 'object' && model !== null) {
      const inner = Object.keys(model).find((key) => key !== 'model');
      return `modelPolicy.${role}${inner ? `.${inner}` : ''}`;
    }
    if (!modelText(model as string | undefined)) return `modelPolicy.${role}`;
  }
  const reason = record.sameModelReason;
  if (reason !== null && !modelText(reason as string | undefined)) return 'modelPolicy.sameModelReason';
  return null;
}

/** The model prepare requests for `role`: the policy's (null without one). */
export function policyModel(policy: ModelPolicy | null, role: DelegationRole): string | null {
  return policy ? policy[role] : null;
}

/** prepare --requested-model against the policy: upstream's refusal when it names another model. */
export function requestedModelRefusal(expected: string | null, requested: string | null | undefined, role: DelegationRole): Refusal | null {
  if (expected === null || requested === undefined || requested === null || requested === expected) return null;
  return { code: 'ORCHESTRATION_REQUESTED_MODEL_MISMATCH', message: `requested model does not match the persisted ${role} model` };
}

/** Where the model of a lifecycle agent of `client` is set (the agent profile baton init wrote). */
export function modelSetting(client: string, role: DelegationRole): string {
  const adapter = clientAdapter(client);
  const file = adapter ? adapter.install.agentFile(lifecycleAgentName(role)) : `the ${lifecycleAgentName(role)} profile of ${client}`;
  // The profile's own format says how its model is written: TOML (Codex's agents), else Markdown frontmatter.
  return file.endsWith('.toml') ? `model = "…" in ${file}` : `model: … in the frontmatter of ${file}`;
}

/**
 * The evidence check: a reviewer child on the executor's model (reported by its client) is refused
 * unless the policy allows one model for both. Says which setting to change.
 */
export function separationRefusal(
  ctx: OrchestrationContext,
  run: OrchestrationRun,
  receipt: DelegationReceipt,
  reportedModel: string | null | undefined,
  source: string,
): Refusal | null {
  const read = runPolicyOf(ctx, run);
  if (!read.ok) return read;
  const policy = read.policy;
  if (!policy || receipt.role !== 'reviewer' || !reportedModel) return null;
  if (policy.sameModelReason !== null || reportedModel !== policy.executor) return null;
  return {
    code: 'ORCHESTRATION_MODEL_SEPARATION_REQUIRED',
    message:
      `the reviewer of delegation ${receipt.id} runs on ${reportedModel} (${source}), the executor's model; the run's policy asks for ${policy.reviewer} for reviews. ` +
      `Set ${modelSetting(receipt.client, 'reviewer').replace('…', policy.reviewer)}, or begin the run with --same-model-reason to allow one model for both`,
  };
}

/**
 * A child refused at its start for its model (the run paused with ORCHESTRATION_MODEL_SEPARATION_REQUIRED,
 * its delegation never activated) may still hand its stage over: the pause stands and is the answer,
 * rather than being replaced by the receipt's state error, which would lose the setting to change.
 */
export function separationPauseStands(run: OrchestrationRun): Refusal | null {
  const pause = run.pause;
  if (run.status !== 'paused' || pause?.code !== 'ORCHESTRATION_MODEL_SEPARATION_REQUIRED') return null;
  if (run.pendingDelegation?.status !== 'prepared') return null;
  return { code: pause.code, message: pause.message };
}

/**
 * Route's next step under the later profile: with `requestedModel`, the model the run's policy asks
 * for the role (null without a policy), as upstream's `next` carries it, so the orchestrator knows
 * what to spawn on. Under agent-infra-0.9.2 the step is returned as it was, without the field.
 */
export function requestedModelOf(
  ctx: OrchestrationContext,
  run: OrchestrationRun | null,
  next: OrchestrationNext,
): Readonly<{ ok: true; next: OrchestrationNext }> | (Refusal & { ok: false }) {
  if (!ctx.rules.modelSeparation) return { ok: true, next };
  if (!run) return { ok: true, next: { ...next, requestedModel: null } };
  const read = runPolicyOf(ctx, run);
  if (!read.ok) return read;
  return { ok: true, next: { ...next, requestedModel: policyModel(read.policy, next.role) } };
}
