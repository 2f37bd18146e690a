import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { Queue } from 'bullmq';
import type { ConnectionOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, inject, it } from 'vitest';
import type { TestContext } from 'vitest';
import { TASK_ID, readRun, uniquePrefix } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import { batonEnv, jsonOf, runBaton, startWorkerProcess } from '../support/processes.ts';
import type { WorkerProcess } from '../support/processes.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { preToolUsePayload } from '../support/hookPayloads.ts';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { envelopeFor } from '../../src/queue/envelope.ts';
import { queueNameFor } from '../../src/queue/keys.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';

// Queue semantics of docs/architecture.md against real Redis and real worker processes. Each test
// has its own repository, Redis prefix and workers, so they run side by side, except the one that
// bounds a latency.

const redisUrl = inject('redisUrl');
let redis: Redis;

beforeAll(() => {
  redis = new Redis(redisOptionsFromUrl(redisUrl));
});
afterAll(() => redis.disconnect());

/**
 * One test's checkout, with its own repository and Redis prefix, its workers and the helpers bound
 * to them; the workers are killed and the repository removed when the test ends (the tests run
 * concurrently).
 */
function setUp(context: TestContext) {
  const repo = gitRepoWithTask();
  const prefix = uniquePrefix('q');
  const env = batonEnv({ redisUrl, prefix }, { BATON_HOOK_BUDGET_MS: '4000' });
  const workers: WorkerProcess[] = [];
  context.onTestFinished(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.stop('SIGKILL')));
    repo.cleanup();
  });

  async function worker(extraArgs: string[] = [], extraEnv: Record<string, string> = {}) {
    const started = await startWorkerProcess(['--repo', repo.root, '--lock-duration', '1500', '--stalled-interval', '500', ...extraArgs], {
      env: { ...env, ...extraEnv },
    });
    workers.push(started);
    return started;
  }

  function queue(): Queue {
    // ioredis' option type and BullMQ's differ only in typing.
    return new Queue(queueNameFor(repoIdentity(repo.root).id), { connection: redisOptionsFromUrl(redisUrl) as ConnectionOptions, prefix });
  }

  const task = async (...args: string[]) => jsonOf(await runBaton(['task', TASK_ID, ...args], { env, cwd: repo.root }));

  return { repo, prefix, env, workers, worker, queue, task };
}

describe.concurrent('baton task through the queue', () => {
  it('fails fast naming the command that starts a worker when none serves the repository', async (context) => {
    const { expect } = context;
    const { repo, env, queue } = setUp(context);
    const run = await runBaton(['task', TASK_ID, 'begin-or-resume'], { env, cwd: repo.root });
    expect(run.code).toBe(1);
    const result = jsonOf(run);
    expect(result.error.code).toBe('BATON_WORKER_UNAVAILABLE');
    expect(result.error.message).toContain(`baton worker --repo ${repo.root}`);
    expect(fs.existsSync(path.join(repo.taskDir, 'orchestration.json'))).toBe(false);
    const q = queue();
    expect((await q.getJobCounts()).waiting ?? 0).toBe(0);
    await q.close();
  });

  it('--worker inline applies the command with a worker inside the command', async (context) => {
    const { expect } = context;
    const { repo, env } = setUp(context);
    const result = jsonOf(await runBaton(['task', TASK_ID, 'begin-or-resume', '--worker', 'inline'], { env, cwd: repo.root }));
    expect(result).toMatchObject({ status: 'running', changed: true, taskId: TASK_ID });
    expect(readRun(repo.taskDir).status).toBe('running');
  });

  it('reports Redis being unreachable clearly', async (context) => {
    const { expect } = context;
    const { repo, env } = setUp(context);
    const run = await runBaton(['task', TASK_ID, 'begin-or-resume', '--redis', 'unix:///nonexistent/redis.sock'], { env, cwd: repo.root });
    expect(run.code).toBe(1);
    expect(jsonOf(run).error.code).toBe('BATON_REDIS_UNAVAILABLE');
  });

  it('read-only intents work without Redis', async (context) => {
    const { expect } = context;
    const { repo, env } = setUp(context);
    const run = await runBaton(['task', TASK_ID, 'route', '--redis', 'unix:///nonexistent/redis.sock'], { env, cwd: repo.root });
    expect(run.code).toBe(0);
    expect(jsonOf(run).next.action).toBe('analyze-task');
  });
});

