import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyEvent } from '../../src/core/engine.ts';
import { checkSpawn } from '../../src/hooks/spawnCheck.ts';
import {
  TASK_ID,
  TASK_ID_2,
  approvedReview,
  engineHarness,
  failedResult,
  fakeFingerprinter,
  readRun,
  reviewWithVerdict,
  taskMd,
  tempRepo,
  useTaskPerTest,
  writeApprovedThroughCode,
  writeArtifact,
  writeTask,
} from '../support/fixtures.ts';
import type { Fixture } from '../support/fixtures.ts';
import { EXAMPLE_TASK_DIR } from '../support/fixturePaths.ts';
import { RECEIPT_KEYS, runRecord } from '../support/runRecords.ts';
import { completeStage, nativeStart, nativeStop } from '../support/engineEvents.ts';

// Scenarios of docs/scenarios.md §1 (Orchestration) and docs/architecture.md's decisions, through the
// engine's one entry point with an injected clock, id source and fingerprints.

let fixture: Fixture;
let dir: string;
useTaskPerTest((made) => ({ fixture, dir } = made));

const T = '2026-01-01T00:00:00.000Z';

/** A recoverable pause as the run records it. */
const recoverablePause = (code: string, message: string) => ({ code, message, recoverable: true });

/** task.md at code-review whose Review Disagreement Ledger holds the one row `row` (after `before`). */
function writeLedgerTask(row: string, before = ''): void {
  const ledger = `## Review Disagreement Ledger\n\n| id | stage | round | severity | status | evidence |\n|----|-------|-------|----------|--------|----------|\n${row}\n`;
  writeTask(fixture, TASK_ID, taskMd(TASK_ID, 'code-review', `${before}${ledger}`));
}

async function begin(h = engineHarness(fixture, { ids: ['run-1'] })) {
  const result = await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
  expect(result.status).toBe('running');
  return h;
}

async function prepareActivated(role: 'executor' | 'reviewer', client: 'claude-code' | 'codex' = 'claude-code') {
  const h = await begin(engineHarness(fixture, { ids: ['run-1', 'receipt-1'] }));
  const prepared = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client });
  expect(prepared.status).toBe('running');
  const activated = await h.apply({
    intent: 'hook-start',
    taskRef: 'auto',
    client,
    nativeAgent: `agent-infra-lifecycle-${role}`,
    childId: 'child-1',
    parentId: 'parent-1',
    spawnMode: 'fresh',
  });
  expect(activated.status).toBe('running');
  return h;
}

describe('beginOrResume', () => {
  it('1: creates a run once; a second call changes nothing and keeps runId run-1', async () => {
    const h = engineHarness(fixture, { ids: ['run-1', 'run-2'] });
    const first = await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    expect(first).toMatchObject({ status: 'running', changed: true, taskId: TASK_ID, error: null });
    const second = await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    expect(second.changed).toBe(false);
    expect(second.run?.runId).toBe('run-1');
    expect(readRun(dir)).toEqual(runRecord());
  });

  it('writes 2-space JSON with a trailing newline', async () => {
    await begin();
    const text = fs.readFileSync(path.join(dir, 'orchestration.json'), 'utf8');
    expect(text.endsWith('}\n')).toBe(true);
    expect(text).toContain('\n  "schemaVersion": 1,');
  });

  it('takes --max-steps for a new run', async () => {
    const h = engineHarness(fixture);
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, maxSteps: 3 });
    expect(readRun(dir).maxSteps).toBe(3);
  });

  it('resumes a recoverable pause without a pending delegation, and clears the pause', async () => {
    const h = await begin();
    await h.apply({ intent: 'pause', taskRef: TASK_ID, code: 'HOOK_FAILED', message: 'x', recoverable: true });
    const resumed = await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    expect(resumed).toMatchObject({ status: 'running', changed: true });
    expect(readRun(dir).pause).toBeNull();
  });

  it('does not resume a non-recoverable pause', async () => {
    const h = await begin();
    await h.apply({ intent: 'pause', taskRef: TASK_ID, code: 'HUMAN', message: 'stop', recoverable: false });
    const again = await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    expect(again).toMatchObject({ status: 'paused', changed: false });
    // 0.9.2's shape (error null), and baton says why in warnings.
    expect(again.error).toBeNull();
    expect(again.warnings).toEqual(['the run is paused (HUMAN: stop); begin-or-resume does not resume it: the pause is not recoverable']);
  });

  it('says what keeps a paused run with a pending delegation paused, and the way out', async () => {
    const h = await prepareActivated('executor');
    await h.apply(completeStage({ stage: 'plan', agent: 'claude' }));
    const again = await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    expect(again).toMatchObject({ status: 'paused', changed: false, error: null });
    expect(again.warnings).toEqual([
      'the run is paused (DELEGATION_STAGE_MISMATCH: stage completion identity does not match the active delegation ' +
        '(expected --stage analysis --round 1 --artifact analysis.md; given --stage plan --round 1 --artifact analysis.md)); ' +
        'begin-or-resume does not resume it while delegation receipt-1 is pending (activated: agent-infra-lifecycle-executor (child child-1) works on analysis r1; waiting for its complete-stage). ' +
        `To go on without that delegation: baton task ${TASK_ID} abort --reason 'give up delegation receipt-1', then baton task ${TASK_ID} begin-or-resume`,
    ]);
  });
});

