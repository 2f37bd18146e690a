import fs from 'node:fs';
import * as z from 'zod/mini';
import { repositoryOf } from '../core/repoRoot.ts';
import { managedDelegationRole } from '../core/receipts.ts';
import { isLifecycleClientId, type LifecycleClientId } from '../core/clients.ts';
import { CLIENT_ADAPTERS, CLIENT_IDS } from '../clients/registry.ts';
import type { SpawnTool } from '../clients/adapter.ts';
import { activeTaskDirs, runFilePath } from '../core/taskLayout.ts';
import type { LifecycleEvent } from '../core/events.ts';
// The fast path loads only zod/mini (for a managed payload) and no Redis client until it has an
// event to deliver.
import { envelopeFor, eventIdForNative, repoIdentity } from '../queue/eventIds.ts';
import type { JobEnvelope } from '../queue/envelope.ts';
import { queueConfigFrom } from '../queue/endpoint.ts';
import { DEFAULT_PREFIX } from '../queue/keys.ts';
import { withDeadline } from '../queue/deadline.ts';
import type { HookQueue } from '../queue/hookTransport.ts';
import type { JobOutcome } from '../queue/outcome.ts';

// `baton hook <claude-code|codex> [--event NAME]`: the command a native hook runs. It reads the
// client's JSON payload on stdin, turns SubagentStart/SubagentStop of a lifecycle agent into a
// hook-start/hook-stop event (docs/lifecycle.md §10.3) and adds it to the repository's queue, without
// waiting for the worker. PreToolUse on the subagent-spawning tool claims the prepared delegation
// for that tool call through the worker and blocks the spawn (exit 2) when the claim is refused.
// It never hangs the agent: with Redis down the event is spooled locally; with no worker it stays
// queued; in both cases the hook says so on stderr.
//
// Output contract (docs/hooks.md): Codex parses a non-empty stdout on exit 0 as its hook-output
// object and marks the hook failed when it is anything else, so stdout is empty, or, when the user
// should know something (event spooled or queued with no worker, a linked worktree), exactly
// `{"systemMessage": "baton: …"}`, a field both clients accept for every event and show to the
// user; the same text goes to stderr. Exit 0: recorded, queued or spooled; exit 1: invalid input or
// an event baton refuses (a non-blocking error in both clients); exit 2 only on PreToolUse, with
// the reason on stderr (both clients block the tool call and show the reason to the model). Never 2
// on SubagentStart/Stop: Claude Code would keep a stopping subagent running. The orchestration
// result stays in the job (dashboard, `baton runs`); BATON_HOOK_VERBOSE=1 waits for it and prints
// it on stderr.

export const HOOK_INPUT_LIMIT = 64 * 1024;
export const DEFAULT_HOOK_BUDGET_MS = 4_000;

const MESSAGES = {
  client: 'Lifecycle delegation hook requires a supported --client value',
  tooLarge: 'Lifecycle delegation hook input exceeds 64 KiB',
  invalidJson: 'Lifecycle delegation hook received invalid JSON',
  notObject: 'Lifecycle delegation hook payload is not a hook event object',
  unknownType: 'Managed lifecycle hook event has an unknown type',
} as const;

const MANAGED_PREFIX = 'agent-infra-lifecycle-';

// The payload of a managed event is validated with zod's small build (zod/mini, ~5 ms to load)
// rather than the full one (~30 ms): the hook starts for every agent event and must stay near the
// bare runtime start-up (bench/results/hook.md). test/fuzz/hook.test.ts checks it against the full
// zod schema. Payloads of agents baton does not manage are never validated: they exit 0 silently
// whatever their fields hold, as upstream does (docs/hooks.md "Fields baton relies on").
const optionalText = z.nullish(z.string());
const payloadSchema = z.looseObject({
  hook_event_name: optionalText,
  event: optionalText,
  session_id: optionalText,
  parent_id: optionalText,
  parent_session_id: optionalText,
  agent_id: optionalText,
  child_id: optionalText,
  thread_id: optionalText,
  agent_name: optionalText,
  agent_type: optionalText,
  agent: z.nullish(z.looseObject({ name: optionalText })),
  spawn_mode: optionalText,
  model: optionalText,
  model_fallback_reason: optionalText,
  turn_id: optionalText,
  cwd: optionalText,
  tool_name: optionalText,
  tool_use_id: optionalText,
  call_id: optionalText,
  tool_input: z.nullish(z.looseObject({ subagent_type: optionalText, agent_type: optionalText, agent: optionalText, name: optionalText })),
});
export type HookPayload = Readonly<Record<string, unknown>>;

