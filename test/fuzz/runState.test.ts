import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { UnrecoverableError } from 'bullmq';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyEvent } from '../../src/core/engine.ts';
import type { LifecycleEvent } from '../../src/core/events.ts';
import { commitWrites, parseRunText, serializeRun } from '../../src/core/runStore.ts';
import { DELEGATION_ROLES, DELEGATION_STAGES, RECEIPT_STATUSES } from '../../src/core/types.ts';
import { KNOWN_CLIENT_IDS } from '../../src/core/clients.ts';
import type { DelegationReceipt, OrchestrationRun } from '../../src/core/types.ts';
import { envelopeFor } from '../../src/queue/envelope.ts';
import { parseEnvelope } from '../../src/queue/envelopeSchema.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { processJobData, servedRepository } from '../../src/workers/processor.ts';
import { TASK_ID, TASK_ID_2, fakeFingerprinter, tempRepo, writeApprovedThroughCode, writeTask } from '../support/fixtures.ts';
import type { Fixture } from '../support/fixtures.ts';
import { changedPaths, mutatedText, params, snapshotTree, FUZZ_TIMEOUT } from './support.ts';

// Run-state files and job envelopes (docs/architecture.md "Reliability": corrupt state files and
// malformed jobs get a clear error and change nothing). The engine is applied to every intent over
// orchestration.json files that are corrupt (text damage), schema-invalid (a field replaced or
// dropped) or schema-valid but odd (any status, receipt state, counters): it never throws, a
// corrupt target is ORCHESTRATION_STATE_INVALID with nothing written, everything it writes is a
// valid run file, and it writes nothing but run files of task directories. The worker's processor
// gets malformed and hostile envelopes: a refusal (UnrecoverableError) or a result, and no file
// outside the workspace and baton's own state (.git/baton) is touched.

const NOW = '2026-01-01T00:00:00.000Z';

let fixture: Fixture;
beforeEach(() => {
  fixture = tempRepo();
  writeTask(fixture, TASK_ID);
  writeTask(fixture, TASK_ID_2);
  fs.writeFileSync(
    path.join(fixture.root, '.agents', 'workspace', 'active', '.short-ids.json'),
    JSON.stringify({ version: 1, ids: { '01': TASK_ID, '02': TASK_ID_2 } }),
  );
});
afterEach(() => fixture.cleanup());

const text = fc.oneof(
  fc.constantFrom('x', 'child-1', 'child-2', 'parent', '', 'claude', 'analysis.md', 'commit'),
  fc.string({ maxLength: 10 }),
);
const nullableText = fc.option(text, { nil: null });
const receipt: fc.Arbitrary<DelegationReceipt> = fc.record({
  taskId: fc.constantFrom(TASK_ID, TASK_ID_2, 'other'),
  runId: fc.constantFrom('run-1', 'run-2'),
  role: fc.constantFrom(...DELEGATION_ROLES),
  stage: fc.constantFrom(...DELEGATION_STAGES),
  round: fc.integer({ min: 1, max: 2 ** 31 }),
  artifact: fc.constantFrom('analysis.md', 'plan.md', 'review-code-r3.md', 'commit', '../../escape.md', ''),
  client: fc.oneof(fc.constantFrom(...KNOWN_CLIENT_IDS), text),
  requestedModel: nullableText,
  beforeFingerprint: fc.constantFrom('before-tree', '', '0'.repeat(40)),
  id: fc.constantFrom('r-1', 'r-2', 'r-3'),
  actualModel: nullableText,
  modelFallbackReason: nullableText,
  parentId: nullableText,
  childId: fc.option(fc.constantFrom('child-1', 'child-2', ''), { nil: null }),
  spawnMode: fc.option(fc.constantFrom('fresh', 'fork'), { nil: null }),
  agent: nullableText,
  status: fc.constantFrom(...RECEIPT_STATUSES),
  afterFingerprint: nullableText,
  changedPaths: fc.array(fc.constantFrom('src/a.ts', '.agents/workspace/active/x', '../outside'), { maxLength: 3 }),
  createdAt: fc.constant(NOW),
  activatedAt: fc.option(fc.constant(NOW), { nil: null }),
  sealedAt: fc.option(fc.constant(NOW), { nil: null }),
  consumedAt: fc.option(fc.constant(NOW), { nil: null }),
});
/** Schema-valid runs in any state, however unlikely. */
const oddRun: fc.Arbitrary<OrchestrationRun> = fc.record({
  schemaVersion: fc.constant(1 as const),
  taskId: fc.constantFrom(TASK_ID, TASK_ID_2, 'not-a-task'),
  runId: fc.constantFrom('run-1', 'x'),
  status: fc.constantFrom('running', 'paused', 'completed'),
  nextStage: fc.option(fc.constantFrom(...DELEGATION_STAGES), { nil: null }),
  stepCount: fc.nat({ max: 30 }),
  maxSteps: fc.integer({ min: 1, max: 30 }),
  baseline: fc.constant(''),
  pendingDelegation: fc.option(receipt, { nil: null, freq: 2 }),
  receipts: fc.array(receipt, { maxLength: 3 }),
  pause: fc.option(fc.record({ code: text, message: text, recoverable: fc.boolean() }), { nil: null }),
  commitAuthorization: fc.record({
    issuedAt: fc.option(fc.constant(NOW), { nil: null }),
    consumedAt: fc.option(fc.constant(NOW), { nil: null }),
  }),
  createdAt: fc.constant(NOW),
  updatedAt: fc.constant(NOW),
}) as fc.Arbitrary<OrchestrationRun>;