describe('route', () => {
  it('3: no artifacts → analyze-task round 1', async () => {
    const result = await engineHarness(fixture).apply({ intent: 'route', taskRef: TASK_ID });
    expect(result).toMatchObject({ status: 'running', changed: false, run: null, error: null });
    expect(result.next).toEqual({ action: 'analyze-task', role: 'executor', stage: 'analysis', round: 1, artifact: 'analysis.md' });
  });

  it('4: analysis.md only → review-analysis round 1', async () => {
    writeArtifact(dir, 'analysis.md', '# A\n');
    const result = await engineHarness(fixture).apply({ intent: 'route', taskRef: TASK_ID });
    expect(result.next).toEqual({
      action: 'review-analysis',
      role: 'reviewer',
      stage: 'review-analysis',
      round: 1,
      artifact: 'review-analysis.md',
    });
  });

  it('5: approved analysis and plan reviews, no code → code-task round 1', async () => {
    writeArtifact(dir, 'analysis.md', '# A\n', 40);
    writeArtifact(dir, 'review-analysis.md', approvedReview('analysis.md'), 30);
    writeArtifact(dir, 'plan.md', '# P\n', 20);
    writeArtifact(dir, 'review-plan.md', approvedReview('plan.md'), 10);
    const result = await engineHarness(fixture).apply({ intent: 'route', taskRef: TASK_ID });
    expect(result.next).toEqual({ action: 'code-task', role: 'executor', stage: 'code', round: 1, artifact: 'code.md' });
  });

  it('7: approved code review with manual validation 1 → ORCHESTRATION_MANUAL_VALIDATION_PENDING', async () => {
    writeApprovedThroughCode(dir, 1);
    const result = await engineHarness(fixture).apply({ intent: 'route', taskRef: TASK_ID });
    expect(result).toMatchObject({
      status: 'failed',
      changed: false,
      taskId: TASK_ID,
      error: { code: 'ORCHESTRATION_MANUAL_VALIDATION_PENDING', message: 'manual validation must be completed before commit' },
    });
  });

  it('8: open code blocker in the ledger → ORCHESTRATION_LEDGER_BLOCKED', async () => {
    writeLedgerTask('| CD-1 | code | 1 | blocker | open | review-code.md#CD-1 |', '# Task\n\n');
    writeApprovedThroughCode(dir, 0);
    const result = await engineHarness(fixture).apply({ intent: 'route', taskRef: TASK_ID });
    expect(result.error).toEqual({
      code: 'ORCHESTRATION_LEDGER_BLOCKED',
      message: 'code review ledger has unresolved findings or human decisions',
    });
  });

  it('ledger rows of other stages do not block commit', async () => {
    writeLedgerTask('| PL-1 | plan | 1 | blocker | open | review-plan.md#PL-1 |');
    writeApprovedThroughCode(dir, 0);
    const result = await engineHarness(fixture).apply({ intent: 'route', taskRef: TASK_ID });
    expect(result.next?.action).toBe('commit');
  });

  // 18's unreadable task.md → ORCHESTRATION_TASK_READ_FAILED (EACCES) runs as an unprivileged user,
  // through the CLI: test/cli/upstreamFidelity.test.ts "a task.md that cannot be read".
  it('18: malformed frontmatter → ORCHESTRATION_TASK_INVALID', async () => {
    writeTask(fixture, TASK_ID, '---\nid: [1, 2]\n---\n');
    const invalid = await engineHarness(fixture).apply({ intent: 'route', taskRef: TASK_ID });
    expect(invalid.error).toEqual({ code: 'ORCHESTRATION_TASK_INVALID', message: "frontmatter key 'id' is not a scalar" });
    writeTask(fixture, TASK_ID, 'no frontmatter');
    const missing = await engineHarness(fixture).apply({ intent: 'route', taskRef: TASK_ID });
    expect(missing.error).toEqual({ code: 'ORCHESTRATION_TASK_INVALID', message: 'task.md frontmatter is missing' });
  });

  it('18b: task.md that is a directory → ORCHESTRATION_TASK_READ_FAILED (String(error))', async () => {
    // As upstream: the task exists (something named task.md is there), reading it fails.
    fs.rmSync(path.join(dir, 'task.md'));
    fs.mkdirSync(path.join(dir, 'task.md'));
    const result = await engineHarness(fixture).apply({ intent: 'route', taskRef: TASK_ID });
    expect(result).toEqual(failedResult('ORCHESTRATION_TASK_READ_FAILED', 'Error: EISDIR: illegal operation on a directory, read'));
  });

  it('19: review-code without a manual-validation number → ORCHESTRATION_REVIEW_INVALID; ledger id XX-1 → ORCHESTRATION_LEDGER_INVALID', async () => {
    writeApprovedThroughCode(dir, null);
    const noNumber = await engineHarness(fixture).apply({ intent: 'route', taskRef: TASK_ID });
    expect(noNumber.error).toEqual({
      code: 'ORCHESTRATION_REVIEW_INVALID',
      message: 'latest code review has no numeric manual-validation count',
    });
    writeLedgerTask('| XX-1 | code | 1 | blocker | open | review-code.md#XX-1 |');
    writeApprovedThroughCode(dir, 0);
    const badLedger = await engineHarness(fixture).apply({ intent: 'route', taskRef: TASK_ID });
    expect(badLedger.error?.code).toBe('ORCHESTRATION_LEDGER_INVALID');
    expect(badLedger.error?.message).toContain('XX-1');
  });

  it('27: Changes Requested binding the latest analysis → analyze-task round 2; placeholder counts behave the same', async () => {
    writeArtifact(dir, 'analysis.md', '# A\n', 20);
    writeArtifact(dir, 'review-analysis.md', reviewWithVerdict('analysis.md', 'Changes Requested'), 10);
    const changes = await engineHarness(fixture).apply({ intent: 'route', taskRef: TASK_ID });
    expect(changes.next).toEqual({ action: 'analyze-task', role: 'executor', stage: 'analysis', round: 2, artifact: 'analysis-r2.md' });
    writeArtifact(
      dir,
      'review-analysis.md',
      reviewWithVerdict('analysis.md', 'Approved', '{unresolved-blockers} blockers, {unresolved-major} majors, {unresolved-minor} minors'),
      10,
    );
    const placeholders = await engineHarness(fixture).apply({ intent: 'route', taskRef: TASK_ID });
    expect(placeholders.next).toEqual(changes.next);
  });

  it('routes the example task (analysis r2 approved) to plan-task round 1', async () => {
    const example = EXAMPLE_TASK_DIR;
    // A fixture of the repository: missing, the test fails rather than passing without routing anything.
    expect(fs.existsSync(path.join(example, 'task.md')), example).toBe(true);
    fs.cpSync(example, dir, { recursive: true });
    for (const [name, age] of [
      ['analysis.md', 40],
      ['review-analysis.md', 30],
      ['analysis-r2.md', 20],
      ['review-analysis-r2.md', 10],
    ] as const) {
      const when = new Date(Date.now() - age * 1000);
      fs.utimesSync(path.join(dir, name), when, when);
    }
    const result = await engineHarness(fixture).apply({ intent: 'route', taskRef: TASK_ID });
    expect(result.next).toEqual({ action: 'plan-task', role: 'executor', stage: 'plan', round: 1, artifact: 'plan.md' });
    expect(result.run?.pendingDelegation?.status).toBe('prepared');
  });

  it("decision 4: reports the run's real status (paused), not always running", async () => {
    const h = await begin();
    await h.apply({ intent: 'pause', taskRef: TASK_ID, code: 'HOOK_FAILED', message: 'x', recoverable: true });
    const routed = await h.apply({ intent: 'route', taskRef: TASK_ID });
    expect(routed.status).toBe('paused');
    expect(routed.next?.action).toBe('analyze-task');
  });
});

