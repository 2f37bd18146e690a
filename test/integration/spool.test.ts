import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TASK_ID, readRun } from '../support/fixtures.ts';
import { jsonOf, runBaton } from '../support/processes.ts';
import { useWorkerHarness } from '../support/workerHarness.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { completeStageFlags } from '../support/engineEvents.ts';
import { spooledFiles } from '../../src/queue/spool.ts';

// Hooks never hang an agent: with Redis down the event is spooled locally and applied, in order,
// once Redis is back (docs/architecture.md "Queue semantics", scenario 56).

const harness = useWorkerHarness();

/**
 * A repository served by a worker on a private Redis, hooks given `budgetMs`, its task begun and
 * prepared for Claude Code; `hook` runs the SubagentStart or SubagentStop of its child child-1.
 */
async function preparedOnPrivateRedis(label: string, budgetMs: number) {
  const redis = await harness.privateRedis();
  const { repo, env } = await harness.serve(label, { redisUrl: redis.url, env: { BATON_HOOK_BUDGET_MS: String(budgetMs) } });
  const task = async (...args: string[]) => jsonOf(await runBaton(['task', TASK_ID, ...args], { env, cwd: repo.root }));
  await task('begin-or-resume');
  await task('prepare', '--client', 'claude-code');
  const hook = (phase: 'SubagentStart' | 'SubagentStop', extraEnv: NodeJS.ProcessEnv = {}) =>
    runBaton(['hook', 'claude-code'], {
      env: { ...env, ...extraEnv },
      cwd: repo.root,
      input: nativePayload('claude-code', phase, 'executor', 'child-1', repo.root),
    });
  return { redis, repo, env, task, hook };
}

describe('Redis down', () => {
  it('a hook spools within its budget; the next command drains the spool before its own event', async () => {
    const { redis, repo, task, hook } = await preparedOnPrivateRedis('spool', 2_000);

    await redis.stop();
    const start = await hook('SubagentStart');
    expect(start.code).toBe(0);
    expect(start.ms).toBeLessThan(2_000 + 1_000);
    expect(start.stderr).toContain('Redis unreachable');
    expect(start.stderr).toContain('spooled');
    expect(spooledFiles(repo.root)).toHaveLength(1);
    expect(readRun(repo.taskDir).pendingDelegation?.status).toBe('prepared');

    await redis.start();
    fs.writeFileSync(`${repo.taskDir}/analysis.md`, '# A\n');
    // complete-stage needs the activation first: the CLI drains the spool before adding its own job.
    const completed = await task(...completeStageFlags({ agent: 'claude' }), '--timeout', '15000');
    expect(completed.status, JSON.stringify(completed)).toBe('running');
    expect(spooledFiles(repo.root)).toHaveLength(0);
    // BATON_HOOK_VERBOSE=1: wait for the result, so the run file can be read right after.
    const stop = await hook('SubagentStop', { BATON_HOOK_VERBOSE: '1' });
    expect(stop.code, stop.stderr).toBe(0);
    expect(stop.stdout).toBe('');
    expect(readRun(repo.taskDir).pendingDelegation).toMatchObject({ status: 'sealed', childId: 'child-1', parentId: 'parent-session' });
  }, 60_000);

  it('spooled events are drained by the worker, in order, when nobody else comes by', async () => {
    const { redis, repo, hook } = await preparedOnPrivateRedis('spool2', 1_500);
    await redis.stop();
    // start then stop: applied in this order the stop finds an activated (not completed) receipt and
    // pauses DELEGATION_STATE_INVALID; in the wrong order the stop would find nothing and the start
    // would leave the receipt activated.
    for (const phase of ['SubagentStart', 'SubagentStop'] as const) {
      const run = await hook(phase);
      expect(run.code).toBe(0);
    }
    expect(spooledFiles(repo.root)).toHaveLength(2);
    await redis.start();
    const deadline = Date.now() + 15_000;
    while (readRun(repo.taskDir).status !== 'paused' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(readRun(repo.taskDir).pause).toEqual({
      code: 'DELEGATION_STATE_INVALID',
      message: expect.stringContaining('is activated, expected stage-completed'),
      recoverable: true,
    });
    expect(spooledFiles(repo.root)).toHaveLength(0);
  }, 60_000);
});
