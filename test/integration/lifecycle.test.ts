import { describe, expect, it } from 'vitest';
import { TASK_ID, readRun } from '../support/fixtures.ts';
import { driveLifecycle } from '../support/lifecycleDriver.ts';
import { useWorkerHarness } from '../support/workerHarness.ts';

// The whole lifecycle, seven stages to a completed run, through the real CLI, hooks, queue and
// worker in a temporary git repository with real fingerprints.

const harness = useWorkerHarness();

describe('baton task + baton hook: full lifecycle', () => {
  it('drives analysis → review → plan → review → code → review → commit to a completed run', async () => {
    const { repo, env, worker } = await harness.serve('life');
    const { steps, final } = await driveLifecycle({ root: repo.root, taskRef: '01', env: { ...env }, taskArgs: [] }).catch(
      async (error) => {
        throw new Error(`${(error as Error).message}\nworker output:\n${worker.output()}`);
      },
    );
    expect(steps).toEqual([
      'analysis r1 → running',
      'review-analysis r1 → running',
      'plan r1 → running',
      'review-plan r1 → running',
      'code r1 → running',
      'review-code r1 → running',
      'commit r1 → completed',
    ]);
    expect(final).toMatchObject({ status: 'completed', changed: true, taskId: TASK_ID });
    const run = readRun(repo.taskDir);
    expect(run).toMatchObject({ status: 'completed', stepCount: 7, pendingDelegation: null, pause: null });
    expect(run.receipts.map((receipt) => `${receipt.role}:${receipt.stage}:${receipt.status}`)).toEqual([
      'executor:analysis:consumed',
      'reviewer:review-analysis:consumed',
      'executor:plan:consumed',
      'reviewer:review-plan:consumed',
      'executor:code:consumed',
      'reviewer:review-code:consumed',
      'executor:commit:consumed',
    ]);
    const code = run.receipts[4]!;
    expect(code.changedPaths).toEqual(expect.arrayContaining(['.agents/workspace/active/TASK-20260101-000001/code.md', 'src/retry.ts']));
    const review = run.receipts[5]!;
    expect(review.changedPaths.every((p) => p.startsWith('.agents/workspace/active/TASK-20260101-000001/'))).toBe(true);
    expect(review.beforeFingerprint).toMatch(/^[0-9a-f]{40}$/);
  }, 120_000);
});
