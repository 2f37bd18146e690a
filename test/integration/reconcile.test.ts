import fs from 'node:fs';
import path from 'node:path';
import { describe, inject, it } from 'vitest';
import type { TestContext } from 'vitest';
import type { OrchestrationRun } from '../../src/core/types.ts';
import { TASK_ID, uniquePrefix } from '../support/fixtures.ts';
import { completeStageArgs } from '../support/runSteps.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { batonEnv, jsonOf, runBaton, startWorkerProcess } from '../support/processes.ts';
import type { CliRun, WorkerProcess } from '../support/processes.ts';
import { dashboardUrlOf, startBaton } from '../support/services.ts';
import type { ServiceProcess } from '../support/services.ts';
import { Redis } from 'ioredis';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { metricsKey } from '../../src/queue/keys.ts';
import { afterRounds, workerIdOf } from '../support/dutyRounds.ts';
import { doStageWork, queueFor } from '../chaos/support.ts';
import type { StageNext } from '../chaos/support.ts';

// Reconciliation through hooks, the CLI, the queue and worker processes with short graces
// (docs/architecture.md "Reconciliation"): the four situations a stuck delegation can be in.

const redisUrl = inject('redisUrl');
const GRACE = ['--stop-grace', '2s', '--spawn-grace', '2s'];