function received(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'number' && Number.isNaN(value) ? 'NaN' : typeof value;
}

/** The first problem as `(path: message)`, worded as full zod words it; '' for a non-object payload. */
function describeProblem(value: unknown, issues: readonly z.core.$ZodIssue[]): string {
  const issue = issues[0];
  if (!issue || issue.path.length === 0) return '';
  const actual = issue.path.reduce<unknown>((at, key) => (at as Record<PropertyKey, unknown> | undefined)?.[key as PropertyKey], value);
  const detail = issue.code === 'invalid_type' ? `Invalid input: expected ${issue.expected}, received ${received(actual)}` : issue.message;
  return ` (${issue.path.join('.')}: ${detail})`;
}

/** Strict check of the fields baton reads, for an event known to be managed. */
export function validateManagedPayload(value: unknown): { ok: true } | { ok: false; message: string } {
  const parsed = payloadSchema.safeParse(value);
  if (parsed.success) return { ok: true };
  return { ok: false, message: `${MESSAGES.notObject}${describeProblem(value, parsed.error.issues)}` };
}

export type HookClient = LifecycleClientId;

export type HookRun = { exitCode: number; stdout: string; stderr: string };

/**
 * The subagent-spawning tools of every registered client, by name. A hook recognises them whatever
 * client it runs for (install-hooks' matchers only ever send a client its own tools).
 */
const SPAWN_TOOLS: ReadonlyMap<string, SpawnTool> = new Map(CLIENT_ADAPTERS.flatMap((client) => client.hooks.spawnTools.map((tool) => [tool.name, tool] as const)));

/** A field read without validation: its value when it is a string, else undefined. */
function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function firstText(...values: unknown[]): string {
  return values.find((value): value is string => typeof value === 'string' && value.length > 0) ?? '';
}

export type HookDecision =
  | { kind: 'ignore' }
  | { kind: 'error'; message: string }
  | { kind: 'spawn-refused'; reason: string }
  | { kind: 'spawn-check'; nativeAgent: string; toolCallId: string }
  | { kind: 'event'; event: LifecycleEvent; eventId: string; idParts: readonly (string | undefined)[] };

/**
 * How a lifecycle spawn would start its child, from the spawning tool's input: null when fresh,
 * else a description of the fork (docs/hooks.md "Spawn claim (PreToolUse)"). `fork_context: true`
 * forks; `fork_turns` copies that many turns of the parent's conversation, so only `"none"` (or 0)
 * is fresh, and a tool whose adapter says so copies all of them when it is left out.
 */
export function spawnFork(toolName: string, input: Record<string, unknown>): string | null {
  const forkTurns = input.fork_turns;
  const freshTurns = forkTurns === 'none' || forkTurns === 0 || forkTurns === '0';
  if (SPAWN_TOOLS.get(toolName)?.forkTurnsDefaultToAll && (forkTurns === undefined || forkTurns === null)) {
    return 'fork_turns is not set, so the child would inherit the whole parent conversation';
  }
  if (forkTurns !== undefined && forkTurns !== null && !freshTurns) return `fork_turns is ${JSON.stringify(forkTurns)}, so the child would inherit parent turns`;
  if (input.fork_context === true) return 'fork_context is true, so the child would inherit the parent conversation';
  return null;
}

export type DecideOptions = { invocationId?: string };