describe.concurrent('one job at a time per repository, in enqueue order', () => {
  it('two worker processes never apply two jobs of one repository at once, and keep order', async (context) => {
    const { expect } = context;
    const { repo, worker, queue } = setUp(context);
    const pair = [await worker(), await worker()];
    const q = queue();
    const identity = repoIdentity(repo.root);
    const count = 120;
    const ids: string[] = [];
    for (let index = 0; index < count; index += 1) {
      const eventId = `c-order-${String(index).padStart(4, '0')}`;
      ids.push(eventId);
      const event =
        index === 0
          ? { intent: 'begin-or-resume' as const, taskRef: TASK_ID }
          : { intent: 'pause' as const, taskRef: TASK_ID, code: `STEP_${index}`, message: `step ${index}`, recoverable: true };
      await q.add(event.intent, envelopeFor(event, identity, 'cli', eventId), { jobId: eventId, attempts: 1 });
      // Bursts of ten with pauses between them: in a burst both workers race for the next job
      // (global concurrency must hold one back); between bursts both sit idle, so either can win.
      if (index % 10 === 9) await new Promise((r) => setTimeout(r, 40));
      // Halfway, the worker that applied the last job leaves, so the other one applies the rest:
      // both have then applied jobs, however the races went.
      if (index === count / 2) {
        while ((await q.getCompletedCount()) < index + 1) await new Promise((r) => setTimeout(r, 20));
        const last = await q.getJob(eventId);
        await pair.find((w) => w.output().includes(last!.processedBy!))!.stop('SIGTERM');
      }
    }
    const deadline = Date.now() + 30_000;
    while ((await q.getCompletedCount()) < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const jobs = await Promise.all(ids.map((id) => q.getJob(id)));
    const intervals = jobs.map((job) => ({ id: job!.id!, start: job!.processedOn!, end: job!.finishedOn!, by: job!.processedBy }));
    for (let index = 1; index < intervals.length; index += 1) {
      // Applied strictly one after another, in enqueue order.
      expect(intervals[index]!.start).toBeGreaterThanOrEqual(intervals[index - 1]!.end);
    }
    expect(new Set(intervals.map((interval) => interval.by)).size).toBe(2);
    expect(readRun(repo.taskDir).pause?.code).toBe(`STEP_${count - 1}`);
    await q.close();
  }, 60_000);

  it('keeps order around a failed (malformed) job', async (context) => {
    const { expect } = context;
    const { repo, worker, queue } = setUp(context);
    await worker();
    const q = queue();
    const identity = repoIdentity(repo.root);
    await q.add('begin-or-resume', envelopeFor({ intent: 'begin-or-resume', taskRef: TASK_ID }, identity, 'cli', 'c-a'), {
      jobId: 'c-a',
      attempts: 1,
    });
    await q.add('junk', { v: 1, eventId: 'c-bad', intent: 'advance' }, { jobId: 'c-bad', attempts: 1 });
    await q.add(
      'pause',
      envelopeFor({ intent: 'pause', taskRef: TASK_ID, code: 'AFTER', message: 'm', recoverable: true }, identity, 'cli', 'c-b'),
      { jobId: 'c-b', attempts: 1 },
    );
    const deadline = Date.now() + 10_000;
    while ((await q.getCompletedCount()) < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const [a, bad, b] = await Promise.all(['c-a', 'c-bad', 'c-b'].map((id) => q.getJob(id)));
    expect(await bad!.getState()).toBe('failed');
    expect(bad!.failedReason).toContain('malformed job envelope');
    expect(bad!.failedReason).toContain('nothing was changed');
    expect(a!.finishedOn!).toBeLessThanOrEqual(bad!.processedOn!);
    expect(bad!.finishedOn!).toBeLessThanOrEqual(b!.processedOn!);
    expect(readRun(repo.taskDir).pause?.code).toBe('AFTER');
    await q.close();
  });

  it('refuses a job for another checkout (BATON_CHECKOUT_MISMATCH), changing nothing; the root alone does not decide', async (context) => {
    const { expect } = context;
    const { repo, worker, queue } = setUp(context);
    await worker();
    const q = queue();
    const identity = repoIdentity(repo.root);
    // Another machine's checkout at the same path: same root, another checkout id.
    const foreign = envelopeFor(
      { intent: 'begin-or-resume', taskRef: TASK_ID },
      { id: '0123456789abcdef', root: identity.root, host: 'machine-b' },
      'cli',
      'c-forged',
    );
    const job = await q.add('begin-or-resume', foreign, { jobId: 'c-forged', attempts: 1 });
    const deadline = Date.now() + 10_000;
    while (!(await job.isFailed()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const failed = await q.getJob('c-forged');
    expect(failed!.failedReason).toBe(
      `BATON_CHECKOUT_MISMATCH: job is for checkout 0123456789abcdef (machine-b:${identity.root}) but this worker serves checkout ${identity.id} (${os.hostname()}:${identity.root}); refused, nothing was changed`,
    );
    expect(fs.existsSync(path.join(repo.taskDir, 'orchestration.json'))).toBe(false);
    // This checkout's id with an older root (enqueued before the checkout was moved): applied.
    const moved = envelopeFor(
      { intent: 'begin-or-resume', taskRef: TASK_ID },
      { id: identity.id, root: '/old/place/of/app' },
      'cli',
      'c-moved',
    );
    const applied = await q.add('begin-or-resume', moved, { jobId: 'c-moved', attempts: 1 });
    const until = Date.now() + 10_000;
    while (!(await applied.isCompleted()) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(readRun(repo.taskDir).status).toBe('running');
    await q.close();
  });
});

describe.concurrent('effectively once', () => {
  it('a duplicate native event (same Codex turn) returns the first result and changes nothing', async (context) => {
    const { expect } = context;
    const { repo, env, worker, queue, task } = setUp(context);
    await worker();
    expect((await task('begin-or-resume')).status).toBe('running');
    expect((await task('prepare', '--client', 'codex')).status).toBe('running');
    const payload = nativePayload('codex', 'SubagentStart', 'executor', 'child-1', repo.root);
    // BATON_HOOK_VERBOSE=1: the hook waits for the result and prints it on stderr (stdout stays empty).
    const verbose = { ...env, BATON_HOOK_VERBOSE: '1' };
    const resultOf = (run: { stderr: string }) => JSON.parse(/^baton: (\{.*\})$/m.exec(run.stderr)?.[1] ?? 'null');
    const first = await runBaton(['hook', 'codex'], { env: verbose, input: payload, cwd: repo.root });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe('');
    expect(resultOf(first).run.pendingDelegation.status).toBe('activated');
    const afterFirst = fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8');
    // Remove the job so BullMQ's own id deduplication cannot help: only the journal can.
    const q = queue();
    const ids = (await q.getCompleted()).map((job) => job.id!).filter((id) => id.startsWith('h-'));
    expect(ids).toHaveLength(1);
    await q.remove(ids[0]!);
    const second = await runBaton(['hook', 'codex'], { env: verbose, input: payload, cwd: repo.root });
    expect(second.code).toBe(0);
    expect(resultOf(second)).toEqual(resultOf(first));
    expect(fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8')).toBe(afterFirst);
    await q.close();
  });

  it('a worker killed after writing the run but before acknowledging: the redelivery returns the first result', async (context) => {
    const { expect } = context;
    const { repo, env, worker, queue, task } = setUp(context);
    const doomed = await worker([], { BATON_FAILPOINT: 'after-commit:prepare' });
    expect((await task('begin-or-resume')).status).toBe('running');
    const pending = runBaton(['task', TASK_ID, 'prepare', '--client', 'claude-code', '--timeout', '20000'], { env, cwd: repo.root });
    await new Promise<void>((resolve) => doomed.child.once('exit', () => resolve()));
    const written = fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8');
    expect(JSON.parse(written).pendingDelegation.status).toBe('prepared');
    // A later event queued while no worker runs must still be applied after the interrupted one.
    const q = queue();
    const later = envelopeFor(
      { intent: 'pause', taskRef: TASK_ID, code: 'LATER', message: 'after the crash', recoverable: true },
      repoIdentity(repo.root),
      'cli',
      'c-later',
    );
    await q.add('pause', later, { jobId: 'c-later', attempts: 1 });
    await worker();
    const result = jsonOf(await pending);
    expect(result).toMatchObject({ status: 'running', changed: true });
    expect(result.run.pendingDelegation.id).toBe(JSON.parse(written).pendingDelegation.id);
    const deadline = Date.now() + 10_000;
    while (readRun(repo.taskDir).pause?.code !== 'LATER' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const final = readRun(repo.taskDir);
    expect(final.pause?.code).toBe('LATER');
    expect(final.pendingDelegation?.id).toBe(JSON.parse(written).pendingDelegation.id);
    const interrupted = (await q.getJobs(['completed'])).find((job) => job.name === 'prepare')!;
    const laterJob = (await q.getJob('c-later'))!;
    expect(laterJob.processedOn!).toBeGreaterThanOrEqual(interrupted.finishedOn!);
    await q.close();
  }, 40_000);

  it('a worker killed after journaling but before writing: the redelivery finishes the write once', async (context) => {
    const { expect } = context;
    const { repo, env, worker } = setUp(context);
    const doomed = await worker([], { BATON_FAILPOINT: 'after-journal:begin-or-resume' });
    const pending = runBaton(['task', TASK_ID, 'begin-or-resume', '--timeout', '20000'], { env, cwd: repo.root });
    await new Promise<void>((resolve) => doomed.child.once('exit', () => resolve()));
    expect(fs.existsSync(path.join(repo.taskDir, 'orchestration.json'))).toBe(false);
    await worker();
    const result = jsonOf(await pending);
    expect(result).toMatchObject({ status: 'running', changed: true });
    expect(readRun(repo.taskDir).runId).toBe(result.run.runId);
  }, 40_000);
});

describe.concurrent('hooks', () => {
  it('unmanaged subagents exit 0 silently; invalid JSON exits 1 with the upstream message', async (context) => {
    const { expect } = context;
    const { repo, env } = setUp(context);
    const unmanaged = await runBaton(['hook', 'claude-code'], {
      env,
      input: JSON.stringify({ hook_event_name: 'SubagentStart', agent_type: 'general-purpose', agent_id: 'x', session_id: 'y' }),
      cwd: repo.root,
    });
    expect(unmanaged).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const invalid = await runBaton(['hook', 'claude-code'], { env, input: '{', cwd: repo.root });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toBe('Lifecycle delegation hook received invalid JSON\n');
    const big = await runBaton(['hook', 'claude-code'], { env, input: `{"x":"${'a'.repeat(70_000)}"}`, cwd: repo.root });
    expect(big.code).toBe(1);
    expect(big.stderr).toBe('Lifecycle delegation hook input exceeds 64 KiB\n');
    const badClient = await runBaton(['hook', 'gemini-cli'], { env, input: '{}', cwd: repo.root });
    expect(badClient.code).toBe(1);
    expect(badClient.stderr).toBe('Lifecycle delegation hook requires a supported --client value\n');
  });

  it('PreToolUse blocks a lifecycle spawn without a prepared delegation (exit 2), allows a matching one', async (context) => {
    const { expect } = context;
    const { repo, env, worker, task } = setUp(context);
    await worker();
    const spawn = (type: string) =>
      runBaton(['hook', 'claude-code'], {
        env,
        cwd: repo.root,
        input: preToolUsePayload(repo.root, { tool_name: 'Task', tool_input: { subagent_type: type, prompt: 'x' } }),
      });
    const blocked = await spawn('agent-infra-lifecycle-executor');
    expect(blocked.code).toBe(2);
    expect(blocked.stderr).toContain('no lifecycle delegation is prepared');
    expect((await spawn('general-purpose')).code).toBe(0);
    await task('begin-or-resume');
    await task('prepare', '--client', 'claude-code');
    expect((await spawn('agent-infra-lifecycle-executor')).code).toBe(0);
    const wrongRole = await spawn('agent-infra-lifecycle-reviewer');
    expect(wrongRole.code).toBe(2);
    expect(wrongRole.stderr).toContain('spawn agent-infra-lifecycle-executor');
  });
});

describe.concurrent('worker lifecycle', () => {
  it('SIGTERM finishes and exits 0; the heartbeat goes away', async (context) => {
    const { expect } = context;
    const { repo, prefix, workers, worker, task } = setUp(context);
    const w = await worker();
    await task('begin-or-resume');
    const key = `${prefix}:${queueNameFor(repoIdentity(repo.root).id)}:baton-heartbeat`;
    expect(await redis.zcard(key)).toBe(1);
    expect(await w.stop('SIGTERM')).toBe(0);
    workers.splice(workers.indexOf(w), 1);
    expect(await redis.zcard(key)).toBe(0);
  });
});

// Alone, after the others: it bounds the hook's time (within its budget), which the others' load could break.
describe('hooks: the budget', () => {
  it('with no worker: exits 0 within budget, says why, and the event is applied when a worker starts', async (context) => {
    const { expect } = context;
    const { repo, env, workers, worker, task } = setUp(context);
    await worker();
    await task('begin-or-resume');
    await task('prepare', '--client', 'claude-code');
    await Promise.all(workers.splice(0).map((w) => w.stop('SIGTERM')));
    // Heartbeats are removed on a clean stop.
    const run = await runBaton(['hook', 'claude-code'], {
      env,
      input: nativePayload('claude-code', 'SubagentStart', 'executor', 'child-1', repo.root),
      cwd: repo.root,
    });
    expect(run.code).toBe(0);
    expect(run.ms).toBeLessThan(4_000);
    expect(run.stderr).toContain('no worker serves');
    expect(readRun(repo.taskDir).pendingDelegation?.status).toBe('prepared');
    await worker();
    const deadline = Date.now() + 10_000;
    while (readRun(repo.taskDir).pendingDelegation?.status !== 'activated' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(readRun(repo.taskDir).pendingDelegation).toMatchObject({ status: 'activated', childId: 'child-1', parentId: 'parent-session' });
  }, 40_000);
});
