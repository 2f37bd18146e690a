import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import {
  TASK_ID,
  approvedReview,
  failedResult,
  reviewWithVerdict,
  taskMd,
  tempRepo,
  uniquePrefix,
  writeApprovedThroughCode,
  writeArtifact,
  writeTask,
} from '../support/fixtures.ts';
import type { Fixture } from '../support/fixtures.ts';
import { BATON_BIN, batonEnv, jsonOf, runBaton, runProcess } from '../support/processes.ts';
import { missingTool, requireHere } from '../support/requirements.ts';

// Where baton used to differ from agent-infra 0.9.2, through the real
// `baton task` command. Read-only intents need no Redis; state-changing ones run with `--worker inline`.

const redisUrl = inject('redisUrl');
const NO_REDIS = ['--redis', 'unix:///nonexistent/baton-test.sock'];
const INVALID_TASK_REF = (ref: string) =>
  `'${ref}' is not a valid short id or TASK-id; expected bare digits, '#N', or 'TASK-YYYYMMDD-HHMMSS'`;

let fixture: Fixture;

afterEach(() => fixture?.cleanup());

function setUp(content?: string): string {
  fixture = tempRepo();
  return writeTask(fixture, TASK_ID, content);
}

function task(args: readonly string[]) {
  return runBaton(['task', ...args], { cwd: fixture.root, env: batonEnv({ redisUrl, prefix: uniquePrefix('fid') }) });
}

/** Every file of the task directory with its bytes: to show a command changed nothing. */
function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(
    fs.readdirSync(dir).map((name) => {
      const file = path.join(dir, name);
      return [name, fs.statSync(file).isDirectory() ? '<dir>' : fs.readFileSync(file, 'utf8')];
    }),
  );
}

function ledger(heading: string, rows: string): string {
  return `${heading}\n\n| id | stage | round | severity | status | evidence |\n|----|-------|-------|----------|--------|----------|\n${rows}`;
}

describe('the ledger heading is found as upstream finds it (^##\\s+<heading>\\s*$)', () => {
  it.each([
    ['a trailing space', '## Review Disagreement Ledger '],
    ['extra spaces after ##', '##   Review Disagreement Ledger'],
    ['the Chinese heading with spaces', '##  审查分歧账本\t '],
  ])('%s: an open code blocker stops the commit with ORCHESTRATION_LEDGER_BLOCKED', async (_label, heading) => {
    const dir = setUp(taskMd(TASK_ID, 'code-review', ledger(heading, '| CD-1 | code | 1 | blocker | open | review-code.md#CD-1 |\n')));
    writeApprovedThroughCode(dir);
    const before = snapshot(dir);
    const run = await task([TASK_ID, 'route', ...NO_REDIS]);
    expect(run.code).toBe(1);
    expect(jsonOf(run)).toEqual(
      failedResult('ORCHESTRATION_LEDGER_BLOCKED', 'code review ledger has unresolved findings or human decisions'),
    );
    expect(snapshot(dir)).toEqual(before);
  });

  it('the same ledger with the blocker closed routes to commit', async () => {
    const dir = setUp(
      taskMd(
        TASK_ID,
        'code-review',
        ledger('## Review Disagreement Ledger ', '| CD-1 | code | 1 | blocker | closed | review-code.md#CD-1 |\n'),
      ),
    );
    writeApprovedThroughCode(dir);
    const run = await task([TASK_ID, 'route', ...NO_REDIS]);
    expect(run.code).toBe(0);
    expect(jsonOf(run).next).toEqual({ action: 'commit', role: 'executor', stage: 'commit', round: 1, artifact: 'commit' });
  });
});