describe('status', () => {
  it('14: no orchestration.json → ORCHESTRATION_RUN_MISSING', async () => {
    const result = await engineHarness(fixture).apply({ intent: 'status', taskRef: TASK_ID });
    expect(result).toEqual({
      status: 'failed',
      changed: false,
      taskId: TASK_ID,
      run: null,
      next: null,
      error: { code: 'ORCHESTRATION_RUN_MISSING', message: 'no orchestration run exists' },
    });
  });

  it('decision 2: a corrupt orchestration.json → ORCHESTRATION_STATE_INVALID', async () => {
    fs.writeFileSync(path.join(dir, 'orchestration.json'), '{"schemaVersion": 1, "status": "runn');
    const result = await engineHarness(fixture).apply({ intent: 'status', taskRef: TASK_ID });
    expect(result.error?.code).toBe('ORCHESTRATION_STATE_INVALID');
    expect(result.error?.message).toContain('is not valid JSON');
    fs.writeFileSync(path.join(dir, 'orchestration.json'), JSON.stringify({ schemaVersion: 1, status: 'exploded' }));
    const schema = await engineHarness(fixture).apply({ intent: 'status', taskRef: TASK_ID });
    expect(schema.error?.code).toBe('ORCHESTRATION_STATE_INVALID');
    expect(schema.error?.message).toContain('does not match orchestration schema v1');
    fs.writeFileSync(path.join(dir, 'orchestration.json'), JSON.stringify({ schemaVersion: 3 }));
    const version = await engineHarness(fixture).apply({ intent: 'status', taskRef: TASK_ID });
    expect(version.error?.message).toContain('unsupported schemaVersion 3');
  });
});