async function until<T>(read: () => T, done: (value: T) => boolean, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * One test's checkout: its repository, Redis prefix and processes, and the helpers bound to them;
 * stopped and removed when the test ends (the tests run concurrently).
 */
async function setUp(context: TestContext, label: string) {
  const { expect } = context;
  const repo = gitRepoWithTask();
  const prefix = uniquePrefix(label);
  const env = batonEnv({ redisUrl, prefix });
  const workers: WorkerProcess[] = [];
  const services: ServiceProcess[] = [];
  context.onTestFinished(async () => {
    for (const worker of workers.splice(0)) await worker.stop('SIGKILL');
    for (const service of services.splice(0)) await service.stop('SIGKILL');
    repo.cleanup();
  });

  async function startWorker(args: readonly string[] = GRACE): Promise<WorkerProcess> {
    const worker = await startWorkerProcess(['--repo', repo.root, ...args], { env });
    workers.push(worker);
    return worker;
  }

  /**
   * The steps before the grace matters run under a worker whose graces no loaded machine reaches, so
   * the situation is made, not raced: the short-grace worker starts once it is there.
   */
  async function beforeTheGrace<T>(steps: () => Promise<T>): Promise<T> {
    const setup = await startWorker(['--stop-grace', '10m', '--spawn-grace', '10m']);
    const made = await steps();
    expect(await setup.stop('SIGTERM')).toBe(0);
    workers.splice(workers.indexOf(setup), 1);
    return made;
  }

  const task = async (ref: string, ...args: string[]) =>
    jsonOf(await runBaton(['task', ref, ...args, '--timeout', '20000'], { env, cwd: repo.root }));
  /** A native hook event; BATON_HOOK_VERBOSE makes the hook wait for its result, so the run file is current after it. */
  const hook = (phase: 'SubagentStart' | 'SubagentStop', role: string, childId: string): Promise<CliRun> =>
    runBaton(['hook', 'claude-code'], {
      env: { ...env, BATON_HOOK_VERBOSE: '1' },
      cwd: repo.root,
      input: nativePayload('claude-code', phase, role, childId, repo.root),
    });
  const runOf = (taskDir = repo.taskDir) =>
    JSON.parse(fs.readFileSync(path.join(taskDir, 'orchestration.json'), 'utf8')) as OrchestrationRun;

  /** begin → route → prepare → SubagentStart [→ stage work → complete-stage]; the stop never comes. */
  async function startStage(complete: boolean): Promise<StageNext> {
    await task(TASK_ID, 'begin-or-resume');
    const next = (await task(TASK_ID, 'route')).next as StageNext;
    expect((await task(TASK_ID, 'prepare', '--client', 'claude-code')).status).toBe('running');
    expect(await hook('SubagentStart', next.role, 'child-1')).toMatchObject({ code: 0, stdout: '' });
    if (complete) {
      doStageWork(repo.root, repo.taskDir, next);
      const completed = await task(TASK_ID, ...completeStageArgs(next));
      expect(completed.run.pendingDelegation.status).toBe('stage-completed');
    }
    return next;
  }

  /** The reconcile jobs the checkout's queue holds, whatever their state. */
  async function reconcileJobs(): Promise<number> {
    const queue = queueFor(redisUrl, prefix, repo.root);
    try {
      const jobs = await queue.getJobs(['completed', 'failed', 'waiting', 'active', 'delayed']);
      return jobs.filter((job) => job?.name === 'reconcile').length;
    } finally {
      await queue.close();
    }
  }

  /** The worker's counters of the checkout's reconcile jobs (src/workers/jobRecords.ts), by outcome. */
  async function reconcileCounters(): Promise<Record<string, number>> {
    const redis = new Redis(redisOptionsFromUrl(redisUrl));
    try {
      const fields = await redis.hgetall(metricsKey(prefix, 'events'));
      const mine = `${repoIdentity(repo.root).id}\treconcile\t`;
      return Object.fromEntries(
        Object.entries(fields)
          .filter(([field]) => field.startsWith(mine))
          .map(([field, count]) => [field.slice(mine.length), Number(count)]),
      );
    } finally {
      redis.disconnect();
    }
  }

  return { repo, prefix, env, services, startWorker, beforeTheGrace, task, hook, runOf, startStage, reconcileJobs, reconcileCounters };
}

// Each test has its own repository, Redis prefix and workers; (1)–(3) make their situation before
// the short grace starts, so they run side by side.
describe('reconciliation through a worker process', { timeout: 180_000 }, () => {
  it.concurrent('(1) stage-completed, no SubagentStop: sealed by the worker, advance consumes; the late stop with no change leaves the run running', async (context) => {
    const { expect } = context;
    const { repo, env, services, beforeTheGrace, startStage, hook, runOf, task } = await setUp(context, 'rec-seal');
    const next = await beforeTheGrace(() => startStage(true));
    const worker = await startBaton(['worker', '--repo', repo.root, ...GRACE, '--dashboard', '--port', '0'], { env, ready: / ready:/ });
    services.push(worker);
    const api = async () =>
      (await (await fetch(new URL(`api/runs/${repoIdentity(repo.root).id}/${TASK_ID}`, dashboardUrlOf(worker)))).json()) as any;
    const sealed = await until(
      () => runOf().pendingDelegation,
      (receipt) => receipt?.status === 'sealed',
      'the seal',
    );
    expect(sealed?.reconciliations).toEqual([expect.objectContaining({ kind: 'sealed', graceMs: 2000 })]);
    expect(sealed?.changedPaths).toContain(`.agents/workspace/active/${TASK_ID}/${next.artifact}`);
    expect(Date.parse(sealed!.sealedAt!) - Date.parse(sealed!.stageCompletedAt!)).toBeGreaterThanOrEqual(2000);
    expect(worker.output()).toContain('queued reconcile (sealed)');
    // The child's stop, late: a later turn with no change.
    expect(await hook('SubagentStop', next.role, 'child-1')).toMatchObject({ code: 0, stdout: '' });
    expect(runOf()).toMatchObject({ status: 'running', pendingDelegation: { status: 'sealed' } });
    const advanced = await task(TASK_ID, 'advance');
    expect(advanced).toMatchObject({ status: 'running', error: null });
    expect(advanced.run.receipts.at(-1)).toMatchObject({ status: 'consumed', reconciliations: [{ kind: 'sealed' }] });
    // Marked where people look: baton runs, the run page's timeline, /metrics.
    const runs = await runBaton(['runs'], { env, cwd: repo.root });
    expect(runs.stdout).toContain('sealed by baton: no SubagentStop within 2 s');
    const step = (await api()).view.timeline.find((entry: any) => entry.status === 'sealed');
    expect(step.reconciled).toMatch(/^sealed by baton: no SubagentStop within 2 s \(/);
    const metrics = await (await fetch(new URL('metrics', dashboardUrlOf(worker)))).text();
    expect(metrics).toContain(`baton_reconciliations_total{repository="${repo.root}",machine=`);
    expect(metrics).toMatch(/baton_reconciliations_total\{[^}]*kind="sealed"\} 1\n/);
  });

  it.concurrent('(2) activated, never completed, no stop: the run is paused recoverably and the message names abort', async (context) => {
    const { expect } = context;
    const { beforeTheGrace, startStage, startWorker, runOf, task } = await setUp(context, 'rec-stall');
    await beforeTheGrace(() => startStage(false));
    await startWorker();
    const run = await until(
      () => runOf(),
      (value) => value.status === 'paused',
      'the pause',
    );
    expect(run.pause).toMatchObject({ code: 'BATON_DELEGATION_STALLED', recoverable: true });
    expect(run.pause?.message).toContain(`baton task ${TASK_ID} abort --reason`);
    expect(run.pendingDelegation).toMatchObject({ status: 'activated', reconciliations: [{ kind: 'stalled' }] });
    // Its way out, as the message says.
    expect((await task(TASK_ID, 'abort', '--reason', 'child gone')).error).toBeNull();
    expect(await task(TASK_ID, 'begin-or-resume')).toMatchObject({ status: 'running', changed: true });
  });

  it.concurrent('(3) prepared, never spawned: the repository is released, another task prepares, the first is paused recoverably without a pending delegation', async (context) => {
    const { expect } = context;
    const { repo, env, beforeTheGrace, startWorker, runOf, task, hook } = await setUp(context, 'rec-spawn');
    await beforeTheGrace(async () => {
      const second = await runBaton(['new', 'A second task'], { env, cwd: repo.root });
      expect(second.code).toBe(0);
      await task(TASK_ID, 'begin-or-resume');
      await task(TASK_ID, 'prepare', '--client', 'claude-code');
      await task('02', 'begin-or-resume');
      expect((await task('02', 'prepare', '--client', 'codex')).error?.code).toBe('ORCHESTRATION_DELEGATION_BUSY');
    });
    await startWorker();
    const run = await until(
      () => runOf(),
      (value) => value.pendingDelegation === null,
      'the give-up',
    );
    expect(run.pause).toMatchObject({ code: 'BATON_DELEGATION_NOT_STARTED', recoverable: true });
    expect(run.pause?.message).toContain(`baton task ${TASK_ID} begin-or-resume`);
    expect(run.receipts.at(-1)).toMatchObject({ status: 'aborted', reconciliations: [{ kind: 'not-started' }] });
    expect(await task('02', 'prepare', '--client', 'codex')).toMatchObject({ status: 'running', error: null });
    // A late SubagentStart for the given-up delegation of task 01 changes nothing.
    const before = fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8');
    const late = await hook('SubagentStart', 'executor', 'late-child');
    // Verbose, the hook says the result it waited for (without BATON_HOOK_VERBOSE it only enqueues).
    expect(late.stderr).toContain('DELEGATION_STATE_INVALID');
    expect(late.stderr).toContain('baton gave it up');
    expect(fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8')).toBe(before);
  });

  // Sequential, after the others: its steps race the 4 s graces of a live worker, which others' load could make it miss.
  it('(4) a worker killed and restarted during the grace reconciles once, at the grace, not twice', async (context) => {
    const { expect } = context;
    const { prefix, startWorker, startStage, runOf, reconcileJobs, reconcileCounters } = await setUp(context, 'rec-restart');
    const first = await startWorker(['--stop-grace', '4s', '--spawn-grace', '4s']);
    await startStage(true);
    await first.stop('SIGKILL');
    // Restarted, twice over: two workers serve the checkout now.
    const restarted = [
      await startWorker(['--stop-grace', '4s', '--spawn-grace', '4s']),
      await startWorker(['--stop-grace', '4s', '--spawn-grace', '4s']),
    ];
    const sealed = await until(
      () => runOf().pendingDelegation,
      (receipt) => receipt?.status === 'sealed',
      'the seal',
    );
    expect(Date.parse(sealed!.sealedAt!) - Date.parse(sealed!.stageCompletedAt!)).toBeGreaterThanOrEqual(4000);
    // Two more scans by each live worker that began after the seal (their round counters say so):
    // nothing else is queued or recorded.
    await afterRounds(
      redisUrl,
      prefix,
      restarted.map((worker) => workerIdOf(worker.output())),
      'reconcile-scan',
      3,
    );
    expect(runOf().pendingDelegation?.reconciliations).toHaveLength(1);
    expect(await reconcileJobs()).toBe(1);
    // Applied once: one application of a reconcile job, one reconciliation counted (a replay would count as applied).
    expect(await reconcileCounters()).toEqual({ 'applied:running': 1, 'reconciled:sealed': 1 });
  });
});