describe('a latest review round that cannot be read fails instead of inventing a rework round', () => {
  const approved = reviewWithVerdict('analysis.md', 'Approved', '0 blockers, 0 majors, 0 minors');

  async function expectRouteUnknown(dir: string, message: string) {
    const before = snapshot(dir);
    const run = await task([TASK_ID, 'route', ...NO_REDIS]);
    expect(run.code).toBe(1);
    expect(jsonOf(run)).toEqual(failedResult('ORCHESTRATION_ROUTE_UNKNOWN', `cannot determine a unique lifecycle action: ${message}`));
    expect(snapshot(dir)).toEqual(before);
  }

  it('a stray review-analysis-r03.md next to rounds 1–2 (round 3 is review-analysis-r3.md, absent)', async () => {
    const dir = setUp();
    writeArtifact(dir, 'analysis.md', '# Analysis\n', 60);
    writeArtifact(dir, 'review-analysis.md', reviewWithVerdict('analysis.md', 'Changes Requested'), 50);
    writeArtifact(dir, 'review-analysis-r2.md', approved, 40);
    writeArtifact(dir, 'review-analysis-r03.md', approved, 30);
    await expectRouteUnknown(dir, 'latest review-analysis round 3 (review-analysis-r3.md) cannot be read (ENOENT)');
    // Without the stray file the same directory routes on to the plan.
    fs.rmSync(path.join(dir, 'review-analysis-r03.md'));
    const run = await task([TASK_ID, 'route', ...NO_REDIS]);
    expect(jsonOf(run).next).toMatchObject({ action: 'plan-task', round: 1 });
  });

  it('a directory named like the latest review', async () => {
    const dir = setUp();
    writeArtifact(dir, 'analysis.md', '# Analysis\n', 60);
    writeArtifact(dir, 'review-analysis.md', approvedReview('analysis.md'), 50);
    fs.mkdirSync(path.join(dir, 'review-analysis-r2.md'));
    await expectRouteUnknown(dir, 'latest review-analysis round 2 (review-analysis-r2.md) cannot be read (EISDIR)');
  });

  it('an absurd review round (no safe next round to name)', async () => {
    const dir = setUp();
    writeArtifact(dir, 'analysis.md', '# Analysis\n', 60);
    writeArtifact(dir, 'review-analysis-r99999999999999999999.md', approved, 50);
    await expectRouteUnknown(dir, 'the next review-analysis round after 100000000000000000000 is out of range');
  });

  it('an absurd executor round (the rework round would not be a safe integer)', async () => {
    const dir = setUp();
    writeArtifact(dir, 'analysis.md', '# Analysis\n', 60);
    writeArtifact(dir, `analysis-r${Number.MAX_SAFE_INTEGER}.md`, '# Analysis\n', 55);
    writeArtifact(dir, 'review-analysis.md', reviewWithVerdict(`analysis-r${Number.MAX_SAFE_INTEGER}.md`, 'Changes Requested'), 50);
    await expectRouteUnknown(dir, `the next analysis round after ${Number.MAX_SAFE_INTEGER} is out of range`);
  });
});

describe('a task.md that cannot be read', () => {
  it('a task.md its user may not read → ORCHESTRATION_TASK_READ_FAILED with EACCES, exit 1 (as an unprivileged user: root reads anything)', async (context) => {
    const asRoot = process.getuid?.() === 0;
    requireHere(context, asRoot ? missingTool(spawnSync('setpriv', ['--version']).status === 0, 'setpriv', 'util-linux') : null);
    fixture = tempRepo();
    const file = path.join(writeTask(fixture, TASK_ID), 'task.md');
    // The user `nobody` may enter the repository but not read task.md.
    fs.chmodSync(fixture.root, 0o755);
    fs.chmodSync(file, 0o000);
    const asNobody = asRoot ? ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', process.execPath] : [process.execPath];
    const run = await runProcess(asNobody[0]!, [...asNobody.slice(1), BATON_BIN, 'task', TASK_ID, 'route', ...NO_REDIS], {
      cwd: fixture.root,
      env: { ...batonEnv({ redisUrl, prefix: uniquePrefix('fid') }), HOME: fixture.root },
    });
    expect(run.code, run.stderr).toBe(1);
    expect(jsonOf(run)).toEqual(failedResult('ORCHESTRATION_TASK_READ_FAILED', `Error: EACCES: permission denied, open '${file}'`));
  });

  it('a directory named task.md → ORCHESTRATION_TASK_READ_FAILED with String(error), exit 1', async () => {
    fixture = tempRepo();
    fs.mkdirSync(path.join(fixture.taskDir(), 'task.md'), { recursive: true });
    const run = await task([TASK_ID, 'route', ...NO_REDIS]);
    expect(run.code).toBe(1);
    expect(jsonOf(run)).toEqual(failedResult('ORCHESTRATION_TASK_READ_FAILED', 'Error: EISDIR: illegal operation on a directory, read'));
  });
});