const anyJson = fc.jsonValue({ maxDepth: 2 });
/** A valid run with one field replaced by any JSON value or removed (mostly schema-invalid). */
const brokenRun = fc
  .tuple(
    oddRun,
    fc.constantFrom(
      'schemaVersion',
      'status',
      'stepCount',
      'maxSteps',
      'pendingDelegation',
      'receipts',
      'pause',
      'commitAuthorization',
      'runId',
      'nextStage',
      'pendingDelegation.status',
      'pendingDelegation.round',
      'pendingDelegation.changedPaths',
      'pendingDelegation.role',
      'receipts.0',
      'pause.recoverable',
    ),
    anyJson,
    fc.boolean(),
  )
  .map(([run, field, value, remove]) => {
    const copy = JSON.parse(JSON.stringify(run)) as Record<string, any>;
    const parts = field.split('.');
    let target: any = copy;
    for (const part of parts.slice(0, -1)) target = target?.[part];
    if (target && typeof target === 'object') {
      if (remove) delete target[parts.at(-1)!];
      else target[parts.at(-1)!] = value;
    }
    return `${JSON.stringify(copy, null, 2)}\n`;
  });
const runFileText = fc.oneof(
  { weight: 3, arbitrary: oddRun.map((run) => serializeRun(run)) },
  { weight: 3, arbitrary: brokenRun },
  { weight: 2, arbitrary: oddRun.chain((run) => mutatedText(serializeRun(run))) },
  { weight: 1, arbitrary: fc.constantFrom('', 'null', '[]', '{}', '{"schemaVersion":2}', '\u0000', '{"__proto__":{"status":"running"}}') },
);

