import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { delegationClock, dueReconciliation } from '../../src/core/orchestration/index.ts';
import { formatRunsTable, listRuns } from '../../src/runs/runList.ts';
import type { LifecycleEvent } from '../../src/core/events.ts';
import type { DelegationReceipt, ReconciliationKind } from '../../src/core/types.ts';
import { TASK_ID, TASK_ID_2, readRun, tempRepo, writeArtifact, writeTask } from '../support/fixtures.ts';
import type { Fixture } from '../support/fixtures.ts';
import { GRACES, at, clockedDelegation } from '../support/delegationClock.ts';
import type { ClockedDelegation } from '../support/delegationClock.ts';
import { claimSpawn, completeStage, nativeStart, nativeStop } from '../support/engineEvents.ts';

// Reconciliation (docs/architecture.md "Reconciliation"): the engine's `reconcile` event settles a
// delegation that waited past its grace, once, and only if it still waits where the worker saw it.

let fixture: Fixture;
let world: ClockedDelegation;

beforeEach(() => {
  fixture = tempRepo();
  writeTask(fixture);
  writeTask(fixture, TASK_ID_2);
  world = clockedDelegation(fixture);
});
afterEach(() => fixture.cleanup());

const apply = (event: LifecycleEvent) => world.apply(event);
const pending = (taskId = TASK_ID) => world.pending(taskId);
const prepared = (taskId = TASK_ID) => world.prepared(taskId);
const activated = (childId = 'child-1') => world.activated(childId);
const stageCompleted = () => world.stageCompleted();

/** The reconcile event the worker would queue for the pending delegation of `taskId` now, or null. */
function dueEvent(taskId = TASK_ID): LifecycleEvent | null {
  const receipt = pending(taskId);
  const due = dueReconciliation(receipt, GRACES);
  if (!due || due.dueAt > Date.parse(at(world.clock))) return null;
  return { intent: 'reconcile', taskRef: taskId, receiptId: receipt.id, kind: due.kind, since: due.since, graceMs: due.graceMs };
}

describe('dueReconciliation', () => {
  it('waits for each awaited event from the receipt time that starts it', async () => {
    await prepared();
    expect(dueReconciliation(pending(), GRACES)).toEqual({
      kind: 'not-started',
      since: at(0),
      graceMs: GRACES.spawnGraceMs,
      dueAt: Date.parse(at(5)),
    });
    world.clock = 1;
    await apply(nativeStart({ childId: 'c', parentId: 'p' }));
    expect(dueReconciliation(pending(), GRACES)).toMatchObject({ kind: 'stalled', since: at(1), dueAt: Date.parse(at(11)) });
    world.clock = 3;
    await apply(completeStage());
    expect(pending().stageCompletedAt).toBe(at(3));
    expect(dueReconciliation(pending(), GRACES)).toMatchObject({ kind: 'sealed', since: at(3), dueAt: Date.parse(at(13)) });
  });

  it('a spawn claim restarts the spawn clock', async () => {
    await prepared();
    world.clock = 4;
    await apply(claimSpawn('tool-1'));
    expect(dueReconciliation(pending(), GRACES)).toMatchObject({ kind: 'not-started', since: at(4), dueAt: Date.parse(at(9)) });
  });

  it('a stage completed before baton recorded the time runs from activation; a sealed receipt awaits nothing', () => {
    const base = { id: 'r', createdAt: at(0), activatedAt: at(1), status: 'stage-completed' } as unknown as DelegationReceipt;
    expect(dueReconciliation(base, GRACES)).toMatchObject({ kind: 'sealed', since: at(1) });
    expect(dueReconciliation({ ...base, status: 'sealed' }, GRACES)).toBeNull();
    const done = { ...base, reconciliations: [{ kind: 'sealed' as ReconciliationKind, since: at(1), graceMs: 1, at: at(11) }] };
    expect(dueReconciliation(done, GRACES)).toBeNull();
  });
});

