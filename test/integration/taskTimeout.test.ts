import fs from 'node:fs';
import path from 'node:path';
import { Queue } from 'bullmq';
import type { ConnectionOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, inject, it } from 'vitest';
import type { TestContext } from 'vitest';
import { activeTaskDir, taskFilePath } from '../../src/core/taskLayout.ts';
import { RepositoryQueueClient } from '../../src/queue/client.ts';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { envelopeFor } from '../../src/queue/envelope.ts';
import { eventIdForKey } from '../../src/queue/eventIds.ts';
import { queueNameFor } from '../../src/queue/keys.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { jobKey, workersKey } from '../../src/queue/keys.ts';
import { TASK_ID, TASK_ID_2, readRun, taskMd, uniquePrefix } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import { BATON_BIN, DENO_DIR, RUNTIMES, batonEnv, jsonOf, runProcess, startWorkerProcess } from '../support/processes.ts';
import type { CliRun, Runtime, WorkerProcess } from '../support/processes.ts';

// `baton task … --timeout` when no result comes in time (docs/architecture.md "Queue semantics"),
// the way users run it: the built bundle (bin/baton.mjs → dist/) against a real worker process that
// is frozen (SIGSTOP) or whose queue is paused (as from the dashboard). The command must answer
// BATON_TIMEOUT saying what became of its job, and a withdrawn job must never be applied later.
// Before the fix, the bundle's withdrawal crashed (`Queue is not a constructor`: a lazily imported
// CommonJS BullMQ has only `default` in the bundle) and the job was applied when the worker resumed.

const redisUrl = inject('redisUrl');
const PAUSE = ['pause', '--code', 'LATE', '--message', 'should not land late', '--recoverable', 'true'];

let redis: Redis;

beforeAll(() => {
  redis = new Redis(redisOptionsFromUrl(redisUrl));
});
afterAll(() => redis.disconnect());

/**
 * One test's checkout, with its own repository, Redis prefix and worker process, and the helpers
 * bound to them; the worker is woken and killed and the repository removed when the test ends (the
 * tests run concurrently).
 */
