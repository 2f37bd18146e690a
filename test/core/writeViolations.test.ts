import { describe, expect, it } from 'vitest';
import { reviewerAllowedPaths } from '../../src/core/receipts.ts';
import { ACTIVE_TASKS_PATH } from '../../src/core/taskLayout.ts';
import type { OrchestrationResult } from '../../src/core/types.ts';
import {
  TASK_ID,
  TASK_ID_2,
  engineHarness,
  memoryWorkspace,
  readRun,
  useTaskPerTest,
  writeArtifact,
  writeTask,
} from '../support/fixtures.ts';
import type { EngineHarness, Fixture } from '../support/fixtures.ts';
import { completeStage, nativeStart, nativeStop } from '../support/engineEvents.ts';

// The write restriction holds whatever the orchestrator does next (docs/lifecycle.md §6.3): a
// reviewer's writes outside its allow-list, or a child's writes after its delegation was consumed,
// are recorded on the run; advance, begin-or-resume and prepare refuse until the workspace is
// measured back (or a human aborts). Through the engine, with a workspace the test edits by hand.

let fixture: Fixture;
let dir: string;
useTaskPerTest((made) => ({ fixture, dir } = made));

const T = '2026-01-01T00:00:00.000Z';
const REVIEW = `${ACTIVE_TASKS_PATH}/${TASK_ID}/review-analysis.md`;

function world() {
  const ws = memoryWorkspace({ 'src/app.js': 'v1\n' });
  const h = engineHarness(fixture, { fingerprinter: ws.fingerprinter, ids: ['run-1', 'review-1', 'receipt-2', 'receipt-3'] });
  return { ws, h };
}

