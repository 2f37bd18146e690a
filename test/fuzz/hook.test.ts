import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { decideHook, nativeEventId } from '../../src/hooks/decide.ts';
import { parseHookInput, validateManagedPayload } from '../../src/hooks/payload.ts';
import { lifecycleEventSchema } from '../../src/core/events.ts';
import { EVENT_ID_PATTERN } from '../../src/queue/eventIds.ts';
import { envelopeFor } from '../../src/queue/envelope.ts';
import { parseEnvelope } from '../../src/queue/envelopeSchema.ts';
import { TASK_ID, tempRepo, uniquePrefix, writeTask } from '../support/fixtures.ts';
import type { Fixture } from '../support/fixtures.ts';
import { batonEnv, runBaton } from '../support/processes.ts';
import { changedPaths, params, snapshotTree, FUZZ_TIMEOUT } from './support.ts';
import { EXAMPLE_HOOKS_DIR } from '../support/fixturePaths.ts';

// Hook payloads (docs/architecture.md "Reliability": malformed or oversized hook payloads get a clear
// error and change nothing). In process: parseHookInput and decideHook never throw, and every event
// they produce is one the worker accepts. As a process: `baton hook` on a sample of the same
// payloads always exits 0, 1 or 2 with a message (never a stack trace) and touches nothing but
// baton's own state under .git/baton.

const EXAMPLES = EXAMPLE_HOOKS_DIR;
const examples = [
  'claude-code/SubagentStart.json',
  'claude-code/SubagentStop.json',
  'claude-code/PreToolUse-Task.json',
  'codex/SubagentStart.json',
  'codex/SubagentStop.json',
].map((name) => JSON.parse(fs.readFileSync(path.join(EXAMPLES, name), 'utf8')) as Record<string, unknown>);

const AGENTS = [
  'agent-infra-lifecycle-executor',
  'agent-infra-lifecycle-reviewer',
  'agent-infra-lifecycle-',
  'general-purpose',
  'Agent-Infra-Lifecycle-Executor',
  '',
];
const EVENTS = [
  'SubagentStart',
  'SubagentStop',
  'PreToolUse',
  'subagent-start',
  'subagent_stop',
  'Stop',
  'Notification',
  'pre-tool',
  'START',
  '',
];
const KEYS = [
  'hook_event_name',
  'event',
  'session_id',
  'parent_id',
  'parent_session_id',
  'agent_id',
  'child_id',
  'thread_id',
  'agent_name',
  'agent_type',
  'agent',
  'spawn_mode',
  'model',
  'model_fallback_reason',
  'turn_id',
  'cwd',
  'tool_name',
  'tool_input',
  '__proto__',
  'constructor',
];

const scalar = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom(...AGENTS, ...EVENTS, 'fresh', 'fork', 'Task', 'spawn_agent', 'claude-opus'),
  fc.constant(null),
  fc.integer(),
  fc.double(),
  fc.boolean(),
);
const value = fc.oneof(
  { weight: 5, arbitrary: scalar },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  {
    weight: 1,
    arbitrary: fc.record({ name: scalar, subagent_type: scalar, agent_type: scalar }, { requiredKeys: [] }),
  },
);
/** Objects shaped like hook payloads: the fields baton reads, with right and wrong types. */
const payloadObject = fc.oneof(
  fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 12 }),
  fc
    .tuple(fc.constantFrom(...examples), fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 4 }))
    .map(([base, patch]) => ({ ...base, ...patch })),
  fc.record({
    hook_event_name: fc.constantFrom(...EVENTS),
    agent_type: fc.constantFrom(...AGENTS),
    agent_id: fc.oneof(fc.string({ maxLength: 20 }), fc.constant('')),
    session_id: fc.oneof(fc.string({ maxLength: 20 }), fc.constant('')),
  }),
);
/** Raw stdin: payload objects as JSON, arbitrary JSON, arbitrary bytes, near-limit sizes. */
const stdin = fc.oneof(
  { weight: 6, arbitrary: payloadObject.map((object) => Buffer.from(JSON.stringify(object))) },
  { weight: 2, arbitrary: fc.json().map((text) => Buffer.from(text)) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200, unit: 'binary' }).map((text) => Buffer.from(text)) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 64 * 1024 - 64, max: 64 * 1024 + 64 }).map((size) => {
      const text = JSON.stringify({ ...examples[0], pad: '' });
      return Buffer.from(text.replace('"pad":""', `"pad":"${'x'.repeat(Math.max(0, size - text.length))}"`));
    }),
  },
);

