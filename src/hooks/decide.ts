import type { GoneTool, SpawnTool, UsageRecord } from '../clients/hook.ts';
import { CLIENT_ADAPTERS } from '../clients/registry.ts';
import type { ClientId } from '../clients/registry.ts';
import type { LifecycleEvent } from '../core/events.ts';
import { lifecycleAgentName, managedDelegationRole } from '../core/receipts.ts';
import type { DelegationRole } from '../core/types.ts';
import { randomId } from '../base/digest.ts';
import { eventIdForNative } from '../queue/eventIds.ts';
import { HOOK_MESSAGES, firstText, record, text, validateManagedPayload } from './payload.ts';
import type { HookPayload } from './payload.ts';

// What a native hook event means, decided from the payload alone (no files, no Redis): ignore it,
// refuse it, check a spawn, or the lifecycle event to enqueue with the parts that identify its
// delivery, from which the hook derives the event id once it knows the delegation the event targets
// (handle.ts) (docs/lifecycle.md §10.3 steps 3–6, plus PreToolUse: docs/hooks.md "Spawn claim (PreToolUse)").

const MANAGED_PREFIX = 'agent-infra-lifecycle-';

/**
 * The subagent-spawning tools of every registered client, by name (the first client naming one wins).
 * A hook recognises them whatever client it runs for (install-hooks' matchers only ever send a client
 * its own tools); a client's own tool of a shared name (Copilot CLI's `task`, Claude Code's old name)
 * is read as that client's (CLIENT_SPAWN_TOOLS).
 */
const SPAWN_TOOLS: ReadonlyMap<string, SpawnTool> = new Map(
  CLIENT_ADAPTERS.flatMap((client) => client.hook.spawnTools.map((tool) => [tool.name, tool] as const)).reverse(),
);
const CLIENT_SPAWN_TOOLS: ReadonlyMap<string, SpawnTool> = new Map(
  CLIENT_ADAPTERS.flatMap((client) => client.hook.spawnTools.map((tool) => [`${client.id}:${tool.name}`, tool] as const)),
);

function spawnTool(client: ClientId, name: string): SpawnTool | undefined {
  return CLIENT_SPAWN_TOOLS.get(`${client}:${name}`) ?? SPAWN_TOOLS.get(name);
}

/** The tools of each client that end a child without a stop (ClientHook.goneTools), by client and name. */
const GONE_TOOLS: ReadonlyMap<string, GoneTool> = new Map(
  CLIENT_ADAPTERS.flatMap((client) => (client.hook.goneTools ?? []).map((tool) => [`${client.id}:${tool.name}`, tool] as const)),
);

export type HookDecision =
  | { kind: 'ignore' }
  | { kind: 'error'; message: string }
  | { kind: 'spawn-refused'; reason: string }
  | { kind: 'spawn-check'; nativeAgent: string; toolCallId: string; model?: string }
  | EventDecision;

/** A lifecycle event to enqueue, with the fields of its payload that identify its delivery. */
export type EventDecision = {
  kind: 'event';
  event: LifecycleEvent;
  idParts: readonly (string | undefined)[];
  /** A headless session's event: the delegation it was started for (the pending one, or nothing to record). */
  headlessReceipt?: string;
};

/**
 * The id of a decided event (docs/hooks.md "Duplicates"): the fields that identify its delivery, and
 * the delegation it targets when there is one (`target`, the one pending receipt of the client): the
 * same native ids for a later delegation (a reused child id) are a new event, which neither BullMQ's
 * job ids nor the journal may take for a duplicate (the worker's journal checks the target again).
 */
export function nativeEventId(decision: EventDecision, target: string | null): string {
  return eventIdForNative(target ? [...decision.idParts, `receipt:${target}`] : decision.idParts);
}

/**
 * How a lifecycle spawn would start its child, from the spawning tool's input: null when fresh,
 * else a description of the fork (docs/hooks.md "Spawn claim (PreToolUse)"). `fork_context: true`
 * forks; `fork_turns` copies that many turns of the parent's conversation, so only `"none"` (or 0)
 * is fresh, and a tool whose adapter says so copies all of them when it is left out.
 */
export function spawnFork(toolName: string, input: Record<string, unknown>, tool = SPAWN_TOOLS.get(toolName)): string | null {
  const forkTurns = input.fork_turns;
  const freshTurns = forkTurns === 'none' || forkTurns === 0 || forkTurns === '0';
  if (tool?.forkTurnsDefaultToAll && (forkTurns === undefined || forkTurns === null)) {
    return 'fork_turns is not set, so the child would inherit the whole parent conversation';
  }
  if (forkTurns !== undefined && forkTurns !== null && !freshTurns)
    return `fork_turns is ${JSON.stringify(forkTurns)}, so the child would inherit parent turns`;
  if (input.fork_context === true) return 'fork_context is true, so the child would inherit the parent conversation';
  return null;
}

