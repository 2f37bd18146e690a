// Delegation receipts (docs/lifecycle.md §6): the evidence trail of one delegated stage,
// prepared → activated → stage-completed → sealed → consumed (or aborted, a baton addition).
// Every function is pure: it returns a new frozen receipt or a coded failure, and takes time from options.
import type { UsageRecordRef } from './stageCost.ts';
import type { ErrorCode } from './errorCodes.ts';
import { stageAgentNames } from './clients.ts';
import { ACTIVE_TASKS_PATH, RUN_FILE_NAME, TASK_FILE_NAME } from './taskLayout.ts';
import type { DelegationReceipt, DelegationRole, ReceiptOutcome, ReceiptStatus } from './types.ts';

const MANAGED_AGENTS: Readonly<Record<string, DelegationRole>> = Object.freeze({
  'agent-infra-lifecycle-executor': 'executor',
  'agent-infra-lifecycle-reviewer': 'reviewer',
});

/** The role of a lifecycle-managed native subagent type, or null for any other subagent. */
export function managedDelegationRole(nativeAgent: string | null | undefined): DelegationRole | null {
  if (typeof nativeAgent !== 'string' || !Object.hasOwn(MANAGED_AGENTS, nativeAgent)) return null;
  return MANAGED_AGENTS[nativeAgent] ?? null;
}

/** The native subagent type that runs a role's delegations (what the orchestrator spawns). */
export function lifecycleAgentName(role: DelegationRole): string {
  return Object.keys(MANAGED_AGENTS).find((agent) => MANAGED_AGENTS[agent] === role) ?? `agent-infra-lifecycle-${role}`;
}

/** What a new receipt starts from: its input fields, the rest is evidence added by later transitions. */
export type PrepareDelegationInput = Pick<
  DelegationReceipt,
  'taskId' | 'runId' | 'role' | 'stage' | 'round' | 'artifact' | 'client' | 'requestedModel' | 'beforeFingerprint'
>;

export type ActivationEvent = {
  nativeAgent: string;
  childId: string;
  parentId: string;
  spawnMode: string;
  actualModel?: string | null;
  modelFallbackReason?: string | null;
  /** baton: where the child's client records its requests, from SubagentStart (a seal without a stop reads it). */
  usageRecord?: UsageRecordRef;
};

export type StageCompletionEvent = { stage: string; round: number; artifact: string; agent: string };

export type StopEvent = { childId: string; exitCode: number; afterFingerprint: string; changedPaths: readonly string[] };

type Clock = { now: () => string };

function fail(code: ErrorCode, message: string): ReceiptOutcome {
  return Object.freeze({ ok: false, code, message });
}

function stateInvalid(receipt: DelegationReceipt, expected: string): ReceiptOutcome {
  return fail('DELEGATION_STATE_INVALID', `delegation ${receipt.id} is ${receipt.status}, expected ${expected}`);
}

/** A new frozen receipt with its keys in agent-infra's order (input fields first, then evidence). */
function freezeReceipt(fields: DelegationReceipt): DelegationReceipt {
  return Object.freeze({
    taskId: fields.taskId,
    runId: fields.runId,
    role: fields.role,
    stage: fields.stage,
    round: fields.round,
    artifact: fields.artifact,
    client: fields.client,
    requestedModel: fields.requestedModel,
    beforeFingerprint: fields.beforeFingerprint,
    id: fields.id,
    actualModel: fields.actualModel,
    modelFallbackReason: fields.modelFallbackReason,
    parentId: fields.parentId,
    childId: fields.childId,
    spawnMode: fields.spawnMode,
    agent: fields.agent,
    status: fields.status,
    afterFingerprint: fields.afterFingerprint,
    changedPaths: Object.freeze([...fields.changedPaths]),
    createdAt: fields.createdAt,
    activatedAt: fields.activatedAt,
    sealedAt: fields.sealedAt,
    consumedAt: fields.consumedAt,
    ...(fields.spawnClaim
      ? { spawnClaim: Object.freeze({ toolCallId: fields.spawnClaim.toolCallId, claimedAt: fields.spawnClaim.claimedAt }) }
      : {}),
  });
}