/** A review of analysis.md, written and sealed: the pending delegation `review-1` of child `r-1`. */
async function sealedReview({ ws, h }: ReturnType<typeof world>, beforeStop: () => void = () => undefined): Promise<OrchestrationResult> {
  writeArtifact(dir, 'analysis.md', '# Analysis\n');
  expect((await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID })).status).toBe('running');
  expect((await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' })).next).toMatchObject({ stage: 'review-analysis' });
  await h.apply(nativeStart({ role: 'reviewer', childId: 'r-1', parentId: 'p-1' }));
  ws.write(REVIEW, 'approved\n');
  await h.apply(completeStage({ stage: 'review-analysis', artifact: 'review-analysis.md', agent: 'claude' }));
  beforeStop();
  return h.apply(nativeStop({ role: 'reviewer', childId: 'r-1' }));
}

/** The analysis, done by child `e-1` and consumed (receipt `review-1` is the executor's here). */
async function consumedAnalysis({ ws, h }: ReturnType<typeof world>): Promise<void> {
  await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
  await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
  await h.apply(nativeStart({ childId: 'e-1', parentId: 'p-1' }));
  ws.write('src/analysis-notes.md', 'notes\n');
  await h.apply(completeStage({ agent: 'claude' }));
  await h.apply(nativeStop({ childId: 'e-1' }));
  expect((await h.apply({ intent: 'advance', taskRef: TASK_ID })).status).toBe('running');
}

const advance = (h: EngineHarness) => h.apply({ intent: 'advance', taskRef: TASK_ID });

describe('a resumed reviewer that edits code after its seal (issue: advance consumed it anyway)', () => {
  it('advance is refused, whatever the pause says, until the edit is reverted; then the review is consumed', async () => {
    const w = world();
    expect((await sealedReview(w)).run?.pendingDelegation).toMatchObject({ status: 'sealed', changedPaths: [REVIEW] });
    const sealed = readRun(dir).pendingDelegation!;
    // The resumed turn (SendMessage) edits code.
    w.ws.write('src/app.js', 'edited by the reviewer\n');
    const stopped = await w.h.apply(nativeStop({ role: 'reviewer', childId: 'r-1' }));
    expect(stopped.status).toBe('paused');
    const paused = readRun(dir);
    expect(paused.pause?.code).toBe('DELEGATION_REVIEWER_WRITE_FORBIDDEN');
    expect(paused.pause?.message).toBe(
      "reviewer changed forbidden path 'src/app.js'; delegation review-1 cannot be consumed, nor any delegation of this repository prepared, while 'src/app.js' differs from the workspace baton recorded " +
        `(tree ${sealed.afterFingerprint}). To continue, put it back ('git restore --source=${sealed.afterFingerprint} -- <path>' restores a file that tree holds; delete a file it does not hold), ` +
        `then run 'baton task ${TASK_ID} advance' again: baton measures the workspace. To keep the changes instead, a human runs 'baton task ${TASK_ID} abort --reason "…"' ` +
        `(delegation review-1 is given up; the changes stay, unreviewed), then 'baton task ${TASK_ID} begin-or-resume'`,
    );
    expect(paused.violations).toEqual([
      {
        code: 'DELEGATION_REVIEWER_WRITE_FORBIDDEN',
        message: "reviewer changed forbidden path 'src/app.js'",
        receiptId: 'review-1',
        childId: 'r-1',
        baseline: sealed.afterFingerprint,
        allowedPaths: reviewerAllowedPaths(sealed),
        paths: ['src/app.js'],
        detectedAt: T,
        resolvedAt: null,
        resolution: null,
      },
    ]);

    // The orchestrator advances, as its loop says: refused, nothing consumed, nothing rewritten.
    const refused = await advance(w.h);
    expect(refused).toMatchObject({
      status: 'paused',
      changed: false,
      error: { code: 'DELEGATION_REVIEWER_WRITE_FORBIDDEN', message: paused.pause?.message },
    });
    expect(readRun(dir)).toEqual(paused);
    // Another pause over it changes nothing either: the violation, not the pause, holds the run.
    await w.h.apply({ intent: 'pause', taskRef: TASK_ID, code: 'ANYTHING', message: 'm', recoverable: true });
    expect(await advance(w.h)).toMatchObject({ status: 'paused', changed: true, error: { code: 'DELEGATION_REVIEWER_WRITE_FORBIDDEN' } });
    expect(readRun(dir)).toMatchObject({ status: 'paused', pause: paused.pause, pendingDelegation: sealed, receipts: [] });
    expect(await w.h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID })).toMatchObject({ status: 'paused', changed: false });

    // Evidence: the edit reverted. The next advance measures it and consumes the review.
    w.ws.write('src/app.js', 'v1\n');
    const advanced = await advance(w.h);
    expect(advanced).toMatchObject({ status: 'running', changed: true, error: null });
    expect(advanced.warnings).toEqual([
      `the workspace is back at the fingerprint baton recorded (${sealed.afterFingerprint}): DELEGATION_REVIEWER_WRITE_FORBIDDEN of child r-1 is resolved`,
    ]);
    const run = readRun(dir);
    expect(run).toMatchObject({ status: 'running', pause: null, pendingDelegation: null, stepCount: 1 });
    expect(run.receipts[0]).toMatchObject({
      id: 'review-1',
      status: 'consumed',
      changedPaths: [REVIEW],
      afterFingerprint: sealed.afterFingerprint,
    });
    expect(run.violations?.[0]).toMatchObject({ resolvedAt: T, resolution: 'reverted' });
  });

  it('only the forbidden paths must go: its allowed writes since the seal extend the receipt', async () => {
    const w = world();
    await sealedReview(w);
    w.ws.write(REVIEW, 'approved, with a note\n');
    w.ws.write('src/app.js', 'edited\n');
    w.ws.write('src/new.js', 'new\n');
    await w.h.apply(nativeStop({ role: 'reviewer', childId: 'r-1' }));
    expect(readRun(dir).violations?.[0]?.paths).toEqual(['src/app.js', 'src/new.js']);
    w.ws.write('src/app.js', 'v1\n');
    const partly = await advance(w.h);
    expect(partly.error?.message).toContain("while 'src/new.js' differs from the workspace baton recorded");
    w.ws.remove('src/new.js');
    const now = await w.ws.fingerprinter.capture(fixture.root);
    expect((await advance(w.h)).status).toBe('running');
    expect(readRun(dir).receipts[0]).toMatchObject({ status: 'consumed', afterFingerprint: now, changedPaths: [REVIEW] });
  });

  it('a reviewer whose first stop was refused: advance names the violation, not an early advance; once reverted, that stop seals and advance consumes', async () => {
    const w = world();
    const first = await sealedReview(w, () => w.ws.write('src/app.js', 'edited before the stop\n'));
    expect(first.status).toBe('paused');
    const before = readRun(dir).pendingDelegation!;
    expect(before.status).toBe('stage-completed');
    expect(readRun(dir).violations?.[0]).toMatchObject({
      baseline: before.beforeFingerprint,
      paths: ['src/app.js'],
      receiptId: 'review-1',
    });
    const refused = await advance(w.h);
    expect(refused.error?.code).toBe('DELEGATION_REVIEWER_WRITE_FORBIDDEN');
    expect(readRun(dir).pause?.message).not.toContain('expected sealed');
    w.ws.write('src/app.js', 'v1\n');
    expect((await advance(w.h)).status).toBe('running');
    expect(readRun(dir).receipts[0]).toMatchObject({ status: 'consumed', sealedAt: T, changedPaths: [REVIEW] });
  });

  it('a human keeps the edit with abort: the delegation is given up, the decision recorded, the run resumes', async () => {
    const w = world();
    await sealedReview(w);
    w.ws.write('src/app.js', 'edited\n');
    await w.h.apply(nativeStop({ role: 'reviewer', childId: 'r-1' }));
    const aborted = await w.h.apply({ intent: 'abort', taskRef: TASK_ID, reason: 'the fix is fine, I reviewed it' });
    expect(aborted.run?.pause).toEqual({
      code: 'ORCHESTRATION_DELEGATION_ABORTED',
      message:
        "the fix is fine, I reviewed it; the changes refused with DELEGATION_REVIEWER_WRITE_FORBIDDEN ('src/app.js') stay in the workspace by this decision",
      recoverable: true,
    });
    const run = readRun(dir);
    expect(run.receipts[0]).toMatchObject({ id: 'review-1', status: 'aborted' });
    expect(run.violations?.[0]).toMatchObject({ resolvedAt: T, resolution: 'kept', reason: 'the fix is fine, I reviewed it' });
    expect((await w.h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID })).status).toBe('running');
  });
});