const client = fc.constantFrom('claude-code', 'codex') as fc.Arbitrary<'claude-code' | 'codex'>;
const agent = fc.constantFrom('agent-infra-lifecycle-executor', 'agent-infra-lifecycle-reviewer', 'general-purpose');
const taskRef = fc.constantFrom(TASK_ID, '01', '02', TASK_ID_2, '#9', 'TASK-20990101-000009');
const stage = fc.constantFrom(...DELEGATION_STAGES);
const round = fc.integer({ min: 1, max: 3 });
const artifact = fc.constantFrom('analysis.md', 'plan.md', 'commit', 'code-r2.md');
const childId = fc.constantFrom('child-1', 'child-2', 'child-3');
const event: fc.Arbitrary<LifecycleEvent> = fc.oneof(
  fc.record(
    { intent: fc.constant('begin-or-resume' as const), taskRef, maxSteps: fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }) },
    { requiredKeys: ['intent', 'taskRef'] },
  ),
  fc.record({ intent: fc.constantFrom('route' as const, 'status' as const, 'advance' as const), taskRef }),
  fc.record({ intent: fc.constant('prepare' as const), taskRef, client: fc.constantFrom(...KNOWN_CLIENT_IDS) }),
  fc.record({
    intent: fc.constant('hook-start' as const),
    taskRef: fc.constant('auto'),
    client,
    nativeAgent: agent,
    childId,
    parentId: fc.constantFrom('parent', 'child-1'),
    spawnMode: fc.constantFrom('fresh', 'fork'),
  }),
  fc.record({
    intent: fc.constant('hook-start' as const),
    taskRef,
    nativeAgent: agent,
    childId,
    parentId: fc.constantFrom('parent', 'child-1'),
    spawnMode: fc.constantFrom('fresh', 'fork'),
  }),
  fc.record({ intent: fc.constant('hook-stop' as const), taskRef: fc.constant('auto'), client, nativeAgent: agent, childId }),
  fc.record({ intent: fc.constant('hook-stop' as const), taskRef, childId, exitCode: fc.integer({ min: -1, max: 2 }) }),
  fc.record({ intent: fc.constant('stage-completed' as const), taskRef, agent: fc.constantFrom('claude', 'codex', 'x') }),
  fc.record({ intent: fc.constant('complete-stage' as const), taskRef, stage, round, artifact, agent: fc.constantFrom('claude', 'codex') }),
  fc.record({
    intent: fc.constant('validate-stage' as const),
    taskRef,
    stage,
    round,
    artifact,
    role: fc.constantFrom(...DELEGATION_ROLES),
  }),
  fc.record({
    intent: fc.constant('pause' as const),
    taskRef,
    code: fc.constantFrom('HOOK_FAILED', 'X'),
    message: text,
    recoverable: fc.boolean(),
  }),
  fc.record(
    { intent: fc.constant('abort' as const), taskRef, reason: fc.option(fc.constantFrom('gone', 'r'), { nil: undefined }) },
    { requiredKeys: ['intent', 'taskRef'] },
  ),
);

const runFile = (taskId: string) => path.join(fixture.taskDir(taskId), 'orchestration.json');
const allowedWrite = (file: string) =>
  path.basename(file) === 'orchestration.json' &&
  path.dirname(path.dirname(file)) === path.join(fixture.root, '.agents', 'workspace', 'active');

describe('run-state files', () => {
  it(
    'parseRunText never throws: a run or an invalid-state message naming the file',
    () => {
      fc.assert(
        fc.property(runFileText, (content) => {
          const read = parseRunText(content, '/x/orchestration.json');
          if (read.kind === 'invalid') expect(read.message).toContain('/x/orchestration.json');
          else expect(read.kind).toBe('ok');
        }),
        params(3000),
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'the engine never throws on any run state, refuses corrupt targets and writes only valid run files',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          runFileText,
          fc.option(runFileText, { nil: null }),
          event,
          fc.boolean(),
          async (content, otherContent, lifecycleEvent, approved) => {
            fs.rmSync(fixture.taskDir(TASK_ID), { recursive: true, force: true });
            writeTask(fixture, TASK_ID);
            if (approved) writeApprovedThroughCode(fixture.taskDir(TASK_ID));
            fs.writeFileSync(runFile(TASK_ID), content);
            if (otherContent === null) fs.rmSync(runFile(TASK_ID_2), { force: true });
            else fs.writeFileSync(runFile(TASK_ID_2), otherContent);
            const before = snapshotTree(fixture.root);
            let ids = 0;
            const outcome = await applyEvent(lifecycleEvent, {
              repoRoot: fixture.root,
              fingerprinter: fakeFingerprinter({
                capture: () => 'after-tree',
                diff: () => ['src/a.ts', '.agents/workspace/active/x/y.md'],
              }),
              now: () => NOW,
              newId: () => `id-${(ids += 1)}`,
            });
            const { result } = outcome;
            expect(['running', 'paused', 'completed', 'failed']).toContain(result.status);
            if (result.status === 'failed') expect(result.error?.code).toMatch(/^[A-Z_]+$/);
            const targetCorrupt = parseRunText(content, runFile(TASK_ID)).kind === 'invalid';
            for (const write of outcome.writes) {
              expect(allowedWrite(write.path), write.path).toBe(true);
              expect(parseRunText(write.content, write.path).kind, write.content).toBe('ok');
              if (targetCorrupt) expect(write.path).not.toBe(runFile(TASK_ID));
            }
            if (targetCorrupt && [TASK_ID, '01'].includes(lifecycleEvent.taskRef)) {
              // A command on a task whose run file is corrupt fails (mostly ORCHESTRATION_STATE_INVALID;
              // checks that come first, such as an unsupported client, may answer instead).
              expect(result.status, JSON.stringify(result)).toBe('failed');
            }
            if (
              targetCorrupt &&
              lifecycleEvent.taskRef === 'auto' &&
              'nativeAgent' in lifecycleEvent &&
              lifecycleEvent.nativeAgent !== 'general-purpose'
            ) {
              // Scans skip a corrupt run file and say so.
              expect(result.warnings?.some((warning) => warning.includes('skipped corrupt run state'))).toBe(true);
            }
            commitWrites(outcome.writes);
            for (const changed of changedPaths(before, snapshotTree(fixture.root))) {
              expect(allowedWrite(path.join(fixture.root, changed)), changed).toBe(true);
            }
          },
        ),
        params(1500),
      );
    },
    FUZZ_TIMEOUT,
  );
});