/**
 * The delegation a headless client session was started for (`baton task <ref> review`,
 * src/cli/headlessReview.ts): baton starts the reviewer client with BATON_HEADLESS_RECEIPT (and
 * BATON_HEADLESS_ROLE) in its environment, which its session-level hooks inherit. Without it a
 * session event is not baton's (docs/clients.md "A reviewer from another vendor").
 */
export type HeadlessSession = Readonly<{ receiptId: string; role: DelegationRole }>;

export type DecideOptions = { invocationId?: string; headless?: HeadlessSession | null };

/** The headless delegation named by a hook's environment, or null. */
export function headlessSessionOf(env: Readonly<Record<string, string | undefined>>): HeadlessSession | null {
  const receiptId = env.BATON_HEADLESS_RECEIPT;
  if (typeof receiptId !== 'string' || receiptId === '') return null;
  const role = env.BATON_HEADLESS_ROLE === 'executor' ? 'executor' : 'reviewer';
  return { receiptId, role };
}

const SESSION_START = new Set(['sessionstart', 'session-start', 'session_start']);
const SESSION_STOP = new Set(['stop', 'session-stop', 'session_stop', 'agentstop', 'agent-stop']);

/**
 * A session-level event (SessionStart, Stop) of a headless client baton started for a delegation:
 * the session is the delegation's child (its session id the child id, the delegation the parent),
 * so its start activates the receipt and its stop seals it, as SubagentStart/Stop do for a
 * subagent. Any other session's events are not baton's.
 */
function decideSession(client: ClientId, payload: HookPayload, phase: 'start' | 'stop', options: DecideOptions): HookDecision {
  const headless = options.headless;
  if (!headless) return { kind: 'ignore' };
  const childId = firstText(payload.session_id);
  if (!childId) return { kind: 'error', message: 'baton: a headless session event has no session_id' };
  const nativeAgent = lifecycleAgentName(headless.role);
  const idParts = [client, `session-${phase}`, childId, `headless:${headless.receiptId}`, turnIdentity(payload, options)];
  if (phase === 'stop') {
    return {
      kind: 'event',
      idParts,
      headlessReceipt: headless.receiptId,
      event: { intent: 'hook-stop', taskRef: 'auto', client, nativeAgent, childId },
    };
  }
  const event = startEvent(client, nativeAgent, childId, `baton-headless:${headless.receiptId}`, 'fresh', payload);
  return { kind: 'event', idParts, event, headlessReceipt: headless.receiptId };
}

/** The hook-start of a child, with the model (and fallback reason) its client reports. */
function startEvent(
  client: ClientId,
  nativeAgent: string,
  childId: string,
  parentId: string,
  spawnMode: string,
  payload: HookPayload,
): LifecycleEvent {
  const model = text(payload.model);
  const fallbackReason = text(payload.model_fallback_reason);
  return {
    intent: 'hook-start',
    taskRef: 'auto',
    client,
    nativeAgent,
    childId,
    parentId,
    spawnMode,
    ...(model ? { actualModel: model } : {}),
    ...(fallbackReason ? { fallbackReason } : {}),
  };
}