describe('prepare', () => {
  it('2: client gemini-cli → ORCHESTRATION_CLIENT_UNSUPPORTED, nothing changes', async () => {
    const h = await begin();
    const before = fs.readFileSync(path.join(dir, 'orchestration.json'), 'utf8');
    const result = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'gemini-cli' });
    expect(result).toMatchObject({
      status: 'failed',
      changed: false,
      error: { code: 'ORCHESTRATION_CLIENT_UNSUPPORTED', message: "client 'gemini-cli' does not support lifecycle orchestration" },
    });
    expect(fs.readFileSync(path.join(dir, 'orchestration.json'), 'utf8')).toBe(before);
  });

  it('rejects an unknown client with a usage error instead of throwing', async () => {
    const h = await begin();
    const result = await applyEvent(
      { intent: 'prepare', taskRef: TASK_ID, client: 'vim' as never },
      { repoRoot: fixture.root, fingerprinter: fakeFingerprinter() },
    );
    expect(result.result.error).toEqual({ code: 'ORCHESTRATION_PAYLOAD_INVALID', message: "unknown client 'vim'" });
    expect(h).toBeDefined();
  });

  it('records a prepared receipt with the before-fingerprint and next', async () => {
    const h = await begin(engineHarness(fixture, { ids: ['run-1', 'receipt-1'] }));
    const result = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code', requestedModel: 'opus' });
    expect(result).toMatchObject({ status: 'running', changed: true, next: { action: 'analyze-task', artifact: 'analysis.md' } });
    const receipt = readRun(dir).pendingDelegation!;
    expect(Object.keys(receipt)).toEqual(RECEIPT_KEYS);
    expect(receipt).toMatchObject({
      id: 'receipt-1',
      status: 'prepared',
      beforeFingerprint: 'before-tree',
      requestedModel: 'opus',
      client: 'claude-code',
    });
    expect(readRun(dir).nextStage).toBe('analysis');
  });

  it('15: paused or completed run → ORCHESTRATION_RUN_NOT_RUNNING; a second prepare → ORCHESTRATION_DELEGATION_BUSY', async () => {
    const h = await begin();
    const first = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    expect(first.status).toBe('running');
    const second = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    expect(second.error).toEqual({ code: 'ORCHESTRATION_DELEGATION_BUSY', message: 'the run already has a pending delegation' });
    await h.apply({ intent: 'pause', taskRef: TASK_ID, code: 'HOOK_FAILED', message: 'x', recoverable: true });
    const paused = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    expect(paused.error).toEqual({ code: 'ORCHESTRATION_RUN_NOT_RUNNING', message: 'a running orchestration is required' });
    const none = await engineHarness(fixture).apply({ intent: 'prepare', taskRef: TASK_ID_2, client: 'claude-code' });
    expect(none.error?.code).toBe('TASK_NOT_FOUND');
  });

  it("repository-wide guard: another task's pending delegation (even a paused run's) blocks prepare", async () => {
    const other = writeTask(fixture, TASK_ID_2);
    const h = await begin();
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID_2 });
    await h.apply({ intent: 'prepare', taskRef: TASK_ID_2, client: 'codex' });
    await h.apply({ intent: 'pause', taskRef: TASK_ID_2, code: 'HUMAN', message: 'wait', recoverable: true });
    const blocked = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    expect(blocked.error).toEqual({
      code: 'ORCHESTRATION_DELEGATION_BUSY',
      message: 'the repository already has a pending lifecycle delegation',
    });
    expect(readRun(other).pendingDelegation?.status).toBe('prepared');
  });

  it('max steps: stepCount >= maxSteps pauses the run recoverably', async () => {
    const h = engineHarness(fixture);
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, maxSteps: 1 });
    const file = path.join(dir, 'orchestration.json');
    fs.writeFileSync(file, JSON.stringify({ ...readRun(dir), stepCount: 1 }, null, 2));
    const result = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    expect(result).toMatchObject({ status: 'paused', changed: true });
    expect(readRun(dir).pause).toEqual(recoverablePause('ORCHESTRATION_MAX_STEPS', 'maximum orchestration steps reached'));
  });

  it('17: capture throws → ORCHESTRATION_SNAPSHOT_FAILED, orchestration.json unchanged', async () => {
    const fingerprinter = fakeFingerprinter({
      capture: () => {
        throw new Error('disk on fire');
      },
    });
    const h = await begin(engineHarness(fixture, { fingerprinter }));
    const before = fs.readFileSync(path.join(dir, 'orchestration.json'));
    const result = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    expect(result.error).toEqual({ code: 'ORCHESTRATION_SNAPSHOT_FAILED', message: 'disk on fire' });
    expect(fs.readFileSync(path.join(dir, 'orchestration.json'))).toEqual(before);
  });

  it('an unreadable latest review round → ORCHESTRATION_ROUTE_UNKNOWN: prepare prepares nothing, captures nothing', async () => {
    writeArtifact(dir, 'analysis.md', '# A\n', 30);
    writeArtifact(dir, 'review-analysis.md', reviewWithVerdict('analysis.md', 'Changes Requested'), 20);
    writeArtifact(dir, 'review-analysis-r2.md', reviewWithVerdict('analysis.md', 'Approved', '0 blockers, 0 majors, 0 minors'), 10);
    writeArtifact(dir, 'review-analysis-r03.md', '# stray\n', 5);
    const h = await begin();
    const before = fs.readFileSync(path.join(dir, 'orchestration.json'), 'utf8');
    const result = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    expect(result).toEqual(
      failedResult(
        'ORCHESTRATION_ROUTE_UNKNOWN',
        'cannot determine a unique lifecycle action: latest review-analysis round 3 (review-analysis-r3.md) cannot be read (ENOENT)',
      ),
    );
    expect(fs.readFileSync(path.join(dir, 'orchestration.json'), 'utf8')).toBe(before);
    expect(h.fingerprinter.captures).toBe(0);
  });

  it('a commit-gate failure is returned by prepare unchanged', async () => {
    writeApprovedThroughCode(dir, 2);
    const h = await begin();
    const result = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    expect(result.error?.code).toBe('ORCHESTRATION_MANUAL_VALIDATION_PENDING');
    expect(readRun(dir).pendingDelegation).toBeNull();
  });

  it('decision 2: a corrupt run file of another task is skipped and reported, not fatal', async () => {
    const other = writeTask(fixture, TASK_ID_2);
    fs.writeFileSync(path.join(other, 'orchestration.json'), 'not json');
    const h = await begin();
    const result = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    expect(result.status).toBe('running');
    expect(result.warnings?.[0]).toContain('skipped corrupt run state');
  });
});

