import fs from 'node:fs';
import path from 'node:path';
import * as z from 'zod/mini';
import { findRepoRoot } from '../core/repoRoot.ts';
import { managedDelegationRole } from '../core/receipts.ts';
import type { LifecycleEvent } from '../core/events.ts';
// The fast path imports no zod and no Redis client until it has an event to deliver.
import { envelopeFor, eventIdForNative, repoIdentity } from '../queue/eventIds.ts';
import type { JobEnvelope } from '../queue/envelope.ts';
import { queueConfigFrom } from './common.ts';
import type { HookQueue } from '../queue/hookTransport.ts';
import type { JobOutcome } from '../queue/outcome.ts';

// `baton hook <claude-code|codex> [--event NAME]`: the command a native hook runs. It reads the
// client's JSON payload on stdin, turns SubagentStart/SubagentStop of a lifecycle agent into a
// hook-start/hook-stop event (docs/lifecycle.md §10.3) with a deterministic event id, and adds it to the
// repository's queue. It never hangs the agent: with Redis down the event is spooled locally; with
// no worker it stays queued; in both cases the hook says so on stderr and exits 0.
// PreToolUse on the subagent-spawning tool is a read-only check that blocks (exit 2) a lifecycle
// spawn with no matching prepared delegation — the one place the one-pending rule can stop an agent.
//
// What it returns to the client: stdout = the orchestration result JSON once applied; exit 0 when
// the event was applied, queued or spooled; exit 1 when the input is invalid or the applied result
// is `failed` (a non-blocking error for both clients). It never exits 2 on SubagentStart/Stop:
// Claude Code would keep a stopping subagent running on 2.

export const HOOK_INPUT_LIMIT = 64 * 1024;
export const DEFAULT_HOOK_BUDGET_MS = 4_000;

const MESSAGES = {
  client: 'Lifecycle delegation hook requires a supported --client value',
  tooLarge: 'Lifecycle delegation hook input exceeds 64 KiB',
  invalidJson: 'Lifecycle delegation hook received invalid JSON',
  unknownType: 'Managed lifecycle hook event has an unknown type',
} as const;

// The payload is validated with zod's small build (zod/mini, ~5 ms to load) rather than the full
// one (~30 ms): the hook starts for every agent event and must stay near the bare runtime start-up
// (bench/results/hook.md). test/fuzz/hook.test.ts checks it against the full zod schema.
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
  tool_input: z.nullish(z.looseObject({ subagent_type: optionalText, agent_type: optionalText, agent: optionalText, name: optionalText })),
});
export type HookPayload = z.infer<typeof payloadSchema>;

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

export type HookClient = 'claude-code' | 'codex';

export type HookRun = { exitCode: number; stdout: string; stderr: string };

const SPAWN_TOOLS = new Set(['task', 'agent', 'spawn_agent', 'collaborationspawn_agent', 'collaboration.spawn_agent']);

function firstText(...values: (string | null | undefined)[]): string {
  return values.find((value): value is string => typeof value === 'string' && value.length > 0) ?? '';
}

export type HookDecision =
  | { kind: 'ignore' }
  | { kind: 'error'; message: string }
  | { kind: 'spawn-check'; nativeAgent: string }
  | { kind: 'event'; event: LifecycleEvent; eventId: string };

