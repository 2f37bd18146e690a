import { expect } from 'vitest';
import { applyEventNow } from '../../src/core/engine.ts';
import type { LifecycleEvent } from '../../src/core/events.ts';
import type { DelegationReceipt } from '../../src/core/types.ts';
import { TASK_ID, memoryWorkspace, readRun } from './fixtures.ts';
import type { Fixture } from './fixtures.ts';
import { completeStage, nativeStart } from './engineEvents.ts';

// One delegation driven through the engine on a clock the test moves by whole minutes: what the
// tests of reconciliation by grace (test/core/reconcile) and by the client's evidence
// (test/core/gone) both need.

export const GRACES = { stopGraceMs: 10 * 60_000, spawnGraceMs: 5 * 60_000 };

/** The time `minutes` after the start of the test's clock. */
export const at = (minutes: number) => new Date(Date.parse('2026-01-01T00:00:00.000Z') + minutes * 60_000).toISOString();

export type ClockedDelegation = ReturnType<typeof clockedDelegation>;

/** The engine over `fixture`, a workspace holding src/app.js, and a clock at minute 0 (`world.clock`). */
export function clockedDelegation(fixture: Fixture) {
  const workspace = memoryWorkspace({ 'src/app.js': 'v1\n' });
  let counter = 0;
  const world = {
    clock: 0,
    workspace,
    apply: (event: LifecycleEvent) =>
      applyEventNow(event, {
        repoRoot: fixture.root,
        fingerprinter: workspace.fingerprinter,
        now: () => at(world.clock),
        newId: () => `id-${(counter += 1)}`,
      }),
    pending(taskId = TASK_ID): DelegationReceipt {
      const receipt = readRun(fixture.taskDir(taskId)).pendingDelegation;
      if (!receipt) throw new Error('no pending delegation');
      return receipt;
    },
    /** begin-or-resume and prepare of `taskId`. */
    async prepared(taskId = TASK_ID) {
      expect((await world.apply({ intent: 'begin-or-resume', taskRef: taskId })).error).toBeNull();
      const result = await world.apply({ intent: 'prepare', taskRef: taskId, client: 'claude-code' });
      expect(result.error).toBeNull();
      return result;
    },
    /** Prepared, then a minute later started by Claude Code's child `childId`. */
    async activated(childId = 'child-1') {
      await world.prepared();
      world.clock += 1;
      const result = await world.apply(nativeStart({ childId }));
      expect(result.error).toBeNull();
    },
    /** Activated, then two minutes later the analysis completed, src/app.js changed. */
    async stageCompleted() {
      await world.activated();
      world.clock += 2;
      workspace.write('src/app.js', 'v2\n');
      const result = await world.apply(completeStage());
      expect(result.error).toBeNull();
    },
  };
  return world;
}