/** Pure mapping from a payload to what the hook should do (docs/lifecycle.md §10.3 steps 3–6, plus PreToolUse). */
export function decideHook(client: ClientId, payload: HookPayload, eventOption?: string, options: DecideOptions = {}): HookDecision {
  const kind = firstText(eventOption, payload.hook_event_name, payload.event).toLowerCase();
  if (kind === 'pretooluse' || kind === 'pre-tool' || kind === 'pre_tool_use') return decideSpawn(client, payload, options);
  if (kind === 'posttooluse' || kind === 'post-tool' || kind === 'post_tool_use') return decideGone(client, payload, options);
  if (SESSION_START.has(kind)) return decideSession(client, payload, 'start', options);
  if (SESSION_STOP.has(kind)) return decideSession(client, payload, 'stop', options);
  const nativeAgent = firstText(payload.agent_name, payload.agent_type, record(payload.agent).name);
  const role = managedDelegationRole(nativeAgent);
  // 0.9.x sent every `agent-infra-lifecycle-*` agent to the CLI, which answered DELEGATION_IGNORED.
  if (!role && !nativeAgent.startsWith(MANAGED_PREFIX)) return { kind: 'ignore' };
  const phase = kind.includes('start') ? 'start' : kind.includes('stop') ? 'stop' : null;
  if (!phase) return { kind: 'error', message: HOOK_MESSAGES.unknownType };
  const valid = validateManagedPayload(payload);
  if (!valid.ok) return { kind: 'error', message: valid.message };
  if (!role) return { kind: 'error', message: `baton: DELEGATION_IGNORED: subagent '${nativeAgent}' is not lifecycle-managed` };
  // Upstream's precedence (docs/hooks.md "Fields baton relies on").
  const childId = firstText(payload.child_id, payload.agent_id, payload.thread_id);
  // 0.9.2 passed an empty id on to the CLI, whose usage error (exit 2) kept a stopping Claude
  // subagent running; baton reports it as a plain error instead (docs/differences.md).
  if (!childId) return { kind: 'error', message: 'Managed lifecycle hook event has no child identity (agent_id)' };
  const idParts = [client, phase, text(payload.session_id), childId, nativeAgent, turnIdentity(payload, options)];
  if (phase === 'stop') {
    return {
      kind: 'event',
      idParts,
      event: { intent: 'hook-stop', taskRef: 'auto', client, nativeAgent, childId, ...usageRecordOf(client, payload) },
    };
  }
  const parentId = firstText(payload.parent_id, payload.parent_session_id, payload.session_id);
  if (!parentId) return { kind: 'error', message: 'Managed lifecycle hook event has no parent identity (session_id)' };
  // Neither client reports a spawn mode on SubagentStart; forks are refused at PreToolUse.
  const event: LifecycleEvent = {
    ...startEvent(client, nativeAgent, childId, parentId, firstText(payload.spawn_mode) || 'fresh', payload),
    ...goneUsageRecordOf(client, payload, childId),
  };
  return { kind: 'event', idParts, event };
}

/**
 * Why a lifecycle spawn with `isolation` is refused, and what to do instead. Claude Code 2.1.337 makes
 * the `"worktree"` one after PreToolUse, at `.claude/worktrees/agent-<agent_id>` on a new branch
 * `worktree-agent-<agent_id>` from HEAD, and runs the child there (SubagentStart/Stop and the
 * child's tool hooks carry that cwd): a checkout without the task (`.agents/workspace/` is not
 * committed) or this checkout's uncommitted work, whose changes stay on that branch, outside the
 * checkout the next stages run in. `"remote"` runs it on another machine.
 */
export function isolationRefusal(isolation: string, nativeAgent: string): string {
  const where =
    isolation === 'worktree'
      ? "Claude Code would run it in a new worktree made from HEAD (.claude/worktrees/agent-<id>), which has neither the task's .agents/workspace/ nor this checkout's uncommitted changes, and its changes would stay on that worktree's branch, outside the checkout the next stages run in"
      : `isolation '${isolation}' would run it outside this checkout, where baton cannot measure its changes`;
  return `baton: DELEGATION_ISOLATION_FORBIDDEN: ${nativeAgent} with isolation '${isolation}': ${where}. Spawn it without isolation; to run agents side by side, give each task its own worktree (baton new --worktree <branch>) and start the agent there.`;
}

const USAGE_RECORDS: ReadonlyMap<string, UsageRecord> = new Map(
  CLIENT_ADAPTERS.flatMap((client) => (client.hook.usageRecord ? [[client.id, client.hook.usageRecord] as const] : [])),
);

/**
 * Where the stop payload names the child's own record of its requests (ClientHook.usageRecord): only
 * its path goes into the event, the worker reads it (the hook stays fast). Not part of the event id.
 */
function usageRecordOf(client: ClientId, payload: HookPayload): { usageRecord?: string; usageFormat?: UsageRecord['format'] } {
  const spec = USAGE_RECORDS.get(client);
  const file = spec ? firstText(...spec.fields.map((field) => payload[field])) : '';
  return spec && file ? { usageRecord: file, usageFormat: spec.format } : {};
}

/** The record of a child its payload names only by its id (SubagentStart, a gone tool's PostToolUse: UsageRecord.ofChild). */
function goneUsageRecordOf(
  client: ClientId,
  payload: HookPayload,
  childId: string,
): { usageRecord?: string; usageFormat?: UsageRecord['format'] } {
  const spec = USAGE_RECORDS.get(client);
  const file = spec?.ofChild?.(payload, childId);
  return spec && file ? { usageRecord: file, usageFormat: spec.format } : {};
}