describe('commit path', () => {
  it('9: prepare (codex, receipt-1, T) → activate → stage-completed → seal → advance → completed', async () => {
    writeApprovedThroughCode(dir, 0);
    const h = await begin(engineHarness(fixture, { ids: ['run-1', 'receipt-1'] }));
    expect(readRun(dir).commitAuthorization.issuedAt).toBeNull();
    const prepared = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'codex' });
    expect(prepared.next?.stage).toBe('commit');
    expect(readRun(dir).commitAuthorization).toEqual({ issuedAt: T, consumedAt: null });
    const activated = await h.apply({
      intent: 'hook-start',
      taskRef: TASK_ID,
      nativeAgent: 'agent-infra-lifecycle-executor',
      childId: 'child-1',
      parentId: 'parent-1',
      spawnMode: 'fresh',
      actualModel: 'gpt-5',
    });
    expect(activated.status).toBe('running');
    expect(readRun(dir).pendingDelegation).toMatchObject({ status: 'activated', actualModel: 'gpt-5', childId: 'child-1' });
    expect((await h.apply({ intent: 'stage-completed', taskRef: TASK_ID, agent: 'codex' })).status).toBe('running');
    const sealed = await h.apply({ intent: 'hook-stop', taskRef: TASK_ID, childId: 'child-1', exitCode: 0 });
    expect(sealed.status).toBe('running');
    expect(readRun(dir).pendingDelegation).toMatchObject({ status: 'sealed', afterFingerprint: 'before-tree', changedPaths: [] });
    const advanced = await h.apply({ intent: 'advance', taskRef: TASK_ID });
    expect(advanced).toMatchObject({ status: 'completed', changed: true });
    const run = readRun(dir);
    expect(run.commitAuthorization).toEqual({ issuedAt: T, consumedAt: T });
    expect(run).toMatchObject({ status: 'completed', stepCount: 1, pendingDelegation: null, nextStage: null, pause: null });
    expect(run.receipts[0]).toMatchObject({ id: 'receipt-1', status: 'consumed', consumedAt: T });
  });

  it('23: stage-completed when the pending receipt is not commit → ORCHESTRATION_DELEGATION_MISSING', async () => {
    const h = await prepareActivated('executor');
    const result = await h.apply({ intent: 'stage-completed', taskRef: TASK_ID, agent: 'claude' });
    expect(result.error).toEqual({ code: 'ORCHESTRATION_DELEGATION_MISSING', message: 'active run has no pending commit delegation' });
  });

  it('stage events on a task without a run are tolerated no-ops', async () => {
    const h = engineHarness(fixture);
    for (const event of [
      { intent: 'stage-completed', taskRef: TASK_ID, agent: 'codex' },
      completeStage({ agent: 'codex' }),
      { intent: 'validate-stage', taskRef: TASK_ID, stage: 'analysis', round: 1, artifact: 'analysis.md', role: 'executor' },
    ] as const) {
      expect(await h.apply(event)).toEqual({ status: 'running', changed: false, taskId: TASK_ID, run: null, next: null, error: null });
    }
    expect(fs.existsSync(path.join(dir, 'orchestration.json'))).toBe(false);
  });
});