/** Pure mapping from a payload to what the hook should do (docs/lifecycle.md §10.3 steps 3–6, plus PreToolUse). */
export function decideHook(client: HookClient, payload: HookPayload, eventOption?: string, options: DecideOptions = {}): HookDecision {
  const kind = firstText(eventOption, payload.hook_event_name, payload.event).toLowerCase();
  if (kind === 'pretooluse' || kind === 'pre-tool' || kind === 'pre_tool_use') return decideSpawn(client, payload, options);
  const nativeAgent = firstText(payload.agent_name, payload.agent_type, record(payload.agent).name);
  const role = managedDelegationRole(nativeAgent);
  // 0.9.x sent every `agent-infra-lifecycle-*` agent to the CLI, which answered DELEGATION_IGNORED.
  if (!role && !nativeAgent.startsWith(MANAGED_PREFIX)) return { kind: 'ignore' };
  const phase = kind.includes('start') ? 'start' : kind.includes('stop') ? 'stop' : null;
  if (!phase) return { kind: 'error', message: MESSAGES.unknownType };
  const valid = validateManagedPayload(payload);
  if (!valid.ok) return { kind: 'error', message: valid.message };
  if (!role) return { kind: 'error', message: `baton: DELEGATION_IGNORED: subagent '${nativeAgent}' is not lifecycle-managed` };
  // Upstream's precedence (docs/hooks.md "Fields baton relies on").
  const childId = firstText(payload.child_id, payload.agent_id, payload.thread_id);
  // 0.9.2 passed an empty id on to the CLI, whose usage error (exit 2) kept a stopping Claude
  // subagent running; baton reports it as a plain error instead (docs/differences.md).
  if (!childId) return { kind: 'error', message: 'Managed lifecycle hook event has no child identity (agent_id)' };
  const idParts = [client, phase, text(payload.session_id), childId, nativeAgent, turnIdentity(payload, options)];
  const eventId = eventIdForNative(idParts);
  if (phase === 'stop') {
    return { kind: 'event', eventId, idParts, event: { intent: 'hook-stop', taskRef: 'auto', client, nativeAgent, childId } };
  }
  const parentId = firstText(payload.parent_id, payload.parent_session_id, payload.session_id);
  if (!parentId) return { kind: 'error', message: 'Managed lifecycle hook event has no parent identity (session_id)' };
  const model = text(payload.model);
  const fallbackReason = text(payload.model_fallback_reason);
  const event: LifecycleEvent = {
    intent: 'hook-start',
    taskRef: 'auto',
    client,
    nativeAgent,
    childId,
    parentId,
    // Neither client reports a spawn mode on SubagentStart; forks are refused at PreToolUse.
    spawnMode: firstText(payload.spawn_mode) || 'fresh',
    ...(model ? { actualModel: model } : {}),
    ...(fallbackReason ? { fallbackReason } : {}),
  };
  return { kind: 'event', eventId, idParts, event };
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
  return `invocation:${options.invocationId ?? globalThis.crypto.randomUUID()}`;
}

function decideSpawn(client: HookClient, payload: HookPayload, options: DecideOptions): HookDecision {
  const toolName = firstText(payload.tool_name).toLowerCase();
  const tool = SPAWN_TOOLS.get(toolName);
  if (!tool) return { kind: 'ignore' };
  const input = record(payload.tool_input);
  const nativeAgent = firstText(input.subagent_type, input.agent_type, input.agent, input.name);
  if (!managedDelegationRole(nativeAgent)) return { kind: 'ignore' };
  const valid = validateManagedPayload(payload);
  if (!valid.ok) return { kind: 'error', message: valid.message };
  const fork = spawnFork(toolName, input);
  if (fork) {
    return {
      kind: 'spawn-refused',
      reason: `baton: DELEGATION_FORK_FORBIDDEN: spawn mode 'fork' is not fresh: ${fork}. Spawn ${nativeAgent} fresh${tool.freshHint ?? ''}.`,
    };
  }
  const isolation = text(input.isolation);
  if (isolation && isolation !== 'none') {
    return {
      kind: 'spawn-refused',
      reason: `baton: DELEGATION_ISOLATION_FORBIDDEN: isolation '${isolation}' would run ${nativeAgent} outside this repository's workspace, where baton cannot measure its changes. Spawn it without isolation.`,
    };
  }
  const toolCallId = firstText(payload.tool_use_id, payload.call_id, payload.tool_call_id) || `invocation:${options.invocationId ?? globalThis.crypto.randomUUID()}`;
  return { kind: 'spawn-check', nativeAgent, toolCallId };
}