describe('reconcile: a completed stage whose SubagentStop never came', () => {
  it('is sealed as a stop would seal it, once; advance consumes it; the late stop with no change changes nothing', async () => {
    await stageCompleted();
    world.clock = 12;
    expect(dueEvent()).toBeNull(); // 9 minutes after complete-stage
    world.clock = 13;
    const event = dueEvent()!;
    expect(event).toMatchObject({ kind: 'sealed', since: at(3) });
    const sealed = await apply(event);
    expect(sealed).toMatchObject({ status: 'running', changed: true, error: null });
    expect(pending()).toMatchObject({
      status: 'sealed',
      childId: 'child-1',
      sealedAt: at(13),
      changedPaths: ['src/app.js'],
      reconciliations: [{ kind: 'sealed', since: at(3), graceMs: GRACES.stopGraceMs, at: at(13) }],
    });
    expect(dueEvent()).toBeNull();
    const again = await apply(event);
    expect(again.changed).toBe(false);
    expect(again.warnings?.[0]).toContain('nothing to reconcile');
    const lateStop = await apply(nativeStop());
    expect(lateStop).toMatchObject({ status: 'running', changed: false, error: null });
    const advanced = await apply({ intent: 'advance', taskRef: TASK_ID });
    expect(advanced).toMatchObject({ status: 'running', error: null });
    expect(readRun(fixture.taskDir()).receipts.at(-1)).toMatchObject({ status: 'consumed', reconciliations: [{ kind: 'sealed' }] });
  });

  it('a job queued before the stop came does nothing once the stop sealed the receipt', async () => {
    await stageCompleted();
    world.clock = 13;
    const event = dueEvent()!;
    await apply(nativeStop());
    const result = await apply(event);
    expect(result.changed).toBe(false);
    expect(pending().reconciliations).toBeUndefined();
  });

  it('applies every check a stop makes: a reviewer that wrote outside its review pauses the run', async () => {
    writeArtifact(fixture.taskDir(), 'analysis.md', '# Analysis\n');
    await apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    const reviewer = await apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    expect(reviewer.next).toMatchObject({ role: 'reviewer', stage: 'review-analysis' });
    await apply(nativeStart({ role: 'reviewer', childId: 'r-1', parentId: 'p' }));
    await apply(completeStage({ stage: 'review-analysis', artifact: 'review-analysis.md' }));
    world.workspace.write('src/app.js', 'changed by the reviewer\n');
    world.clock += 10;
    const result = await apply(dueEvent()!);
    expect(result.run?.pause).toMatchObject({ code: 'DELEGATION_REVIEWER_WRITE_FORBIDDEN', recoverable: true });
    expect(pending()).toMatchObject({ status: 'stage-completed', reconciliations: [{ kind: 'sealed' }] });
    expect(dueEvent()).toBeNull(); // measured once; the violation is settled by a human
  });
});

describe('reconcile: an activated child that never completes its stage', () => {
  it('pauses the run recoverably, once, naming abort and begin-or-resume', async () => {
    await activated();
    world.clock = 11;
    const paused = await apply(dueEvent()!);
    expect(paused.status).toBe('paused');
    expect(paused.run?.pause?.code).toBe('BATON_DELEGATION_STALLED');
    expect(paused.run?.pause?.recoverable).toBe(true);
    expect(paused.run?.pause?.message).toContain(`baton task ${TASK_ID} abort --reason`);
    expect(paused.run?.pause?.message).toContain(`baton task ${TASK_ID} begin-or-resume`);
    expect(paused.run?.pause?.message).toContain('its complete-stage lifts this pause');
    expect(pending()).toMatchObject({ status: 'activated', reconciliations: [{ kind: 'stalled', since: at(1) }] });
    expect(dueEvent()).toBeNull();
    // The way out it names.
    expect((await apply({ intent: 'abort', taskRef: TASK_ID, reason: 'child gone' })).error).toBeNull();
    expect(await apply({ intent: 'begin-or-resume', taskRef: TASK_ID })).toMatchObject({ status: 'running', changed: true });
  });

  it('a child that was only slow still completes (which lifts the pause) and stops, and advance goes on', async () => {
    await activated();
    world.clock = 11;
    await apply(dueEvent()!);
    const completed = await apply(completeStage());
    expect(completed).toMatchObject({ status: 'running', error: null, run: { pause: null } });
    expect(completed.warnings).toContain(
      'the stage is completed, so the pause BATON_DELEGATION_STALLED is lifted; the stop seals the delegation and advance goes on',
    );
    await apply(nativeStop());
    expect(await apply({ intent: 'advance', taskRef: TASK_ID })).toMatchObject({ status: 'running', error: null });
  });
});