/** The same schema in full zod (the hook uses zod/mini for start-up time): the oracle. */
const optionalText = z.string().nullish();
const zodPayload = z.looseObject({
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
  agent: z.looseObject({ name: optionalText }).nullish(),
  spawn_mode: optionalText,
  model: optionalText,
  model_fallback_reason: optionalText,
  turn_id: optionalText,
  cwd: optionalText,
  tool_name: optionalText,
  tool_use_id: optionalText,
  call_id: optionalText,
  tool_input: z.looseObject({ subagent_type: optionalText, agent_type: optionalText, agent: optionalText, name: optionalText }).nullish(),
});
function zodVerdict(raw: Buffer): { ok: boolean; message?: string } {
  let value: unknown;
  try {
    value = raw.toString('utf8').trim() === '' ? {} : JSON.parse(raw.toString('utf8'));
  } catch {
    return { ok: false, message: 'Lifecycle delegation hook received invalid JSON' };
  }
  const parsed = zodPayload.safeParse(value);
  if (parsed.success) return { ok: true };
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` (${issue.path.join('.')}: ${issue.message})` : '';
  return { ok: false, message: `Lifecycle delegation hook payload is not a hook event object${where}` };
}

describe('hook payloads in process', () => {
  it(
    'the managed-payload check (zod/mini) agrees with the full zod schema (verdict and message)',
    () => {
      fc.assert(
        fc.property(
          stdin.filter((raw) => raw.length <= 64 * 1024),
          (raw) => {
            const parsed = parseHookInput(raw);
            const oracle = zodVerdict(raw);
            if (!parsed.ok) {
              // Invalid JSON and non-objects are refused before any field is looked at.
              expect(oracle.ok).toBe(false);
              return;
            }
            const ours = validateManagedPayload(parsed.payload);
            expect(ours.ok).toBe(oracle.ok);
            if (!ours.ok) expect(ours.message).toBe(oracle.message);
          },
        ),
        params(5000),
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'agents baton does not manage are ignored whatever their fields hold',
    () => {
      fc.assert(
        fc.property(payloadObject, fc.constantFrom('claude-code', 'codex') as fc.Arbitrary<'claude-code' | 'codex'>, (object, client) => {
          const unmanaged = {
            ...object,
            hook_event_name: 'SubagentStart',
            agent_type: 'general-purpose',
            agent_name: undefined,
            agent: undefined,
          };
          expect(decideHook(client, unmanaged)).toEqual({ kind: 'ignore' });
        }),
        params(2000),
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'parseHookInput never throws: a payload or a clear message',
    () => {
      fc.assert(
        fc.property(stdin, (raw) => {
          const parsed = parseHookInput(raw);
          if (parsed.ok) expect(typeof parsed.payload).toBe('object');
          else expect(parsed.message).toMatch(/^Lifecycle delegation hook /);
        }),
        params(3000),
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'decideHook never throws, and every event it makes is a valid job the worker accepts',
    () => {
      const repo = { id: '0123456789abcdef', root: '/nonexistent/repo' };
      fc.assert(
        fc.property(
          stdin,
          fc.constantFrom('claude-code', 'codex') as fc.Arbitrary<'claude-code' | 'codex'>,
          fc.option(fc.constantFrom(...EVENTS), { nil: undefined }),
          (raw, client, eventOption) => {
            const parsed = parseHookInput(raw);
            if (!parsed.ok) return;
            const decision = decideHook(client, parsed.payload, eventOption, { invocationId: 'fuzz' });
            expect(['ignore', 'error', 'spawn-refused', 'spawn-check', 'event']).toContain(decision.kind);
            if (decision.kind === 'error') expect(decision.message.length).toBeGreaterThan(0);
            if (decision.kind === 'spawn-refused') expect(decision.reason).toMatch(/^baton: DELEGATION_(FORK|ISOLATION)_FORBIDDEN: /);
            if (decision.kind !== 'event') return;
            expect(nativeEventId(decision, null)).toMatch(EVENT_ID_PATTERN);
            expect(lifecycleEventSchema.safeParse(decision.event).success).toBe(true);
            const check = parseEnvelope(
              JSON.parse(JSON.stringify(envelopeFor(decision.event, repo, 'hook', nativeEventId(decision, null)))),
            );
            expect(check.ok, check.ok ? '' : check.message).toBe(true);
            // The same payload of the same invocation gets the same id (a Codex turn_id stands in for
            // the invocation id: its duplicates dedupe across invocations).
            const reparsed = parseHookInput(raw);
            expect(reparsed.ok && decideHook(client, reparsed.payload, eventOption, { invocationId: 'fuzz' })).toEqual(decision);
          },
        ),
        params(3000),
      );
    },
    FUZZ_TIMEOUT,
  );
});

describe('baton hook as a process, on a sample of the same payloads', () => {
  const redisUrl = inject('redisUrl');
  let fixture: Fixture;
  let env: NodeJS.ProcessEnv;
  beforeAll(() => {
    fixture = tempRepo();
    writeTask(fixture, TASK_ID);
    env = batonEnv({ redisUrl, prefix: uniquePrefix('fuzz-hook') }, { BATON_HOOK_BUDGET_MS: '1000' });
  });
  afterAll(() => fixture.cleanup());

  it(
    'exits 0, 1 or 2 with a message, never a stack trace, and changes nothing outside .git/baton',
    async () => {
      const seed = Number(process.env.FUZZ_SEED ?? 20260101);
      const count = Math.max(12, Math.round((Number(process.env.FUZZ_RUNS) || 0) / 100));
      const cwdChoices = ['.', 'sub/dir', '/nonexistent/baton-fuzz', '../../nonexistent-baton-fuzz', ''];
      const samples = fc.sample(
        fc.tuple(payloadObject, fc.constantFrom(...cwdChoices), fc.constantFrom('claude-code', 'codex', 'gemini-cli')),
        { numRuns: count, seed },
      );
      const cases: { input: string; client: string }[] = samples.map(([object, cwd, client]) => ({
        input: JSON.stringify({ ...object, cwd: cwd === '.' ? fixture.root : cwd || undefined }),
        client,
      }));
      // Lifecycle events that do reach the queue, and hostile raw input.
      cases.push(
        { input: JSON.stringify({ ...examples[0], cwd: fixture.root }), client: 'claude-code' },
        { input: JSON.stringify({ ...examples[1], cwd: fixture.root }), client: 'claude-code' },
        { input: '\u0000\u00ff{', client: 'claude-code' },
        {
          input: `{"agent_type":"agent-infra-lifecycle-executor","hook_event_name":"SubagentStart","agent_id":"${'é'.repeat(40_000)}"}`,
          client: 'codex',
        },
      );
      const before = snapshotTree(fixture.root, (relative) => relative.startsWith(path.join('.git', 'baton')));
      for (const { input, client } of cases) {
        const run = await runBaton(['hook', client], { env, input, cwd: fixture.root, timeoutMs: 15_000 });
        const context = `input ${input.slice(0, 200)}\nexit ${run.code}\nstdout ${run.stdout}\nstderr ${run.stderr}`;
        expect([0, 1, 2], context).toContain(run.code);
        expect(run.stderr, context).not.toMatch(/\n\s+at .+:\d+:\d+/);
        expect(run.stderr, context).not.toMatch(/TypeError|ReferenceError|RangeError|SyntaxError: Unexpected/);
        if (run.code !== 0) expect(run.stderr.trim().length, context).toBeGreaterThan(0);
      }
      const after = snapshotTree(fixture.root, (relative) => relative.startsWith(path.join('.git', 'baton')));
      expect(changedPaths(before, after)).toEqual([]);
      expect(fs.existsSync('/nonexistent')).toBe(false);
    },
    Math.max(120_000, FUZZ_TIMEOUT),
  );
});