describe('the CLI grammar of task-orchestration', () => {
  async function expectUsageError(args: string[], message: string) {
    const run = await task(args);
    expect(run.code).toBe(2);
    expect(jsonOf(run)).toEqual({ status: 'failed', changed: false, error: { code: 'ORCHESTRATION_PAYLOAD_INVALID', message } });
    expect(run.stderr).toContain('Usage: baton task');
  }

  it('a stray positional is an unknown option', async () => {
    setUp();
    await expectUsageError([TASK_ID, 'route', 'foo', ...NO_REDIS], "unknown option 'foo'");
  });

  it('positions decide: `task --client x` is the ref --client with the unknown intent x', async () => {
    setUp();
    await expectUsageError(['--client', 'x', ...NO_REDIS], "unknown intent 'x'");
    await expectUsageError(['--client'], 'task ref and intent are required');
  });

  it('--before-fingerprint is accepted and ignored', async () => {
    setUp();
    const run = await task([TASK_ID, 'route', '--before-fingerprint', 'abc', ...NO_REDIS]);
    expect(run.code).toBe(0);
    expect(jsonOf(run)).toMatchObject({ status: 'running', next: { action: 'analyze-task' } });
  });

  it.each([
    ['', INVALID_TASK_REF('')],
    ['x'.repeat(300), INVALID_TASK_REF('x'.repeat(300))],
  ])('task ref %j → INVALID_TASK_REF, exit 1, also for intents that change a run (no Redis needed)', async (ref, message) => {
    setUp();
    for (const intent of ['route', 'advance']) {
      const run = await task([ref, intent, ...NO_REDIS]);
      expect(run.code).toBe(1);
      expect(jsonOf(run)).toEqual({
        status: 'failed',
        changed: false,
        taskId: null,
        run: null,
        next: null,
        error: { code: 'INVALID_TASK_REF', message },
      });
    }
  });

  it('integer-valued numbers, `pause --message -h`, and --client on an explicit hook-start, applied by a worker', async () => {
    const dir = setUp();
    const begin = await task([TASK_ID, 'begin-or-resume', '--max-steps', '1e3', '--worker', 'inline']);
    expect(begin.code).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'orchestration.json'), 'utf8'))).toMatchObject({ status: 'running', maxSteps: 1000 });

    const paused = await task([
      TASK_ID,
      'pause',
      '--code',
      'HOOK_FAILED',
      '--message',
      '-h',
      '--recoverable',
      'true',
      '--worker',
      'inline',
    ]);
    expect(paused.code).toBe(0);
    expect(jsonOf(paused)).toMatchObject({
      status: 'paused',
      changed: true,
      run: { pause: { code: 'HOOK_FAILED', message: '-h', recoverable: true } },
    });

    // Upstream ignores --client when a task ref is given: the intent reaches the run (no pending delegation).
    const start = await task([
      TASK_ID,
      'hook-start',
      '--client',
      'foo',
      '--native-agent',
      'agent-infra-lifecycle-executor',
      '--child-id',
      'c',
      '--parent-id',
      'p',
      '--spawn-mode',
      'fresh',
      '--worker',
      'inline',
    ]);
    expect(start.code).toBe(1);
    expect(jsonOf(start).error).toEqual({ code: 'ORCHESTRATION_DELEGATION_MISSING', message: 'no pending delegation exists' });

    // An explicit hook-stop with an integer-valued exit code: also no pending delegation, not a usage error.
    const stop = await task([TASK_ID, 'hook-stop', '--child-id', 'c', '--exit-code', '0.0', '--worker', 'inline']);
    expect(stop.code).toBe(1);
    expect(jsonOf(stop).error).toEqual({ code: 'ORCHESTRATION_DELEGATION_MISSING', message: 'no pending delegation exists' });
  }, 60_000);
});