describe('native matching', () => {
  it('10: activateMatching on a prepared claude-code delegation records taskId, parent and child', async () => {
    const h = await begin();
    await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    const result = await h.apply(nativeStart({ childId: 'child-native', parentId: 'parent-session' }));
    expect(result).toMatchObject({ status: 'running', changed: true, taskId: TASK_ID });
    expect(readRun(dir).pendingDelegation).toMatchObject({
      taskId: TASK_ID,
      parentId: 'parent-session',
      childId: 'child-native',
      status: 'activated',
    });
  });

  it('11: a reviewer start on an executor delegation pauses the run with DELEGATION_ROLE_MISMATCH', async () => {
    const h = await begin();
    await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    const result = await h.apply(nativeStart({ role: 'reviewer', childId: 'child-native', parentId: 'parent-session' }));
    expect(result).toMatchObject({ status: 'paused', changed: true });
    expect(readRun(dir).pause).toEqual(recoverablePause('DELEGATION_ROLE_MISMATCH', 'managed role reviewer does not match executor'));
  });

  it('unmanaged agent → DELEGATION_IGNORED; no match → MISSING; two matches → AMBIGUOUS', async () => {
    const h = await begin();
    const ignored = await h.apply({
      intent: 'hook-start',
      taskRef: 'auto',
      client: 'claude-code',
      nativeAgent: 'general-purpose',
      childId: 'c',
      parentId: 'p',
      spawnMode: 'fresh',
    });
    expect(ignored).toEqual({
      status: 'failed',
      changed: false,
      taskId: null,
      run: null,
      next: null,
      error: { code: 'DELEGATION_IGNORED', message: "subagent 'general-purpose' is not lifecycle-managed" },
    });
    const missing = await h.apply(nativeStart({ childId: 'c', parentId: 'p' }));
    expect(missing.error).toEqual({ code: 'ORCHESTRATION_DELEGATION_MISSING', message: 'no matching lifecycle delegation exists' });
    // Two prepared receipts can only coexist if written by hand (the guard prevents it).
    await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    const other = writeTask(fixture, TASK_ID_2);
    const copy = { ...readRun(dir), taskId: TASK_ID_2 };
    fs.writeFileSync(path.join(other, 'orchestration.json'), JSON.stringify(copy, null, 2));
    const ambiguous = await h.apply(nativeStart({ childId: 'c', parentId: 'p' }));
    expect(ambiguous.error).toEqual({
      code: 'ORCHESTRATION_DELEGATION_AMBIGUOUS',
      message: 'multiple lifecycle delegations match the native hook event',
    });
  });

  it('a child id already used by this run pauses with DELEGATION_IDENTITY_REUSED', async () => {
    const h = await prepareActivated('executor');
    await h.apply(completeStage({ agent: 'claude' }));
    await h.apply(nativeStop());
    await h.apply({ intent: 'advance', taskRef: TASK_ID });
    writeArtifact(dir, 'analysis.md', '# A\n');
    await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    const reused = await h.apply(nativeStart({ role: 'reviewer' }));
    expect(reused.status).toBe('paused');
    expect(readRun(dir).pause).toEqual(
      recoverablePause('DELEGATION_IDENTITY_REUSED', 'native child identity was already used by this run'),
    );
  });

  it('seal matching: captures after-fingerprint and changed paths; reviewer writes outside its artifact are forbidden', async () => {
    writeArtifact(dir, 'analysis.md', '# A\n');
    const fingerprinter = fakeFingerprinter({ capture: () => 'tree-x', diff: () => ['src/index.ts'] });
    const h = engineHarness(fixture, { fingerprinter });
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    await h.apply(nativeStart({ role: 'reviewer', childId: 'r-1', parentId: 'p-1' }));
    await h.apply(completeStage({ stage: 'review-analysis', artifact: 'review-analysis.md' }));
    const sealed = await h.apply(nativeStop({ role: 'reviewer', childId: 'r-1' }));
    expect(sealed.status).toBe('paused');
    // Upstream's code and message, then what to do (the violation is sticky: test/core/writeViolations.test.ts).
    expect(readRun(dir).pause).toMatchObject({ code: 'DELEGATION_REVIEWER_WRITE_FORBIDDEN', recoverable: true });
    expect(readRun(dir).pause?.message).toMatch(/^reviewer changed forbidden path 'src\/index\.ts'; delegation id-2 cannot be consumed/);
  });

  it('seal matching with a role mismatch pauses DELEGATION_ROLE_MISMATCH; a stop before stage completion pauses DELEGATION_STATE_INVALID', async () => {
    const h = await prepareActivated('executor');
    const mismatch = await h.apply(nativeStop({ role: 'reviewer' }));
    expect(mismatch.status).toBe('paused');
    expect(readRun(dir).pause?.code).toBe('DELEGATION_ROLE_MISMATCH');
    fixture.cleanup();
    fixture = tempRepo();
    dir = writeTask(fixture);
    const h2 = await prepareActivated('executor');
    const early = await h2.apply(nativeStop());
    expect(early.status).toBe('paused');
    expect(readRun(dir).pause).toEqual(
      recoverablePause('DELEGATION_STATE_INVALID', `delegation receipt-1 is activated, expected stage-completed`),
    );
  });

  it('seal: a capture failure pauses ORCHESTRATION_SNAPSHOT_FAILED', async () => {
    let calls = 0;
    const fingerprinter = fakeFingerprinter({
      capture: () => {
        calls += 1;
        if (calls > 1) throw new Error('index locked');
        return 'before-tree';
      },
    });
    const h = engineHarness(fixture, { ids: ['run-1', 'receipt-1'], fingerprinter });
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    await h.apply(nativeStart({ childId: 'c', parentId: 'p' }));
    await h.apply(completeStage({ agent: 'claude' }));
    const result = await h.apply(nativeStop({ childId: 'c' }));
    expect(result.status).toBe('paused');
    expect(readRun(dir).pause).toEqual({ code: 'ORCHESTRATION_SNAPSHOT_FAILED', message: 'index locked', recoverable: true });
  });
});

describe('validateStage and completeStage', () => {
  it('22: validate-stage with a wrong round pauses ORCHESTRATION_PROVENANCE_MISMATCH; a match changes nothing', async () => {
    const h = await prepareActivated('executor');
    const ok = await h.apply({
      intent: 'validate-stage',
      taskRef: TASK_ID,
      stage: 'analysis',
      round: 1,
      artifact: 'analysis.md',
      role: 'executor',
    });
    expect(ok).toMatchObject({ status: 'running', changed: false });
    const wrong = await h.apply({
      intent: 'validate-stage',
      taskRef: TASK_ID,
      stage: 'analysis',
      round: 2,
      artifact: 'analysis.md',
      role: 'executor',
    });
    expect(wrong.status).toBe('paused');
    expect(readRun(dir).pause).toEqual(
      recoverablePause('ORCHESTRATION_PROVENANCE_MISMATCH', 'active run does not have one matching activated delegation'),
    );
  });

  it('complete-stage with a mismatching identity pauses DELEGATION_STAGE_MISMATCH; with no pending → MISSING', async () => {
    const h = await prepareActivated('executor');
    const wrong = await h.apply(completeStage({ round: 2, artifact: 'analysis-r2.md', agent: 'claude' }));
    expect(wrong.status).toBe('paused');
    expect(readRun(dir).pause?.code).toBe('DELEGATION_STAGE_MISMATCH');
    fixture.cleanup();
    fixture = tempRepo();
    dir = writeTask(fixture);
    const h2 = await begin();
    const none = await h2.apply(completeStage({ agent: 'claude' }));
    expect(none.error).toEqual({ code: 'ORCHESTRATION_DELEGATION_MISSING', message: 'active run has no pending delegation' });
  });

  it("decision 4: activating a paused run's receipt reports paused", async () => {
    const h = await begin();
    await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    await h.apply({ intent: 'pause', taskRef: TASK_ID, code: 'HOOK_FAILED', message: 'x', recoverable: true });
    const result = await h.apply({
      intent: 'hook-start',
      taskRef: TASK_ID,
      nativeAgent: 'agent-infra-lifecycle-executor',
      childId: 'c',
      parentId: 'p',
      spawnMode: 'fresh',
    });
    expect(result).toMatchObject({ status: 'paused', changed: true });
    expect(readRun(dir).pendingDelegation?.status).toBe('activated');
  });
});