describe('reconcile: a prepared delegation no subagent started for', () => {
  it('is given up as abort does: the repository is free, the run paused recoverably without a pending delegation', async () => {
    await prepared();
    world.clock = 5;
    const event = dueEvent()!;
    expect(event).toMatchObject({ kind: 'not-started', since: at(0), graceMs: GRACES.spawnGraceMs });
    const result = await apply(event);
    expect(result.run).toMatchObject({ status: 'paused', pendingDelegation: null, nextStage: null });
    expect(result.run?.pause?.code).toBe('BATON_DELEGATION_NOT_STARTED');
    expect(result.run?.pause?.message).toContain(`baton task ${TASK_ID} begin-or-resume`);
    expect(result.run?.receipts.at(-1)).toMatchObject({ status: 'aborted', reconciliations: [{ kind: 'not-started', at: at(5) }] });
    expect((await apply(event)).changed).toBe(false);
    // Another task of the repository prepares now.
    await apply({ intent: 'begin-or-resume', taskRef: TASK_ID_2 });
    expect(await apply({ intent: 'prepare', taskRef: TASK_ID_2, client: 'codex' })).toMatchObject({ status: 'running', error: null });
    // The first resumes.
    expect(await apply({ intent: 'begin-or-resume', taskRef: TASK_ID })).toMatchObject({ status: 'running', changed: true });
  });

  it("a late SubagentStart for it is refused with 0.9.2's code and changes nothing", async () => {
    await prepared();
    world.clock = 5;
    await apply(dueEvent()!);
    const before = readRun(fixture.taskDir());
    const late = await apply(nativeStart({ childId: 'late-child' }));
    expect(late.status).toBe('failed');
    expect(late.error?.code).toBe('DELEGATION_STATE_INVALID');
    expect(late.error?.message).toContain('baton gave it up');
    expect(late.error?.message).toContain('late-child');
    expect(readRun(fixture.taskDir())).toEqual(before);
  });
});

describe('the clock, as the run page and baton runs show it', () => {
  it('says what the delegation waits for, since when, and what the worker does at its grace; then what it did', async () => {
    await stageCompleted();
    const nowMs = Date.parse(at(6));
    expect(delegationClock(pending(), GRACES, nowMs)).toBe('waiting for SubagentStop since 3 min; sealed by baton at 10 min');
    expect(delegationClock(pending(), { ...GRACES, stopGraceMs: 90_000 }, Date.parse(at(3)) + 45_000)).toBe(
      'waiting for SubagentStop since 45 s; sealed by baton at 90 s',
    );
    const [row] = await listRuns(fixture.root, undefined, { graces: GRACES, nowMs });
    expect(row).toMatchObject({ clock: 'waiting for SubagentStop since 3 min; sealed by baton at 10 min', reconciled: null });
    world.clock = 13;
    await apply(dueEvent()!);
    await apply({ intent: 'advance', taskRef: TASK_ID });
    const [after] = await listRuns(fixture.root, undefined, { graces: GRACES, nowMs: Date.parse(at(14)) });
    expect(after).toMatchObject({ clock: null, reconciled: `sealed by baton: no SubagentStop within 10 min (${at(13)})` });
    expect(formatRunsTable([after!])).toContain(`[sealed by baton: no SubagentStop within 10 min (${at(13)})]`);
  });

  it('a stalled child: the clock says the run was paused, and when', async () => {
    await activated();
    world.clock = 11;
    await apply(dueEvent()!);
    expect(delegationClock(pending(), GRACES, Date.parse(at(12)))).toBe(
      `waiting for complete-stage since 11 min; run paused by baton at 10 min (${at(11)})`,
    );
  });
});

describe('the stalled pause is lifted only by its own cause going away', () => {
  it('another pause is not lifted by complete-stage', async () => {
    await activated();
    await apply({ intent: 'pause', taskRef: TASK_ID, code: 'HUMAN_HOLD', message: 'wait', recoverable: true });
    const completed = await apply(completeStage());
    expect(completed.run?.pause?.code).toBe('HUMAN_HOLD');
  });
});
