import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { delegationClock, dueReconciliation, reconciliationNote } from '../../src/core/orchestration/index.ts';
import type { LifecycleEvent } from '../../src/core/events.ts';
import { TASK_ID, readRun, tempRepo, writeTask } from '../support/fixtures.ts';
import type { Fixture } from '../support/fixtures.ts';
import { GRACES, at, clockedDelegation } from '../support/delegationClock.ts';
import type { ClockedDelegation } from '../support/delegationClock.ts';
import { completeStage, nativeStop } from '../support/engineEvents.ts';

// Evidence first (docs/architecture.md "Reconciliation"): the `child-gone` event of a hook that saw
// the client end a child without a stop (Claude Code's TaskStop, Codex v2's interrupt_agent) settles
// the delegation at once, as the grace would later: seal a completed stage, pause an unfinished one.

let fixture: Fixture;
let world: ClockedDelegation;

beforeEach(() => {
  fixture = tempRepo();
  writeTask(fixture);
  world = clockedDelegation(fixture);
});
afterEach(() => fixture.cleanup());

const apply = (event: LifecycleEvent) => world.apply(event);
const pending = (taskId = TASK_ID) => world.pending(taskId);
const activated = (childId = 'child-1') => world.activated(childId);
const stageCompleted = () => world.stageCompleted();

const gone = (childId: string, client: 'claude-code' | 'codex' = 'claude-code'): LifecycleEvent => ({
  intent: 'child-gone',
  taskRef: 'auto',
  client,
  childId,
  evidence: 'TaskStop',
});

describe('child-gone: the client reported a child gone', () => {
  it('a completed stage is sealed at once, measured as a stop would, the evidence on the mark; advance consumes it', async () => {
    await stageCompleted();
    world.clock += 1;
    const result = await apply(gone('child-1'));
    expect(result).toMatchObject({ status: 'running', changed: true, error: null });
    const receipt = pending();
    expect(receipt).toMatchObject({
      status: 'sealed',
      changedPaths: ['src/app.js'],
      reconciliations: [{ kind: 'sealed', since: at(3), graceMs: 0, at: at(4), evidence: 'TaskStop' }],
    });
    expect(reconciliationNote(receipt.reconciliations![0]!)).toBe(
      `sealed by baton: the client reported the child gone (TaskStop) (${at(4)})`,
    );
    expect((await apply({ intent: 'advance', taskRef: TASK_ID })).error).toBeNull();
    expect(readRun(fixture.taskDir(TASK_ID)).receipts[0]).toMatchObject({
      status: 'consumed',
      reconciliations: [{ evidence: 'TaskStop' }],
    });
  });

  it('an unfinished stage pauses the run (BATON_DELEGATION_STALLED) naming abort; the grace does not act again; a late complete-stage lifts it', async () => {
    await activated();
    world.clock += 1;
    const result = await apply(gone('child-1'));
    expect(result).toMatchObject({ status: 'paused', changed: true });
    const run = readRun(fixture.taskDir(TASK_ID));
    expect(run.pause).toMatchObject({ code: 'BATON_DELEGATION_STALLED', recoverable: true });
    expect(run.pause!.message).toContain('the client reported child child-1 gone (TaskStop) before it completed its stage');
    expect(run.pause!.message).toContain(`baton task ${TASK_ID} abort --reason`);
    expect(pending().reconciliations).toEqual([{ kind: 'stalled', since: at(1), graceMs: 0, at: at(2), evidence: 'TaskStop' }]);
    // The stall's clock is marked: the worker's grace never pauses it a second time.
    expect(dueReconciliation(pending(), GRACES)).toBeNull();
    expect(delegationClock(pending(), GRACES, Date.parse(at(3)))).toBe(
      `waiting for complete-stage since 2 min; run paused by baton on the client's report (TaskStop, ${at(2)})`,
    );
    // A child the client was wrong about still completes: its complete-stage lifts the pause.
    world.clock += 1;
    const completed = await apply(completeStage());
    expect(completed).toMatchObject({ status: 'running', error: null, run: { pause: null } });
  });

  it('changes nothing for a child baton does not hold, another client, or a delegation already sealed by its stop', async () => {
    await stageCompleted();
    const before = readRun(fixture.taskDir(TASK_ID));
    const other = await apply(gone('some-shell'));
    expect(other).toMatchObject({ changed: false, error: null });
    expect(other.warnings).toEqual(['nothing to reconcile: no pending delegation of claude-code has child some-shell (TaskStop)']);
    expect((await apply(gone('child-1', 'codex'))).changed).toBe(false);
    expect(readRun(fixture.taskDir(TASK_ID))).toEqual(before);
    await apply(nativeStop());
    const sealed = readRun(fixture.taskDir(TASK_ID));
    const late = await apply(gone('child-1'));
    expect(late).toMatchObject({ changed: false, error: null });
    expect(late.warnings?.[0]).toContain('is sealed');
    expect(readRun(fixture.taskDir(TASK_ID))).toEqual(sealed);
  });
});