describe('advance', () => {
  it('25: advance on an activated receipt pauses DELEGATION_STATE_INVALID; advancing twice → ORCHESTRATION_DELEGATION_MISSING', async () => {
    const h = await prepareActivated('executor');
    const early = await h.apply({ intent: 'advance', taskRef: TASK_ID });
    expect(early.status).toBe('paused');
    // baton: the upstream message, then what to do (the subagent has not finished yet)
    expect(readRun(dir).pause).toEqual(
      recoverablePause(
        'DELEGATION_STATE_INVALID',
        `delegation receipt-1 is activated, expected sealed; its subagent has not finished: wait for the subagent to return (spawn it in the foreground, never in the background) and for its SubagentStop hook, which seals the receipt; check with 'baton task ${TASK_ID} status' until run.pendingDelegation.status is 'sealed', then advance again; if the subagent is gone, 'baton task ${TASK_ID} abort --reason "…"' and 'baton task ${TASK_ID} begin-or-resume'`,
      ),
    );
    await h.apply(completeStage({ agent: 'claude' }));
    await h.apply({ intent: 'hook-stop', taskRef: TASK_ID, childId: 'child-1', exitCode: 0 });
    const advanced = await h.apply({ intent: 'advance', taskRef: TASK_ID });
    // decision 5: advancing a paused run makes it running and clears the stale pause
    expect(advanced).toMatchObject({ status: 'running', changed: true });
    expect(readRun(dir)).toMatchObject({ status: 'running', pause: null, stepCount: 1, pendingDelegation: null });
    const twice = await h.apply({ intent: 'advance', taskRef: TASK_ID });
    expect(twice.error).toEqual({ code: 'ORCHESTRATION_DELEGATION_MISSING', message: 'no pending delegation exists' });
  });

  it('explicit hook-stop with a non-zero exit code pauses DELEGATION_STOP_INVALID', async () => {
    const h = await prepareActivated('executor');
    await h.apply(completeStage({ agent: 'claude' }));
    const result = await h.apply({ intent: 'hook-stop', taskRef: TASK_ID, childId: 'child-1', exitCode: 1 });
    expect(result.status).toBe('paused');
    expect(readRun(dir).pause).toEqual(recoverablePause('DELEGATION_STOP_INVALID', 'native stop identity or exit status is invalid'));
  });
});

describe('pause', () => {
  it('no run → ORCHESTRATION_RUN_MISSING; free-form codes are kept with the pending delegation', async () => {
    const missing = await engineHarness(fixture).apply({
      intent: 'pause',
      taskRef: TASK_ID,
      code: 'HOOK_FAILED',
      message: 'm',
      recoverable: false,
    });
    expect(missing.error?.code).toBe('ORCHESTRATION_RUN_MISSING');
    const h = await begin();
    await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    const paused = await h.apply({ intent: 'pause', taskRef: TASK_ID, code: 'HOOK_FAILED', message: 'm', recoverable: false });
    expect(paused).toMatchObject({ status: 'paused', changed: true });
    expect(readRun(dir)).toMatchObject({ pause: { code: 'HOOK_FAILED', message: 'm', recoverable: false } });
    expect(readRun(dir).pendingDelegation?.status).toBe('prepared');
  });
});