export function parseHookInput(raw: Buffer): { ok: true; payload: HookPayload } | { ok: false; message: string } {
  if (raw.length > HOOK_INPUT_LIMIT) return { ok: false, message: MESSAGES.tooLarge };
  const input = raw.toString('utf8');
  let value: unknown;
  try {
    value = input.trim() === '' ? {} : JSON.parse(input);
  } catch {
    return { ok: false, message: MESSAGES.invalidJson };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, message: MESSAGES.notObject };
  return { ok: true, payload: value as HookPayload };
}

async function readStdin(limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Blocking reads of fd 0 first: iterating process.stdin costs a fresh process 5 ms (Node) to
  // 13 ms (Bun) before the first byte, a read(2) a fraction of one (bench/results/hook.md).
  const buffer = Buffer.alloc(16 * 1024);
  for (;;) {
    let count: number;
    try {
      count = fs.readSync(0, buffer, 0, buffer.length, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EOF') return Buffer.concat(chunks);
      if (code === 'EAGAIN') break; // a non-blocking stdin: read the rest as a stream
      throw error;
    }
    if (count === 0) return Buffer.concat(chunks);
    chunks.push(Buffer.from(buffer.subarray(0, count)));
    size += count;
    if (size > limit) return Buffer.concat(chunks); // enough to know it is too large
  }
  for await (const chunk of process.stdin) {
    const data = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    chunks.push(data);
    size += data.length;
    if (size > limit) break; // enough to know it is too large
  }
  return Buffer.concat(chunks);
}

type HookArgs = { client: string | undefined; event?: string; repo?: string; redis?: string; budgetMs: number };

function parseHookArgs(argv: readonly string[]): HookArgs | { help: true } | { error: string } {
  const args: HookArgs = { client: undefined, budgetMs: Number(process.env.BATON_HOOK_BUDGET_MS) || DEFAULT_HOOK_BUDGET_MS };
  for (let index = 0; index < argv.length; index += 1) {
    const token = argv[index]!;
    if (token === '--help' || token === '-h') return { help: true };
    const value = argv[index + 1];
    const takeValue = () => {
      index += 1;
      return value;
    };
    if (token === '--event') args.event = takeValue();
    else if (token === '--client') args.client = takeValue();
    else if (token === '--repo') args.repo = takeValue();
    else if (token === '--redis') args.redis = takeValue();
    else if (token === '--budget') args.budgetMs = Number(takeValue());
    else if (!token.startsWith('--') && args.client === undefined) args.client = token;
    else return { error: `unknown argument '${token}'` };
  }
  if (!Number.isFinite(args.budgetMs) || args.budgetMs <= 0) return { error: '--budget must be a positive number of milliseconds' };
  return args;
}

const HOOK_USAGE = `usage: baton hook <${CLIENT_IDS.join('|')}> [--event NAME] [--repo DIR] [--redis URL] [--budget MS]

Reads a native hook payload on stdin. SubagentStart/SubagentStop of agent-infra-lifecycle-executor
or -reviewer become hook-start/hook-stop events on the repository queue (stdout stays empty);
PreToolUse of the spawning tool claims the prepared delegation for that tool call and blocks
(exit 2, reason on stderr) a lifecycle spawn that cannot have it. Other agents: exit 0, silent.
BATON_HOOK_VERBOSE=1 waits for the worker and prints the orchestration result on stderr.
`;

/**
 * The id of the one pending delegation of `client` in the repository, read without validation (the
 * hook's fast path loads no schema library); null when there is none or several. Only an input to
 * the event id: the worker validates everything it applies.
 */
export function pendingReceiptOf(root: string, client: string): string | null {
  const found: string[] = [];
  for (const { dir } of activeTaskDirs(root)) {
    try {
      const pending = record(record(JSON.parse(fs.readFileSync(runFilePath(dir), 'utf8'))).pendingDelegation);
      if (pending.client === client && typeof pending.id === 'string') found.push(pending.id);
    } catch {
      // No run, or not readable: the worker reports it.
    }
  }
  return found.length === 1 ? found[0]! : null;
}

function verbose(): boolean {
  return process.env.BATON_HOOK_VERBOSE === '1';
}

export async function run(argv: string[]): Promise<number> {
  const args = parseHookArgs(argv);
  if ('help' in args) {
    process.stdout.write(HOOK_USAGE);
    return 0;
  }
  if ('error' in args) {
    process.stderr.write(`${args.error}\n${HOOK_USAGE}`);
    return 1;
  }
  if (!isLifecycleClientId(args.client)) {
    process.stderr.write(`${MESSAGES.client}\n`);
    return 1;
  }
  const input = parseHookInput(await readStdin(HOOK_INPUT_LIMIT));
  if (!input.ok) {
    process.stderr.write(`${input.message}\n`);
    return 1;
  }
  const decision = decideHook(args.client, input.payload, args.event);
  if (decision.kind === 'ignore') return 0;
  if (decision.kind === 'error') {
    process.stderr.write(`${decision.message}\n`);
    return 1;
  }
  if (decision.kind === 'spawn-refused') {
    process.stderr.write(`${decision.reason}\n`);
    return 2;
  }
  const start = args.repo ?? (firstText(input.payload.cwd) || process.cwd());
  const repository = repositoryOf(start);
  if (!repository) {
    process.stderr.write(`baton hook: ${start} is not inside a git repository; the event was not recorded\n`);
    return decision.kind === 'spawn-check' ? 2 : 1;
  }
  const { root } = repository;
  if (repository.worktree) {
    noticeLater(
      `baton: ${repository.worktree} is a linked worktree of ${root}; the event goes to ${root}'s queue, but changes made in the worktree are not measured there`,
    );
  }
  const { clientQueueConfig, privateRedisUrl } = await import('../queue/endpoint.ts');
  const config = clientQueueConfig(root, args.redis, () => {
    const local = privateRedisUrl(root);
    return local ? { redisUrl: local, prefix: process.env.BATON_PREFIX || DEFAULT_PREFIX } : null;
  });
  const repo = repoIdentity(root);
  if (decision.kind === 'spawn-check') {
    return flushNotices(await claimSpawn(root, repo, { ...args, client: args.client }, config, decision.nativeAgent, decision.toolCallId, input.payload));
  }
  // The delegation the event targets is part of its id: the same native ids for a later delegation
  // (a reused child id) are a new event, which neither BullMQ's job ids nor the journal may take
  // for a duplicate (docs/hooks.md "Duplicates"; the worker's journal checks the target again).
  const target = pendingReceiptOf(root, args.client);
  const eventId = target ? eventIdForNative([...decision.idParts, `receipt:${target}`]) : decision.eventId;
  const envelope = envelopeFor(decision.event, repo, 'hook', eventId);
  if (!config) return flushNotices(await spoolUnconfigured(envelope));
  const outcome = await deliver(envelope, { ...args, redis: config.redisUrl, prefix: config.prefix }, { waitForResult: verbose() });
  // The result goes to stderr, never stdout: stdout is the client's hook-output channel.
  if (outcome.stdout) process.stderr.write(`baton: ${outcome.stdout}`);
  if (outcome.stderr) noticeLater(outcome.stderr);
  return flushNotices(outcome.exitCode);
}

const notices: string[] = [];

/** Something the user should know although the event was recorded (spooled, queued, worktree). */
function noticeLater(message: string): void {
  notices.push(message.trim());
}

/**
 * Writes the notices on stderr and, on exit 0, once on stdout as the one hook-output field both
 * clients accept for every event and show to the user: `{"systemMessage": "…"}`.
 */
function flushNotices(exitCode: number): number {
  if (notices.length === 0) return exitCode;
  const text = notices.join('\n');
  process.stderr.write(`${text}\n`);
  if (exitCode === 0) process.stdout.write(`${JSON.stringify({ systemMessage: text })}\n`);
  notices.length = 0;
  return exitCode;
}

const NO_REDIS_ADVICE = (root: string) =>
  `no Redis is configured for ${root}: no --redis, no endpoint recorded by a worker (.git/baton/endpoint.json) and no REDIS_URL. Start the repository's worker (baton start, or baton worker --repo ${root}) or set REDIS_URL for the agent`;

/** Nothing says which Redis the worker uses: guessing could feed a queue nobody serves (docs/hooks.md "Which Redis"). */
async function spoolUnconfigured(envelope: JobEnvelope): Promise<number> {
  const { spoolEvent } = await import('../queue/spool.ts');
  const file = spoolEvent(envelope.repo.root, envelope);
  noticeLater(`baton: WARNING: ${NO_REDIS_ADVICE(envelope.repo.root)}. The ${envelope.intent} event was spooled to ${file}; it is applied once a worker runs.`);
  return 0;
}

type SpawnConfig = Awaited<ReturnType<typeof import('../queue/endpoint.ts').clientQueueConfig>>;

/**
 * PreToolUse: claim the prepared delegation for this tool call through the serialized worker and
 * wait for its answer within the budget (docs/hooks.md "Spawn claim (PreToolUse)"). Refused → exit 2 with the reason. No
 * worker answering → exit 2 naming `baton worker` (the claim would only apply later). Redis down or
 * not configured → the read-only check of the run files, said on stderr.
 */
async function claimSpawn(
  root: string,
  repo: ReturnType<typeof repoIdentity>,
  args: HookArgs & { client: HookClient },
  config: SpawnConfig,
  nativeAgent: string,
  toolCallId: string,
  payload: HookPayload,
): Promise<number> {
  const fileCheck = async (why: string): Promise<number> => {
    const { checkSpawn } = await import('./spawnCheck.ts');
    const verdict = checkSpawn(root, args.client, nativeAgent);
    noticeLater(`baton: ${why}; checked the run files instead (concurrent spawns are not serialized without the worker)`);
    if (verdict.allow) return 0;
    noticeLater(verdict.reason);
    return 2;
  };
  if (!config) return fileCheck(`WARNING: ${NO_REDIS_ADVICE(root)}`);
  // A claim applied after this hook gave up (no worker yet) must not hold the delegation for a
  // tool call that was blocked: the worker refuses it past `notAfter`.
  const notAfter = new Date(Date.now() + args.budgetMs).toISOString();
  const event: LifecycleEvent = { intent: 'claim-spawn', taskRef: 'auto', client: args.client, nativeAgent, toolCallId, notAfter };
  const envelope = envelopeFor(event, repo, 'hook', eventIdForNative([args.client, 'claim', text(payload.session_id), toolCallId]));
  const outcome = await deliver(envelope, { ...args, redis: config.redisUrl, prefix: config.prefix }, { waitForResult: true });
  const result = parseResult(outcome.stdout);
  if (result) {
    if (verbose()) process.stderr.write(`baton: ${outcome.stdout}`);
    if (result.status !== 'failed') return 0;
    process.stderr.write(`baton: ${result.error?.code ?? 'BATON_EVENT_FAILED'}: ${result.error?.message ?? 'the spawn claim failed'}\n`);
    return 2;
  }
  if (/spooled/.test(outcome.stderr)) return fileCheck(outcome.stderr.trim().replace(/^baton: /, ''));
  process.stderr.write(
    `baton: the spawn of ${nativeAgent} was not claimed, so it is blocked: ${outcome.stderr.trim().replace(/^baton: /, '') || 'the worker did not answer'}. Start the repository's worker (baton worker --repo ${root}, or baton start) and spawn again.\n`,
  );
  return 2;
}

function parseResult(stdout: string): { status: string; error?: { code: string; message: string } | null } | null {
  if (!stdout.trim()) return null;
  try {
    const value = JSON.parse(stdout) as { status?: unknown };
    return typeof value.status === 'string' ? (value as { status: string; error?: { code: string; message: string } | null }) : null;
  } catch {
    return null;
  }
}

export type DeliverOptions = Readonly<{
  /**
   * Wait (within the budget) for the worker's result and report it. Only a hook whose answer
   * depends on the result needs it (the PreToolUse spawn claim); an event that only has to be
   * recorded returns once it is queued.
   */
  waitForResult: boolean;
}>;

/**
 * Enqueue within the budget, spooling when Redis cannot be reached; with `waitForResult`, wait for
 * the result if time allows. Plain Redis URLs go through the raw RESP client (no Redis library to
 * load, src/queue/hookTransport.ts); cluster or sentinel configurations through ioredis.
 */
export async function deliver(envelope: JobEnvelope, args: { redis?: string; prefix?: string; budgetMs: number }, options: DeliverOptions): Promise<HookRun> {
  const deadline = Date.now() + args.budgetMs;
  const config = queueConfigFrom(args.redis, args.prefix, envelope.repo.root);
  const { connectHookQueue } = await import('../queue/hookTransport.ts');
  const { drainSpool, spoolEvent } = await import('../queue/spool.ts');
  const repo = envelope.repo;
  let client: HookQueue | null = null;
  let gaveUp = false;
  // A server that accepts the connection but never answers must not hold the agent: past the
  // budget the event is spooled (adding it twice is harmless: job ids and the journal deduplicate).
  const budgetLeft = () => Math.max(1, deadline - Date.now());
  const silent = `Redis did not answer within the hook budget (${args.budgetMs} ms)`;
  try {
    try {
      const enqueueing = (async () => {
        const connected = await connectHookQueue(config, repo, Math.max(50, Math.min(1_000, (deadline - Date.now()) / 2)));
        client = connected;
        if (gaveUp) {
          await connected.close();
          throw new Error(silent);
        }
        await drainSpool(repo.root, (spooled) => connected.enqueue(spooled));
        await connected.enqueue(envelope);
        return connected;
      })();
      enqueueing.catch(() => undefined);
      client = await withDeadline(enqueueing, budgetLeft(), silent).catch((error: unknown) => {
        gaveUp = true;
        throw error;
      });
    } catch (error) {
      const file = spoolEvent(repo.root, envelope);
      return {
        exitCode: 0,
        stdout: '',
        stderr: `baton: Redis unreachable (${(error as Error).message}); ${envelope.intent} event spooled to ${file}; it is applied, in order, once Redis and a worker are back\n`,
      };
    }
    let outcome: JobOutcome;
    try {
      if (!(await withDeadline(client.workerAvailable(), budgetLeft(), silent))) {
        return {
          exitCode: 0,
          stdout: '',
          stderr: `baton: no worker serves ${repo.root}; ${envelope.intent} event queued as ${envelope.eventId} and applied when one starts: baton worker --repo ${repo.root}\n`,
        };
      }
      if (!options.waitForResult) return { exitCode: 0, stdout: '', stderr: '' };
      // The wait ends by itself at the budget (XREAD BLOCK); the deadline is for a server that stopped answering.
      outcome = await withDeadline(client.waitFor(envelope.eventId, Math.max(0, deadline - Date.now() - 50)), budgetLeft() + 250, silent);
    } catch (error) {
      // The event is queued; Redis went away while we waited for its result (chaos suite).
      return {
        exitCode: 0,
        stdout: '',
        stderr: `baton: ${envelope.intent} event queued as ${envelope.eventId}; lost the connection to Redis while waiting for its result (${(error as Error).message}); the worker applies it once Redis is back\n`,
      };
    }
    if (outcome.kind === 'completed') {
      const result = outcome.value;
      const failed = result.status === 'failed';
      return {
        exitCode: failed ? 1 : 0,
        stdout: `${JSON.stringify(result)}\n`,
        stderr: failed && result.error ? `baton: ${result.error.code}: ${result.error.message}\n` : '',
      };
    }
    if (outcome.kind === 'failed') return { exitCode: 1, stdout: '', stderr: `baton: the worker could not apply ${envelope.eventId}: ${outcome.reason}\n` };
    return {
      exitCode: 0,
      stdout: '',
      stderr: `baton: ${envelope.intent} event queued as ${envelope.eventId}; not applied within the hook budget (${args.budgetMs} ms), the worker will apply it\n`,
    };
  } finally {
    await (client as HookQueue | null)?.close();
  }
}