/** An id for this hook invocation, where the payload has nothing that tells invocations apart. */
function invocationIdentity(options: DecideOptions): string {
  return `invocation:${options.invocationId ?? randomId()}`;
}

/**
 * What tells one turn of a child from the next (docs/hooks.md "Multi-turn children"): Codex's
 * `turn_id`; Claude Code sends none (a resumed subagent repeats `agent_id` and `session_id`), so
 * each hook invocation is its own event there. Duplicates within baton (spool, redelivery) keep
 * the event id they were given; the engine makes a repeated start or stop harmless.
 */
function turnIdentity(payload: HookPayload, options: DecideOptions): string {
  const turn = text(payload.turn_id);
  if (turn) return `turn:${turn}`;
  return invocationIdentity(options);
}

function decideSpawn(client: ClientId, payload: HookPayload, options: DecideOptions): HookDecision {
  const toolName = firstText(payload.tool_name).toLowerCase();
  const tool = spawnTool(client, toolName);
  if (!tool) return { kind: 'ignore' };
  const input = record(payload.tool_input);
  const nativeAgent = firstText(input.subagent_type, input.agent_type, input.agent, input.name);
  if (!managedDelegationRole(nativeAgent)) return { kind: 'ignore' };
  const valid = validateManagedPayload(payload);
  if (!valid.ok) return { kind: 'error', message: valid.message };
  const fork = spawnFork(toolName, input, tool);
  if (fork) {
    return {
      kind: 'spawn-refused',
      reason: `baton: DELEGATION_FORK_FORBIDDEN: spawn mode 'fork' is not fresh: ${fork}. Spawn ${nativeAgent} fresh${tool.freshHint ?? ''}.`,
    };
  }
  // Claude Code's `isolation` (a worktree, a remote machine), refused whatever tool carries it
  // (docs/clients.md "Worktree isolation": what the real client does with it, observed).
  const isolation = text(input.isolation);
  if (isolation && isolation !== 'none') {
    return { kind: 'spawn-refused', reason: isolationRefusal(isolation, nativeAgent) };
  }
  // Claude Code's agent teams: a teammate is its own session, messaged and reused across tasks, not a
  // fresh subagent whose one stage baton measures (docs/clients.md "Agent teams").
  const teammate = (tool.teammateFields ?? []).flatMap((field) => {
    const value = text(input[field]);
    return value ? [`${field} '${value}'`] : [];
  });
  if (teammate.length > 0) {
    return {
      kind: 'spawn-refused',
      reason: `baton: DELEGATION_TEAMMATE_FORBIDDEN: ${teammate.join(' and ')} would make ${nativeAgent} an agent-team teammate (or a named agent others message), not a fresh subagent whose stage baton can measure. Spawn it as a subagent: the ${payload.tool_name} tool with subagent_type '${nativeAgent}', without team_name or name.`,
    };
  }
  const toolCallId = firstText(payload.tool_use_id, payload.call_id, payload.tool_call_id) || invocationIdentity(options);
  // The model the spawning call asks for (Claude Code's `tool_input.model`): evidence for the later
  // profile's model separation (src/core/orchestration/modelPolicy.ts).
  const model = text(input.model);
  return { kind: 'spawn-check', nativeAgent, toolCallId, ...(model ? { model } : {}) };
}

/**
 * PostToolUse of a tool that ends a child without a stop (docs/architecture.md "Reconciliation"):
 * the client's evidence that the child is gone. Which child comes from the tool's response (what was
 * stopped), else its input; the engine acts only if a pending delegation of this client has it.
 */
function decideGone(client: ClientId, payload: HookPayload, options: DecideOptions): HookDecision {
  const toolName = firstText(payload.tool_name);
  const tool = GONE_TOOLS.get(`${client}:${toolName.toLowerCase()}`);
  if (!tool) return { kind: 'ignore' };
  const response = record(payload.tool_response);
  const input = record(payload.tool_input);
  const childId = firstText(...tool.childIdFields.map((field) => response[field]), ...tool.childIdFields.map((field) => input[field]));
  if (!childId) return { kind: 'ignore' };
  const callId = firstText(payload.tool_use_id, payload.call_id, payload.tool_call_id) || invocationIdentity(options);
  return {
    kind: 'event',
    idParts: [client, 'gone', text(payload.session_id), childId, callId],
    event: { intent: 'child-gone', taskRef: 'auto', client, childId, evidence: toolName, ...goneUsageRecordOf(client, payload, childId) },
  };
}