describe('a child that writes after its delegation was consumed', () => {
  it('begin-or-resume does not resume, prepare anywhere in the repository is refused, until the writes are gone', async () => {
    const w = world();
    await consumedAnalysis(w);
    const consumed = readRun(dir).receipts[0]!;
    w.ws.write('LATE.md', 'late\n');
    const late = await w.h.apply(nativeStop({ childId: 'e-1' }));
    expect(late.run?.pause?.code).toBe('DELEGATION_TURN_AFTER_CONSUMED');
    expect(late.run?.pause?.message).toMatch(
      /^child e-1 ran a turn after its delegation review-1 \(analysis round 1\) was consumed and changed 'LATE\.md'; these changes belong to no delegation; the run cannot be resumed, nor any delegation of this repository prepared, while 'LATE\.md' differs/,
    );
    expect(late.run?.pause?.message).toContain(`then run 'baton task ${TASK_ID} begin-or-resume' again`);
    expect(readRun(dir).violations?.[0]).toMatchObject({ baseline: consumed.afterFingerprint, allowedPaths: [], paths: ['LATE.md'] });

    // The orchestrator resumes and prepares, as its loop says: both refused.
    expect(await w.h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID })).toMatchObject({
      status: 'paused',
      changed: false,
      error: { code: 'DELEGATION_TURN_AFTER_CONSUMED' },
    });
    expect((await w.h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' })).error?.code).toBe(
      'ORCHESTRATION_RUN_NOT_RUNNING',
    );
    // Another task would take the late writes into its before-fingerprint.
    writeTask(fixture, TASK_ID_2);
    await w.h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID_2 });
    const elsewhere = await w.h.apply({ intent: 'prepare', taskRef: TASK_ID_2, client: 'claude-code' });
    expect(elsewhere).toMatchObject({ status: 'failed', taskId: TASK_ID_2, error: { code: 'DELEGATION_TURN_AFTER_CONSUMED' } });
    expect(elsewhere.error?.message).toMatch(
      new RegExp(`^task ${TASK_ID} has changes its write restriction refused \\(child e-1 ran a turn`),
    );
    expect(readRun(fixture.taskDir(TASK_ID_2)).pendingDelegation).toBeNull();

    w.ws.remove('LATE.md');
    expect(await w.h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID })).toMatchObject({ status: 'running', changed: true });
    expect(readRun(dir).violations?.[0]).toMatchObject({ resolution: 'reverted' });
    expect((await w.h.apply({ intent: 'prepare', taskRef: TASK_ID_2, client: 'claude-code' })).status).toBe('running');
  });

  it("an advance of another task's delegation is refused while the late writes stand", async () => {
    const w = world();
    await consumedAnalysis(w);
    writeTask(fixture, TASK_ID_2);
    await w.h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID_2 });
    await w.h.apply({ intent: 'prepare', taskRef: TASK_ID_2, client: 'codex' });
    w.ws.write('LATE.md', 'late\n');
    await w.h.apply(nativeStop({ childId: 'e-1' }));
    const refused = await w.h.apply({ intent: 'advance', taskRef: TASK_ID_2 });
    expect(refused).toMatchObject({ status: 'failed', error: { code: 'DELEGATION_TURN_AFTER_CONSUMED' } });
    expect(readRun(fixture.taskDir(TASK_ID_2)).pendingDelegation?.status).toBe('prepared');
  });

  it('abort without a pending delegation records a human keeping the writes; the run then resumes', async () => {
    const w = world();
    await consumedAnalysis(w);
    w.ws.write('LATE.md', 'late\n');
    await w.h.apply(nativeStop({ childId: 'e-1' }));
    const kept = await w.h.apply({ intent: 'abort', taskRef: TASK_ID });
    expect(kept.run?.pause?.message).toBe(
      "aborted without a reason; the changes refused with DELEGATION_TURN_AFTER_CONSUMED ('LATE.md') stay in the workspace by this decision",
    );
    expect(readRun(dir).violations?.[0]).toMatchObject({ resolution: 'kept' });
    expect((await w.h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID })).status).toBe('running');
    expect((await w.h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' })).status).toBe('running');
    // Nothing open any more: abort without a pending delegation is upstream's refusal again.
    await w.h.apply({ intent: 'abort', taskRef: TASK_ID });
    expect((await w.h.apply({ intent: 'abort', taskRef: TASK_ID })).error?.code).toBe('ORCHESTRATION_DELEGATION_MISSING');
  });
});

describe('runs without violations', () => {
  it('carry no violations key and are never measured at advance or begin-or-resume (0.9.2 files stay as they were)', async () => {
    const w = world();
    await consumedAnalysis(w);
    const captures = w.ws.fingerprinter.captures;
    await w.h.apply({ intent: 'pause', taskRef: TASK_ID, code: 'X', message: 'm', recoverable: true });
    await w.h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    expect(w.ws.fingerprinter.captures).toBe(captures);
    expect(Object.hasOwn(readRun(dir), 'violations')).toBe(false);
  });
});