async function setUp(context: TestContext, label: string, workerEnv: Record<string, string> = {}) {
  const { expect } = context;
  const repo = gitRepoWithTask();
  let worker: WorkerProcess | null = null;
  context.onTestFinished(async () => {
    if (worker) {
      worker.child.kill('SIGCONT');
      await worker.stop('SIGKILL');
    }
    repo.cleanup();
  });
  // A second task, whose commands show that the worker has drained everything queued before them.
  fs.mkdirSync(activeTaskDir(repo.root, TASK_ID_2), { recursive: true });
  fs.writeFileSync(taskFilePath(activeTaskDir(repo.root, TASK_ID_2)), taskMd(TASK_ID_2));
  const prefix = uniquePrefix(label);
  const env = batonEnv({ redisUrl, prefix }, { DENO_DIR, NO_COLOR: '1' });
  worker = await startWorkerProcess(['--repo', repo.root], { env: { ...env, ...workerEnv } });

  const baton = (args: readonly string[], runtime: Runtime = RUNTIMES.node): Promise<CliRun> =>
    runProcess(runtime.command, [...runtime.args, BATON_BIN, ...args], { env, cwd: repo.root, timeoutMs: 60_000 });

  async function applied(...args: string[]) {
    const run = await baton(['task', ...args]);
    expect(run.code, `${args.join(' ')}: ${run.stdout}${run.stderr}`).toBe(0);
    return jsonOf(run);
  }

  const queueName = () => queueNameFor(repoIdentity(repo.root).id);
  const runFile = () => path.join(repo.taskDir, 'orchestration.json');
  const snapshot = () => ({ bytes: fs.readFileSync(runFile(), 'utf8'), mtimeMs: fs.statSync(runFile()).mtimeMs });

  /**
   * Jobs of a repository are applied one at a time in enqueue order, so once a later command's result
   * is back, the worker has dealt with everything queued before it.
   */
  async function drained(): Promise<void> {
    expect((await applied(TASK_ID_2, 'begin-or-resume')).status).toBe('running');
  }

  function expectWithdrawn(run: CliRun, timeoutMs: number): string {
    expect(run.code, run.stdout + run.stderr).toBe(1);
    const { error } = jsonOf(run);
    expect(error.code).toBe('BATON_TIMEOUT');
    expect(error.message).toMatch(
      new RegExp(`^no result within ${timeoutMs} ms; job (c-[0-9a-f-]{36}) was withdrawn before any worker took it: nothing was applied$`),
    );
    return /job (c-[0-9a-f-]+)/.exec(error.message)![1]!;
  }

  /** Waits for the worker process's next heartbeat, so that callers find it fresh for the whole TTL after. */
  async function nextHeartbeat(): Promise<void> {
    const key = workersKey(prefix);
    const [, before = '0'] = await redis.zrange(key, '0', '0', 'WITHSCORES');
    for (;;) {
      const [, score = '0'] = await redis.zrange(key, '0', '0', 'WITHSCORES');
      if (Number(score) > Number(before)) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  return { repo, prefix, worker, baton, applied, queueName, snapshot, drained, expectWithdrawn, nextHeartbeat };
}

/** The process state letter from /proc (T: stopped). */
function processState(pid: number): string {
  return /^\d+ \(.*\) (\S)/.exec(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1] ?? '?';
}

// Each test has its own repository, Redis prefix and worker, and what it asserts does not depend on
// how fast the machine is (a frozen worker or a paused queue answers nothing): they run side by side,
// but for the last.
describe.concurrent('baton task --timeout with a worker that does not answer (built bundle)', () => {
  it('frozen worker (SIGSTOP): BATON_TIMEOUT, job withdrawn, nothing applied after SIGCONT', async (context) => {
    const { expect } = context;
    const { repo, prefix, worker, baton, applied, queueName, snapshot, drained, expectWithdrawn, nextHeartbeat } = await setUp(
      context,
      'timeout-frozen',
    );
    expect((await applied(TASK_ID, 'begin-or-resume')).status).toBe('running');
    const before = snapshot();
    // The command must find the worker's heartbeat fresh (else it answers BATON_WORKER_UNAVAILABLE
    // without enqueueing): freeze the worker right after a beat, and try again in the rare case
    // that starting the command took longer than the heartbeat's TTL.
    let run: CliRun | null = null;
    for (let attempt = 0; attempt < 5 && !run; attempt += 1) {
      await nextHeartbeat();
      worker.child.kill('SIGSTOP');
      const answer = await baton(['task', TASK_ID, ...PAUSE, '--timeout', '1500']);
      if (jsonOf(answer).error?.code === 'BATON_WORKER_UNAVAILABLE') worker.child.kill('SIGCONT');
      else run = answer;
    }
    expect(run, 'the command never found the frozen worker fresh').not.toBeNull();
    const jobId = expectWithdrawn(run!, 1500);
    expect(await redis.exists(jobKey(prefix, queueName(), jobId))).toBe(0);
    worker.child.kill('SIGCONT');
    await drained();
    expect(snapshot()).toEqual(before);
    expect(readRun(repo.taskDir)).toMatchObject({ status: 'running', pause: null });
  }, 90_000);

  it.for(['node', 'bun', 'deno'] as const)(
    'queue paused from the dashboard, command on %s: BATON_TIMEOUT, withdrawn, nothing applied on resume',
    { timeout: 90_000 },
    async (name, context) => {
      const { expect } = context;
      const { prefix, baton, applied, queueName, snapshot, drained, expectWithdrawn } = await setUp(context, `timeout-paused-${name}`);
      expect((await applied(TASK_ID, 'begin-or-resume')).status).toBe('running');
      const before = snapshot();
      const queue = new Queue(queueName(), {
        connection: redisOptionsFromUrl(redisUrl) as ConnectionOptions,
        prefix,
        skipVersionCheck: true,
      });
      try {
        await queue.pause();
        const run = await baton(['task', TASK_ID, ...PAUSE, '--timeout', '1500'], RUNTIMES[name]);
        const jobId = expectWithdrawn(run, 1500);
        expect(await queue.getJob(jobId)).toBeUndefined();
        await queue.resume();
        await drained();
        expect(snapshot()).toEqual(before);
      } finally {
        await queue.close();
      }
    },
  );

  // Alone, after the others: its command must find the frozen worker's last heartbeat fresh (5 s TTL) and
  // cannot retry; beside the others a loaded machine started it too late (BATON_WORKER_UNAVAILABLE).
  it.sequential('a worker that took the job and froze: BATON_TIMEOUT says it is being applied, and it is', async (context) => {
    const { expect } = context;
    // The worker stops itself (SIGSTOP) while applying `pause`, after journaling it and before
    // writing the run: it holds the job. Made to happen, not hoped for: the job is queued first
    // (with the id the command's --idempotency-key gives), and the command runs once the worker is
    // seen stopped, so the job is taken before the command even starts waiting.
    const { repo, prefix, worker, baton, applied, snapshot, drained } = await setUp(context, 'timeout-taken', {
      BATON_FAILPOINT: 'after-journal:pause:stop',
    });
    expect((await applied(TASK_ID, 'begin-or-resume')).status).toBe('running');
    const before = snapshot();
    const identity = repoIdentity(repo.root);
    const client = await RepositoryQueueClient.connect({ redisUrl, prefix }, identity, 2_000);
    const jobId = eventIdForKey('taken-by-a-frozen-worker');
    try {
      await client.enqueue(
        envelopeFor(
          { intent: 'pause', taskRef: TASK_ID, code: 'LATE', message: 'should not land late', recoverable: true },
          identity,
          'cli',
          jobId,
        ),
      );
    } finally {
      await client.close();
    }
    while (processState(worker.child.pid!) !== 'T') await new Promise((resolve) => setTimeout(resolve, 20));
    const run = await baton(['task', TASK_ID, ...PAUSE, '--idempotency-key', 'taken-by-a-frozen-worker', '--timeout', '1500']);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(jsonOf(run).error).toEqual({
      code: 'BATON_TIMEOUT',
      message: `no result within 1500 ms; a worker took job ${jobId} before it could be withdrawn, so it is being applied (not withdrawn): see 'baton task ${TASK_ID} status' for its outcome`,
    });
    expect(snapshot()).toEqual(before);
    worker.child.kill('SIGCONT');
    await drained();
    expect(readRun(repo.taskDir)).toMatchObject({ status: 'paused', pause: { code: 'LATE' } });
  }, 90_000);
});