/** Pure mapping from a validated payload to what the hook should do (docs/lifecycle.md §10.3 steps 3–6). */
export function decideHook(client: HookClient, payload: HookPayload, eventOption?: string): HookDecision {
  const kind = firstText(eventOption, payload.hook_event_name, payload.event).toLowerCase();
  if (kind === 'pretooluse' || kind === 'pre-tool' || kind === 'pre_tool_use') {
    if (!SPAWN_TOOLS.has(firstText(payload.tool_name).toLowerCase())) return { kind: 'ignore' };
    const input = payload.tool_input;
    const nativeAgent = firstText(input?.subagent_type, input?.agent_type, input?.agent, input?.name);
    return managedDelegationRole(nativeAgent) ? { kind: 'spawn-check', nativeAgent } : { kind: 'ignore' };
  }
  const nativeAgent = firstText(payload.agent_name, payload.agent_type, payload.agent?.name);
  if (!managedDelegationRole(nativeAgent)) return { kind: 'ignore' };
  const childId = firstText(payload.agent_id, payload.child_id, payload.thread_id);
  const phase = kind.includes('start') ? 'start' : kind.includes('stop') ? 'stop' : null;
  if (!phase) return { kind: 'error', message: MESSAGES.unknownType };
  // 0.9.2 passed an empty id on to the CLI, whose usage error (exit 2) kept a stopping Claude
  // subagent running; baton reports it as a plain error instead.
  if (!childId) return { kind: 'error', message: 'Managed lifecycle hook event has no child identity (agent_id)' };
  const eventId = eventIdForNative([client, phase, payload.session_id, childId, nativeAgent, payload.turn_id]);
  if (phase === 'stop') {
    return { kind: 'event', eventId, event: { intent: 'hook-stop', taskRef: 'auto', client, nativeAgent, childId } };
  }
  const parentId = firstText(payload.parent_id, payload.parent_session_id, payload.session_id);
  if (!parentId) return { kind: 'error', message: 'Managed lifecycle hook event has no parent identity (session_id)' };
  const event: LifecycleEvent = {
    intent: 'hook-start',
    taskRef: 'auto',
    client,
    nativeAgent,
    childId,
    parentId,
    // Claude Code does not report a spawn mode; its subagents start fresh.
    spawnMode: firstText(payload.spawn_mode) || 'fresh',
    ...(payload.model ? { actualModel: payload.model } : {}),
    ...(payload.model_fallback_reason ? { fallbackReason: payload.model_fallback_reason } : {}),
  };
  return { kind: 'event', eventId, event };
}

export function parseHookInput(raw: Buffer): { ok: true; payload: HookPayload } | { ok: false; message: string } {
  if (raw.length > HOOK_INPUT_LIMIT) return { ok: false, message: MESSAGES.tooLarge };
  const text = raw.toString('utf8');
  let value: unknown;
  try {
    value = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    return { ok: false, message: MESSAGES.invalidJson };
  }
  const parsed = payloadSchema.safeParse(value);
  if (!parsed.success) {
    return { ok: false, message: `Lifecycle delegation hook payload is not a hook event object${describeProblem(value, parsed.error.issues)}` };
  }
  return { ok: true, payload: parsed.data };
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

const HOOK_USAGE = `usage: baton hook <claude-code|codex> [--event NAME] [--repo DIR] [--redis URL] [--budget MS]

Reads a native hook payload on stdin. SubagentStart/SubagentStop of agent-infra-lifecycle-executor
or -reviewer become hook-start/hook-stop events on the repository queue; PreToolUse of the spawning
tool blocks (exit 2) a lifecycle spawn without a prepared delegation. Other agents: exit 0, silent.
`;

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
  if (args.client !== 'claude-code' && args.client !== 'codex') {
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
  const start = args.repo ?? (firstText(input.payload.cwd) || process.cwd());
  const root = findRepoRoot(path.resolve(start));
  if (!root) {
    process.stderr.write(`baton hook: ${start} is not inside a git repository; the event was not recorded\n`);
    return 1;
  }
  if (decision.kind === 'spawn-check') {
    const { checkSpawn } = await import('./spawnCheck.ts');
    const verdict = checkSpawn(root, args.client, decision.nativeAgent);
    if (verdict.allow) return 0;
    process.stderr.write(`${verdict.reason}\n`);
    return 2;
  }
  const repo = repoIdentity(root);
  const envelope = envelopeFor(decision.event, repo, 'hook', decision.eventId);
  const outcome = await deliver(envelope, args, { waitForResult: true });
  if (outcome.stdout) process.stdout.write(outcome.stdout);
  if (outcome.stderr) process.stderr.write(outcome.stderr);
  return outcome.exitCode;
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
export async function deliver(envelope: JobEnvelope, args: { redis?: string; budgetMs: number }, options: DeliverOptions): Promise<HookRun> {
  const deadline = Date.now() + args.budgetMs;
  const config = queueConfigFrom(args.redis, undefined, envelope.repo.root);
  const { connectHookQueue, withDeadline } = await import('../queue/hookTransport.ts');
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