describe('the run file keeps what baton does not know', () => {
  function receipt(overrides: Record<string, unknown>): Record<string, unknown> {
    return {
      taskId: TASK_ID,
      runId: 'run-1',
      role: 'executor',
      stage: 'commit',
      round: 1,
      artifact: 'commit',
      client: 'claude-code',
      requestedModel: null,
      beforeFingerprint: 'before',
      id: 'receipt-1',
      actualModel: null,
      modelFallbackReason: null,
      parentId: 'parent',
      childId: 'child-1',
      spawnMode: 'fresh',
      agent: null,
      status: 'activated',
      afterFingerprint: null,
      changedPaths: [],
      createdAt: '2026-01-01T00:00:00.000Z',
      activatedAt: '2026-01-01T00:00:01.000Z',
      sealedAt: null,
      consumedAt: null,
      ...overrides,
    };
  }

  /** A run file from a newer tool: unknown keys at every level, some in between known ones, and a fractional stepCount. */
  function futureRun(status: 'running' | 'paused', pending: Record<string, unknown>): Record<string, unknown> {
    return {
      schemaVersion: 1,
      taskId: TASK_ID,
      runId: 'run-1',
      modelPolicy: { executor: { model: 'opus', reasoningEffort: 'high' } },
      status,
      nextStage: 'commit',
      stepCount: 1.5,
      maxSteps: 24,
      baseline: '',
      pendingDelegation: pending,
      receipts: [
        receipt({
          id: 'receipt-0',
          stage: 'code',
          artifact: 'code.md',
          childId: 'child-0',
          status: 'consumed',
          agent: 'claude',
          hostEvidence: { revision: 3 },
          consumedAt: '2026-01-01T00:00:02.000Z',
        }),
      ],
      pause:
        status === 'paused' ? { code: 'HOOK_FAILED', message: 'hook crashed', recoverable: true, recoveryHistory: [{ at: 'x' }] } : null,
      commitAuthorization: { issuedAt: '2026-01-01T00:00:00.500Z', token: 'tok-1', consumedAt: null },
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      recoveryHistory: [],
    };
  }

  /** Every key path of a JSON value, in order: equal lists mean the same keys in the same order. */
  function keyPaths(value: unknown, prefix = ''): string[] {
    if (Array.isArray(value)) return value.flatMap((item, index) => keyPaths(item, `${prefix}[${index}]`));
    if (value === null || typeof value !== 'object') return [];
    return Object.entries(value).flatMap(([key, inner]) => [`${prefix}.${key}`, ...keyPaths(inner, `${prefix}.${key}`)]);
  }

  function writeRun(dir: string, run: Record<string, unknown>): string {
    const file = path.join(dir, 'orchestration.json');
    fs.writeFileSync(file, `${JSON.stringify(run, null, 2)}\n`);
    return file;
  }

  it('stage-completed on a paused run: unknown keys inside pause, receipts, commitAuthorization and the run survive, in order', async () => {
    const dir = setUp();
    const original = futureRun('paused', receipt({ dispatch: { at: '2026-01-01T00:00:00.700Z' } }));
    const file = writeRun(dir, original);
    const run = await task([TASK_ID, 'stage-completed', '--agent', 'claude', '--worker', 'inline']);
    expect(run.code).toBe(0);
    const after = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, any>;
    // Every key kept in its place; baton's one addition (the stop-grace clock) comes last in the receipt.
    const expected = {
      ...original,
      pendingDelegation: {
        ...(original.pendingDelegation as object),
        status: 'stage-completed',
        agent: 'claude',
        stageCompletedAt: after.pendingDelegation.stageCompletedAt,
      },
      updatedAt: after.updatedAt,
    };
    expect(keyPaths(after)).toEqual(keyPaths(expected));
    expect(after).toEqual(expected);
    // Taken from the clock just before the run's updatedAt (the same event, two readings of the clock).
    expect(Date.parse(after.pendingDelegation.stageCompletedAt)).toBeLessThanOrEqual(Date.parse(after.updatedAt));
    expect(Date.parse(after.pendingDelegation.stageCompletedAt)).toBeGreaterThan(Date.parse(original.updatedAt as string));
    expect(after.updatedAt).not.toBe(original.updatedAt);
    // The printed result carries the same run, keys and order included.
    expect(keyPaths(jsonOf(run).run)).toEqual(keyPaths(after));
  }, 60_000);

  it('advance of a sealed commit: stepCount 1.5 counts on, the consumed receipt joins the history with its unknown keys', async () => {
    const dir = setUp();
    const pending = receipt({
      dispatch: { at: 'x' },
      status: 'sealed',
      agent: 'claude',
      afterFingerprint: 'after',
      sealedAt: '2026-01-01T00:00:03.000Z',
    });
    const original = futureRun('running', pending);
    const file = writeRun(dir, original);
    const run = await task([TASK_ID, 'advance', '--worker', 'inline']);
    expect(run.code).toBe(0);
    const after = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, any>;
    expect(after).toMatchObject({
      status: 'completed',
      stepCount: 2.5,
      pendingDelegation: null,
      modelPolicy: original.modelPolicy,
      recoveryHistory: [],
    });
    expect(Object.keys(after)).toEqual(Object.keys(original));
    expect(after.receipts).toHaveLength(2);
    expect(after.receipts[0]).toEqual((original.receipts as unknown[])[0]);
    expect(after.receipts[1]).toEqual({ ...pending, status: 'consumed', consumedAt: after.receipts[1].consumedAt });
    expect(Object.keys(after.receipts[1])).toEqual(Object.keys(pending));
    expect(after.commitAuthorization).toEqual({
      issuedAt: '2026-01-01T00:00:00.500Z',
      token: 'tok-1',
      consumedAt: after.receipts[1].consumedAt,
    });
    expect(Object.keys(after.commitAuthorization)).toEqual(['issuedAt', 'token', 'consumedAt']);
  }, 60_000);
});