/**
 * A transition's result: the receipt it was given with the changed fields, as upstream's spread gives
 * it. Keys keep the order they had (in the file), and keys this version does not know are kept, so a
 * run file written by a newer agent-infra survives being rewritten.
 */
function succeed(receipt: DelegationReceipt): ReceiptOutcome {
  return Object.freeze({ ok: true, receipt: Object.freeze({ ...receipt, changedPaths: Object.freeze([...receipt.changedPaths]) }) });
}

/** A new `prepared` receipt. No validation: the orchestrator routed the input. */
export function prepareDelegation(input: PrepareDelegationInput, options: { id: () => string; now: () => string }): DelegationReceipt {
  return freezeReceipt({
    taskId: input.taskId,
    runId: input.runId,
    role: input.role,
    stage: input.stage,
    round: input.round,
    artifact: input.artifact,
    client: input.client,
    requestedModel: input.requestedModel,
    beforeFingerprint: input.beforeFingerprint,
    id: options.id(),
    actualModel: null,
    modelFallbackReason: null,
    parentId: null,
    childId: null,
    spawnMode: null,
    agent: null,
    status: 'prepared',
    afterFingerprint: null,
    changedPaths: [],
    createdAt: options.now(),
    activatedAt: null,
    sealedAt: null,
    consumedAt: null,
  });
}

/** Empty strings carry no evidence: they are recorded as null. */
function evidence(value: string | null | undefined): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * baton addition (PreToolUse spawn claim): the one tool call allowed to spawn the child of a prepared
 * delegation. The same tool call claiming again is idempotent (`changed: false`); another is refused.
 */
export function claimDelegationSpawn(
  receipt: DelegationReceipt,
  event: { nativeAgent: string; toolCallId: string },
  options: Clock,
): ReceiptOutcome | Readonly<{ ok: true; receipt: DelegationReceipt; unchanged: true }> {
  const role = managedDelegationRole(event.nativeAgent);
  if (!role) return fail('DELEGATION_IGNORED', `subagent '${event.nativeAgent}' is not lifecycle-managed`);
  if (receipt.status !== 'prepared') return stateInvalid(receipt, 'prepared');
  if (role !== receipt.role) return fail('DELEGATION_ROLE_MISMATCH', `managed role ${role} does not match ${receipt.role}`);
  if (receipt.spawnClaim) {
    if (receipt.spawnClaim.toolCallId === event.toolCallId) return Object.freeze({ ok: true, receipt, unchanged: true } as const);
    return fail(
      'DELEGATION_SPAWN_CLAIMED',
      `delegation ${receipt.id} was already claimed by tool call ${receipt.spawnClaim.toolCallId} at ${receipt.spawnClaim.claimedAt}; one prepared delegation starts one subagent`,
    );
  }
  return succeed({ ...receipt, spawnClaim: { toolCallId: event.toolCallId, claimedAt: options.now() } });
}

/**
 * baton addition: the claim of a spawn its hook blocked after all (docs/hooks.md "Spawn claim
 * (PreToolUse)") is dropped, so the prepared delegation can be claimed again. Only that tool call's
 * claim, and only while nothing has started.
 */
export function releaseDelegationSpawn(receipt: DelegationReceipt, event: { toolCallId: string }): ReceiptOutcome {
  if (receipt.status !== 'prepared') return stateInvalid(receipt, 'prepared');
  if (receipt.spawnClaim?.toolCallId !== event.toolCallId) {
    return fail(
      'ORCHESTRATION_DELEGATION_MISSING',
      `delegation ${receipt.id} is not claimed by tool call ${event.toolCallId}; nothing to release`,
    );
  }
  const { spawnClaim: _released, ...unclaimed } = receipt;
  return succeed(unclaimed);
}