describe('abort (decision 6)', () => {
  it('frees a paused run with a pending delegation: receipt aborted into history, run resumable, repository unblocked', async () => {
    const h = await prepareActivated('executor');
    await h.apply({ intent: 'pause', taskRef: TASK_ID, code: 'HOOK_FAILED', message: 'stop never came', recoverable: true });
    // 0.9.2 dead end: begin-or-resume cannot resume, prepare elsewhere is blocked.
    expect((await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID })).changed).toBe(false);
    writeTask(fixture, TASK_ID_2);
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID_2 });
    expect((await h.apply({ intent: 'prepare', taskRef: TASK_ID_2, client: 'claude-code' })).error?.code).toBe(
      'ORCHESTRATION_DELEGATION_BUSY',
    );

    const aborted = await h.apply({ intent: 'abort', taskRef: TASK_ID, reason: 'subagent crashed' });
    expect(aborted).toMatchObject({ status: 'paused', changed: true });
    const run = readRun(dir);
    expect(run).toMatchObject({
      status: 'paused',
      pendingDelegation: null,
      nextStage: null,
      pause: { code: 'ORCHESTRATION_DELEGATION_ABORTED', message: 'subagent crashed', recoverable: true },
    });
    expect(run.receipts.at(-1)).toMatchObject({ id: 'receipt-1', status: 'aborted' });
    expect((await h.apply({ intent: 'prepare', taskRef: TASK_ID_2, client: 'claude-code' })).status).toBe('running');
    expect(await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID })).toMatchObject({ status: 'running', changed: true });
  });

  it('without a pending delegation → ORCHESTRATION_DELEGATION_MISSING; without a run → ORCHESTRATION_RUN_MISSING', async () => {
    expect((await engineHarness(fixture).apply({ intent: 'abort', taskRef: TASK_ID })).error?.code).toBe('ORCHESTRATION_RUN_MISSING');
    const h = await begin();
    expect((await h.apply({ intent: 'abort', taskRef: TASK_ID })).error).toEqual({
      code: 'ORCHESTRATION_DELEGATION_MISSING',
      message: 'no pending delegation exists',
    });
  });

  it('a late stop of an aborted child changes nothing while the next delegation runs', async () => {
    const h = await prepareActivated('executor');
    await h.apply({ intent: 'abort', taskRef: TASK_ID });
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    await h.apply(nativeStart({ childId: 'child-2' }));
    const before = fs.readFileSync(path.join(dir, 'orchestration.json'), 'utf8');
    const late = await h.apply(nativeStop());
    expect(late).toMatchObject({
      status: 'running',
      changed: false,
      warnings: ['ignored the stop of child child-1: its delegation was aborted'],
    });
    expect(fs.readFileSync(path.join(dir, 'orchestration.json'), 'utf8')).toBe(before);
  });

  it('default reason names the aborted delegation', async () => {
    const h = await begin(engineHarness(fixture, { ids: ['run-1', 'receipt-9'] }));
    await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'codex' });
    await h.apply({ intent: 'abort', taskRef: TASK_ID });
    expect(readRun(dir).pause?.message).toBe('delegation receipt-9 was aborted');
  });
});

describe("release-spawn (a blocked spawn's claim holds nothing)", () => {
  it('drops the claim of that tool call; another call may claim; an unknown call changes nothing', async () => {
    const h = engineHarness(fixture, { ids: ['run-1', 'receipt-1'] });
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'codex' });
    const claim = (toolCallId: string) =>
      h.apply({ intent: 'claim-spawn', taskRef: 'auto', client: 'codex', nativeAgent: 'agent-infra-lifecycle-executor', toolCallId });
    expect((await claim('call-1')).status).toBe('running');
    const unknown = await h.apply({ intent: 'release-spawn', taskRef: 'auto', client: 'codex', toolCallId: 'call-9' });
    expect(unknown.error).toEqual({
      code: 'ORCHESTRATION_DELEGATION_MISSING',
      message: 'no pending delegation is claimed by tool call call-9; nothing to release',
    });
    expect((await claim('call-2')).error?.code).toBe('DELEGATION_SPAWN_CLAIMED');
    const released = await h.apply({ intent: 'release-spawn', taskRef: 'auto', client: 'codex', toolCallId: 'call-1' });
    expect(released).toMatchObject({
      status: 'running',
      changed: true,
      warnings: ['released the claim of tool call call-1 on delegation receipt-1: its spawn was blocked'],
    });
    expect(Object.hasOwn(readRun(dir).pendingDelegation!, 'spawnClaim')).toBe(false);
    expect((await claim('call-2')).run?.pendingDelegation?.spawnClaim?.toolCallId).toBe('call-2');
  });
});

describe('the read-only spawn check (hooks/spawnCheck.ts, Redis unreachable)', () => {
  it("a claim by the very call being checked does not block it (its spooled claim may be applied first); another call's does", async () => {
    const h = engineHarness(fixture, { ids: ['run-1', 'receipt-1'] });
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'codex' });
    const agent = 'agent-infra-lifecycle-executor';
    expect(checkSpawn(fixture.root, 'codex', agent, 'call-1')).toEqual({ allow: true });
    await h.apply({ intent: 'claim-spawn', taskRef: 'auto', client: 'codex', nativeAgent: agent, toolCallId: 'call-1' });
    expect(checkSpawn(fixture.root, 'codex', agent, 'call-1')).toEqual({ allow: true });
    expect(checkSpawn(fixture.root, 'codex', agent, 'call-2')).toMatchObject({
      allow: false,
      reason: expect.stringContaining('DELEGATION_SPAWN_CLAIMED'),
    });
  });
});

describe('decisions', () => {
  it('3: updatedAt uses the injected clock', async () => {
    const h = engineHarness(fixture, { now: '2030-05-05T05:05:05.000Z' });
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    await h.apply({ intent: 'pause', taskRef: TASK_ID, code: 'X', message: 'y', recoverable: true });
    expect(readRun(dir).updatedAt).toBe('2030-05-05T05:05:05.000Z');
  });

  it('task refs cannot escape the workspace', async () => {
    for (const ref of ['../..', '../../etc', `${TASK_ID}/../../..`, '/etc/passwd', 'TASK-20260101-000001/..']) {
      const result = await engineHarness(fixture).apply({ intent: 'begin-or-resume', taskRef: ref });
      expect(result.status).toBe('failed');
      expect(result.error?.code).toBe('INVALID_TASK_REF');
    }
    expect(fs.readdirSync(fixture.root).sort()).toEqual(['.agents', '.git']);
  });
});