describe('job envelopes', () => {
  const valid = () =>
    JSON.parse(
      JSON.stringify(
        envelopeFor(
          { intent: 'pause', taskRef: TASK_ID, code: 'X', message: 'm', recoverable: true },
          repoIdentity(fixture.root),
          'cli',
          'c-fuzz',
        ),
      ),
    );
  const envelopeField = fc.constantFrom(
    'v',
    'eventId',
    'repo',
    'repo.id',
    'repo.root',
    'source',
    'intent',
    'taskRef',
    'args',
    'args.code',
    'args.recoverable',
    'enqueuedAt',
    'extra',
  );
  const hostileValue = fc.oneof(
    anyJson,
    fc.constantFrom(
      '../../..',
      '/etc',
      'auto',
      'c-x:y',
      '123',
      `h-${'a'.repeat(200)}`,
      'TASK-20260101-000001/../../..',
      'advance',
      'begin-or-resume',
      'hook-stop',
    ),
  );

  it(
    'parseEnvelope never throws; the processor refuses what is malformed or foreign and touches nothing else',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(anyJson, fc.array(fc.tuple(envelopeField, hostileValue, fc.boolean()), { minLength: 1, maxLength: 3 })),
          async (mutation) => {
            let data: unknown = mutation;
            if (
              Array.isArray(mutation) &&
              mutation.every((entry) => Array.isArray(entry) && entry.length === 3 && typeof entry[0] === 'string')
            ) {
              const envelope = valid();
              for (const [field, value, remove] of mutation as [string, unknown, boolean][]) {
                const parts = field.split('.');
                let target = envelope;
                for (const part of parts.slice(0, -1)) target = target?.[part];
                if (target && typeof target === 'object') {
                  if (remove) delete target[parts.at(-1)!];
                  else target[parts.at(-1)!] = value;
                }
              }
              data = envelope;
            }
            const check = parseEnvelope(data);
            if (!check.ok) expect(check.message).toMatch(/^malformed /);
            const identity = repoIdentity(fixture.root);
            const repository = servedRepository(identity.id, identity.root, fakeFingerprinter(), path.join(fixture.root, '.git', 'baton'));
            const before = snapshotTree(fixture.root, (relative) => relative.startsWith(path.join('.git', 'baton')));
            try {
              const processed = await processJobData(repository, data);
              expect(check.ok).toBe(true);
              expect(['running', 'paused', 'completed', 'failed']).toContain(processed.result.status);
            } catch (error) {
              if (check.ok) {
                // A valid envelope may only be refused for naming another repository.
                expect(error).toBeInstanceOf(UnrecoverableError);
                expect((error as Error).message).toContain('refused, nothing was changed');
              } else {
                expect(error).toBeInstanceOf(UnrecoverableError);
                expect((error as Error).message).toContain('nothing was changed');
              }
            }
            for (const changed of changedPaths(
              before,
              snapshotTree(fixture.root, (relative) => relative.startsWith(path.join('.git', 'baton'))),
            )) {
              expect(allowedWrite(path.join(fixture.root, changed)), changed).toBe(true);
            }
          },
        ),
        params(1000),
      );
    },
    FUZZ_TIMEOUT,
  );
});