/** Native SubagentStart: bind the fresh child to the prepared receipt (checks in §6.2 order). */
export function activateDelegation(receipt: DelegationReceipt, event: ActivationEvent, options: Clock): ReceiptOutcome {
  const role = managedDelegationRole(event.nativeAgent);
  if (!role) return fail('DELEGATION_IGNORED', `subagent '${event.nativeAgent}' is not lifecycle-managed`);
  if (receipt.status !== 'prepared') return stateInvalid(receipt, 'prepared');
  if (role !== receipt.role) return fail('DELEGATION_ROLE_MISMATCH', `managed role ${role} does not match ${receipt.role}`);
  if (
    !event.parentId ||
    (receipt.parentId !== null && event.parentId !== receipt.parentId) ||
    !event.childId ||
    event.childId === event.parentId
  ) {
    return fail('DELEGATION_IDENTITY_INVALID', 'native parent/child identity does not match the prepared delegation');
  }
  if (event.spawnMode !== 'fresh') return fail('DELEGATION_FORK_FORBIDDEN', `spawn mode '${event.spawnMode}' is not fresh`);
  const actualModel = evidence(event.actualModel);
  const fallbackReason = evidence(event.modelFallbackReason);
  // A missing actual model is tolerated (hosts like Claude Code do not report it); a silent switch is not.
  if (actualModel !== null && receipt.requestedModel && actualModel !== receipt.requestedModel && fallbackReason === null) {
    return fail('DELEGATION_MODEL_FALLBACK_UNRECORDED', 'actual model differs from requested model without a fallback reason');
  }
  return succeed({
    ...receipt,
    status: 'activated',
    parentId: event.parentId,
    childId: event.childId,
    spawnMode: event.spawnMode,
    actualModel,
    modelFallbackReason: fallbackReason,
    activatedAt: options.now(),
    ...(event.usageRecord ? { usageRecord: event.usageRecord } : {}),
  });
}

/** The stage skill reports its artifact: it must be the delegated one, written by the delegated client. */
export function completeDelegationStage(receipt: DelegationReceipt, event: StageCompletionEvent, options: Clock): ReceiptOutcome {
  if (receipt.status !== 'activated') return stateInvalid(receipt, 'activated');
  if (event.stage !== receipt.stage || event.round !== receipt.round || event.artifact !== receipt.artifact) {
    // Upstream's message, then (baton) the values that differ, so a typo is found without reading the run file.
    const identity = (of: Pick<StageCompletionEvent, 'stage' | 'round' | 'artifact'>) =>
      `--stage ${of.stage} --round ${of.round} --artifact ${of.artifact}`;
    return fail(
      'DELEGATION_STAGE_MISMATCH',
      `stage completion identity does not match the active delegation (expected ${identity(receipt)}; given ${identity(event)})`,
    );
  }
  if (!stageAgentNames(receipt.client).includes(event.agent)) {
    return fail('DELEGATION_AGENT_MISMATCH', `stage agent '${event.agent}' does not match client '${receipt.client}'`);
  }
  // baton: the time starts the stop grace (docs/architecture.md "Reconciliation").
  return succeed({ ...receipt, status: 'stage-completed', agent: event.agent, stageCompletedAt: options.now() });
}

/** Repo-relative paths a reviewer may change: its own review artifact and core-written task metadata. */
export function reviewerAllowedPaths(receipt: Pick<DelegationReceipt, 'taskId' | 'artifact'>): readonly string[] {
  const taskRoot = `${ACTIVE_TASKS_PATH}/${receipt.taskId}/`;
  return [`${taskRoot}${receipt.artifact}`, `${taskRoot}${TASK_FILE_NAME}`, `${taskRoot}${RUN_FILE_NAME}`];
}

