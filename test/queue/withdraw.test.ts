import { Queue, Worker } from 'bullmq';
import type { ConnectionOptions, Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { failed } from '../../src/core/results.ts';
import { RepositoryQueueClient } from '../../src/queue/client.ts';
import { RawQueueClient } from '../../src/queue/hookTransport.ts';
import { rawRedisTarget } from '../../src/queue/resp.ts';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { envelopeFor } from '../../src/queue/envelope.ts';
import { queueNameFor } from '../../src/queue/keys.ts';
import { eventsStreamKey, jobKey } from '../../src/queue/keys.ts';
import { uniquePrefix } from '../support/fixtures.ts';

// `baton task` withdraws its job when no result came in time (src/queue/client.ts, withdraw), and a
// PreToolUse hook the claim of a spawn it blocks (src/queue/hookTransport.ts, over raw RESP). The
// answer must be true whatever the worker did meanwhile: removed only if no worker ever took it,
// and otherwise left in place and named (taken, finished), decided in one script with BullMQ's own
// removal (src/queue/withdraw.ts). Each state is made here with BullMQ's real Worker, not simulated
// in Redis, over both clients.

const redisUrl = inject('redisUrl');
const connection = () => redisOptionsFromUrl(redisUrl) as ConnectionOptions;
const repo = { id: '0123456789abcdef', root: '/srv/withdraw' };
const queueName = queueNameFor(repo.id);

let redis: Redis;
let cleanup: (() => Promise<unknown>)[] = [];
beforeAll(() => {
  redis = new Redis(redisOptionsFromUrl(redisUrl));
});
afterAll(() => redis.disconnect());
afterEach(async () => {
  for (const close of cleanup.reverse()) await close();
  cleanup = [];
});

type Transport = 'ioredis' | 'raw';

async function setup(label: string, transport: Transport) {
  const prefix = uniquePrefix(`${label}-${transport}`);
  const client =
    transport === 'ioredis'
      ? await RepositoryQueueClient.connect({ redisUrl, prefix }, repo, 2_000)
      : await RawQueueClient.connect(rawRedisTarget(redisUrl)!, prefix, repo, 2_000);
  const queue = new Queue(queueName, { connection: connection(), prefix, skipVersionCheck: true });
  cleanup.push(
    () => client.close(),
    () => queue.close(),
  );
  const enqueue = async (id: string) => {
    await client.enqueue(envelopeFor({ intent: 'advance', taskRef: '01' }, repo, 'cli', id));
  };
  /** A worker that takes jobs by hand (no processor), as a frozen worker would hold one. */
  const holder = (lockDuration: number) => {
    const worker = new Worker(queueName, null, {
      connection: connection(),
      prefix,
      lockDuration,
      stalledInterval: 100,
      skipVersionCheck: true,
    });
    cleanup.push(() => worker.close(true));
    return worker;
  };
  const lastEvent = async () => {
    const [[, fields] = ['', []]] = await redis.xrevrange(eventsStreamKey(prefix, queueName), '+', '-', 'COUNT', 1);
    return Object.fromEntries(fields.flatMap((value, index) => (index % 2 === 0 ? [[value, fields[index + 1]]] : [])));
  };
  return { prefix, client, queue, enqueue, holder, lastEvent };
}

describe.each(['ioredis', 'raw'] as const)('withdraw over %s', (transport) => {
  it('removes a job no worker took, as Job.remove does (job gone, "removed" event)', async () => {
    const { prefix, client, queue, enqueue, lastEvent } = await setup('withdraw-wait', transport);
    await enqueue('c-waiting');
    expect(await client.withdraw('c-waiting')).toEqual({ kind: 'withdrawn' });
    expect(await queue.getJob('c-waiting')).toBeUndefined();
    expect(await redis.exists(jobKey(prefix, queueName, 'c-waiting'))).toBe(0);
    expect(await queue.getWaitingCount()).toBe(0);
    expect(await lastEvent()).toMatchObject({ event: 'removed', jobId: 'c-waiting', prev: 'wait' });
    expect(await client.withdraw('c-waiting')).toEqual({ kind: 'missing' });
  });

  it('removes a job of a queue paused from the dashboard', async () => {
    const { client, queue, enqueue, lastEvent } = await setup('withdraw-paused', transport);
    await queue.pause();
    await enqueue('c-paused');
    expect(await queue.getJobState('c-paused')).toBe('waiting');
    expect(await client.withdraw('c-paused')).toEqual({ kind: 'withdrawn' });
    expect(await queue.getJob('c-paused')).toBeUndefined();
    expect(await lastEvent()).toMatchObject({ event: 'removed', jobId: 'c-paused' });
  });

  it('leaves a job a worker holds, and says so; once it finished, answers with its outcome', async () => {
    const { client, queue, enqueue, holder } = await setup('withdraw-taken', transport);
    await enqueue('c-taken');
    const worker = holder(30_000);
    const job = (await worker.getNextJob('token-1')) as Job;
    expect(job.id).toBe('c-taken');
    expect(await client.withdraw('c-taken')).toEqual({ kind: 'taken' });
    expect(await queue.getJobState('c-taken')).toBe('active');
    const result = failed('ORCHESTRATION_RUN_MISSING', 'no run');
    await job.moveToCompleted(result, 'token-1', false);
    expect(await client.withdraw('c-taken')).toEqual({ kind: 'finished', outcome: { kind: 'completed', value: result } });
    // A finished job is not removed by a withdrawal: its record stays for the dashboard.
    expect(await queue.getJobState('c-taken')).toBe('completed');
  });

  it('leaves a job whose worker froze past its lock, before and after a stall check hands it back', async () => {
    const { client, queue, enqueue, holder } = await setup('withdraw-stalled', transport);
    await enqueue('c-stalled');
    const frozen = holder(200);
    expect((await frozen.getNextJob('token-frozen'))?.id).toBe('c-stalled');
    // No lock renewal (as with a SIGSTOPped worker): the lock lapses, the job stays in `active`,
    // where BullMQ's Job.remove alone would remove it while the frozen worker may still apply it.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await redis.exists(`${jobKey(queue.opts.prefix!, queueName, 'c-stalled')}:lock`)).toBe(0);
    expect(await queue.getJobState('c-stalled')).toBe('active');
    expect(await client.withdraw('c-stalled')).toEqual({ kind: 'taken' });
    // Another worker's stall check (two passes, at most one per stalledInterval: mark, then move)
    // hands it back to `wait`.
    const checker = holder(200) as unknown as { moveStalledJobsToWait(): Promise<unknown> };
    await checker.moveStalledJobsToWait();
    await new Promise((resolve) => setTimeout(resolve, 150));
    await checker.moveStalledJobsToWait();
    expect(await queue.getJobState('c-stalled')).toBe('waiting');
    expect(await client.withdraw('c-stalled')).toEqual({ kind: 'taken' });
    expect(await queue.getJob('c-stalled')).toBeDefined();
  });

  it('reports a job that is not there as missing', async () => {
    const { client } = await setup('withdraw-missing', transport);
    expect(await client.withdraw('c-never-added')).toEqual({ kind: 'missing' });
  });

  it('runs the script by its sha, and sends its text once after Redis forgot it (SCRIPT FLUSH)', async () => {
    const { client, queue, enqueue } = await setup('withdraw-flushed', transport);
    await enqueue('c-flushed');
    await redis.script('FLUSH');
    expect(await client.withdraw('c-flushed')).toEqual({ kind: 'withdrawn' });
    expect(await queue.getJob('c-flushed')).toBeUndefined();
  });
});