/** Native SubagentStop: the same child ended cleanly; reviewers may only have written their allow-list. */
export function sealDelegation(receipt: DelegationReceipt, event: StopEvent, options: Clock): ReceiptOutcome {
  if (receipt.status !== 'stage-completed') return stateInvalid(receipt, 'stage-completed');
  if (event.childId !== receipt.childId || event.exitCode !== 0) {
    return fail('DELEGATION_STOP_INVALID', 'native stop identity or exit status is invalid');
  }
  const forbidden = firstForbiddenReviewerPath(receipt, event.changedPaths);
  if (forbidden !== undefined) return fail('DELEGATION_REVIEWER_WRITE_FORBIDDEN', `reviewer changed forbidden path '${forbidden}'`);
  return succeed({
    ...receipt,
    status: 'sealed',
    afterFingerprint: event.afterFingerprint,
    changedPaths: [...event.changedPaths],
    sealedAt: options.now(),
  });
}

/**
 * baton addition (multi-turn children, docs/hooks.md): a later turn of a sealed child. Its changes
 * since the seal are measured: a reviewer may still only have written its allow-list (0.9.2's
 * write restriction, same code and message); anything else extends the receipt's changed paths.
 */
export function extendSealedDelegation(
  receipt: DelegationReceipt,
  event: { childId: string; afterFingerprint: string; changedPaths: readonly string[] },
): ReceiptOutcome {
  if (receipt.status !== 'sealed') return stateInvalid(receipt, 'sealed');
  if (event.childId !== receipt.childId) return fail('DELEGATION_STOP_INVALID', 'native stop identity or exit status is invalid');
  const forbidden = firstForbiddenReviewerPath(receipt, event.changedPaths);
  if (forbidden !== undefined) return fail('DELEGATION_REVIEWER_WRITE_FORBIDDEN', `reviewer changed forbidden path '${forbidden}'`);
  return succeed({ ...receipt, afterFingerprint: event.afterFingerprint, changedPaths: [...event.changedPaths] });
}

/** The paths a reviewer was not allowed to change, in order (none for executors). */
export function forbiddenReviewerPaths(receipt: DelegationReceipt, changedPaths: readonly string[]): string[] {
  if (receipt.role !== 'reviewer') return [];
  const allowed = new Set(reviewerAllowedPaths(receipt));
  return changedPaths.filter((changed) => !allowed.has(changed));
}

/** The first path a reviewer was not allowed to change, or undefined (always undefined for executors). */
export function firstForbiddenReviewerPath(receipt: DelegationReceipt, changedPaths: readonly string[]): string | undefined {
  return forbiddenReviewerPaths(receipt, changedPaths)[0];
}

/** The orchestrator accepts the sealed result; a receipt is consumed once. */
export function consumeDelegation(receipt: DelegationReceipt, options: Clock): ReceiptOutcome {
  if (receipt.status === 'consumed') return fail('DELEGATION_REPLAY', `delegation ${receipt.id} was already consumed`);
  if (receipt.status !== 'sealed') return stateInvalid(receipt, 'sealed');
  return succeed({ ...receipt, status: 'consumed', consumedAt: options.now() });
}

const ABORTABLE: ReadonlySet<ReceiptStatus> = new Set<ReceiptStatus>(['prepared', 'activated', 'stage-completed', 'sealed']);

/**
 * baton addition (docs/architecture.md, decision 6): give up an unconsumed delegation so its run can resume.
 * Records no new fields; `options` is accepted for symmetry with the other transitions.
 */
export function abortDelegation(receipt: DelegationReceipt, options: Clock): ReceiptOutcome {
  void options;
  if (receipt.status === 'consumed') return fail('DELEGATION_REPLAY', `delegation ${receipt.id} was already consumed`);
  if (!ABORTABLE.has(receipt.status)) return stateInvalid(receipt, 'prepared, activated, stage-completed or sealed');
  return succeed({ ...receipt, status: 'aborted' });
}
