import { Queue, Worker } from 'bullmq';
import type { Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { uniquePrefix } from '../support/fixtures.ts';
import { connectDurable, redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { keepSpareConnections } from '../../src/workers/spareConnections.ts';
import type { SpareConnections } from '../../src/workers/spareConnections.ts';

// Spare connections (src/workers/spareConnections.ts): the shared connection hands a BullMQ Worker
// a blocking connection opened beforehand. What a Worker does with it must stay BullMQ's: every job
// applied once and in order under the queue-wide limit of one, a job left active by a consumer that
// died handed over once its lock lapses, and a spare that lost its connection no trap.

const url = inject('redisUrl');
const probe = new Redis(redisOptionsFromUrl(url));
let shared: Redis;
let spares: SpareConnections;
const opened: Worker[] = [];

async function until(what: string, condition: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The connections whose name starts with `start`: id → name. */
async function namedConnections(start: string): Promise<Map<string, string>> {
  const list = String(await probe.client('LIST'));
  const entries = [...list.matchAll(/^id=(\d+) .* name=(\S*)/gm)].map((match) => [match[1]!, match[2]!] as const);
  return new Map(entries.filter(([, name]) => name.startsWith(start)));
}

const named = async (start: string) => [...(await namedConnections(start)).values()];

function consumer(queueName: string, prefix: string, process: (job: Job) => Promise<unknown>): Worker {
  const worker = new Worker(queueName, process, {
    connection: shared,
    prefix,
    concurrency: 1,
    skipVersionCheck: true,
    lockDuration: 1_000,
    stalledInterval: 300,
    maxStalledCount: 10,
  });
  worker.on('error', () => undefined);
  opened.push(worker);
  return worker;
}

beforeAll(async () => {
  shared = connectDurable(url, 'baton-worker-spares-test');
  await until('the shared connection', () => shared.status === 'ready');
  spares = keepSpareConnections(
    shared,
    () => 2,
    'baton-spare-test',
    () => undefined,
  );
  spares.adjust();
});

afterAll(async () => {
  await Promise.all(opened.map((worker) => worker.close(true).catch(() => undefined)));
  spares.close();
  shared.disconnect();
  probe.disconnect();
});

describe('spare connections', () => {
  it('hands out a ready connection under the name asked for, then opens the next one', async () => {
    await until('two spares ready', async () => spares.count() === 2 && (await named('baton-spare-test')).length === 2);
    const taken = shared.duplicate({ connectionName: 'taken-by-a-worker' });
    expect(taken.status).toBe('ready');
    expect(await taken.client('GETNAME')).toBe('taken-by-a-worker');
    await until('the pool refilled', async () => spares.count() === 2 && (await named('baton-spare-test')).length === 2);
    taken.disconnect();
    // Anything but a name is the caller's own connection, as without spares.
    const other = shared.duplicate({ db: 0 });
    expect(other.options.connectionName).toBe('baton-worker-spares-test');
    other.disconnect();
  });

  it('Workers opened on spares apply every job once and in order under the queue-wide limit, even right after the spares were killed', async () => {
    const prefix = uniquePrefix('spares');
    const queueName = 'spares-order';
    const queue = new Queue(queueName, { connection: probe, prefix, skipVersionCheck: true });
    await queue.setGlobalConcurrency(1);
    await until('two spares ready', () => spares.count() === 2);
    // Every spare's connection dropped under it: the Workers must not be left with a dead one.
    const killed = await namedConnections('baton-spare-test');
    expect(killed.size).toBe(2);
    for (const id of killed.keys()) await probe.client('KILL', 'ID', id);
    const applied: number[] = [];
    let running = 0;
    let overlapping = 0;
    const apply = async (job: Job) => {
      running += 1;
      if (running > 1) overlapping += 1;
      await new Promise((resolve) => setTimeout(resolve, 2));
      applied.push(job.data.n as number);
      running -= 1;
    };
    // Two Workers on the same queue (two checkouts' worth of spares): still one job at a time.
    consumer(queueName, prefix, apply);
    consumer(queueName, prefix, apply);
    for (let n = 0; n < 40; n += 1) await queue.add('event', { n }, { jobId: `e-${n}`, attempts: 1 });
    await until('every job applied', () => applied.length >= 40);
    expect(applied).toEqual([...Array(40).keys()]);
    expect(overlapping).toBe(0);
    await queue.close();
  }, 30_000);

  it('hands a job left active by a Worker that died over to another Worker on a spare, once its lock lapses', async () => {
    const prefix = uniquePrefix('spares');
    const queueName = 'spares-stalled';
    const queue = new Queue(queueName, { connection: probe, prefix, skipVersionCheck: true });
    await queue.setGlobalConcurrency(1);
    const taken: string[] = [];
    const first = consumer(queueName, prefix, async (job) => {
      taken.push(`first:${job.id}`);
      // Dies mid-job: never returns, and its lock is no longer renewed once it is force-closed.
      await new Promise(() => undefined);
    });
    await queue.add('event', { n: 0 }, { jobId: 'e-0', attempts: 1 });
    await queue.add('event', { n: 1 }, { jobId: 'e-1', attempts: 1 });
    await until('the first Worker took e-0', () => taken.length === 1);
    void first.close(true);
    const applied: string[] = [];
    consumer(queueName, prefix, async (job) => {
      applied.push(String(job.id));
    });
    await until('both jobs applied by the second Worker', () => applied.length === 2, 20_000);
    expect(taken).toEqual(['first:e-0']);
    expect(applied).toEqual(['e-0', 'e-1']);
    expect(await queue.getJobState('e-0')).toBe('completed');
    await queue.close();
  }, 30_000);

  it('keeps as many spares as wanted: none for a worker whose every checkout is held, and none once closed', async () => {
    const own = connectDurable(url, 'baton-worker-spares-bounded');
    let wanted = 3;
    const bounded = keepSpareConnections(
      own,
      () => wanted,
      'baton-spare-bounded',
      () => undefined,
    );
    expect(bounded.count()).toBe(0);
    bounded.adjust();
    await until('three spares open', async () => (await named('baton-spare-bounded')).length === 3);
    wanted = 1;
    bounded.adjust();
    expect(bounded.count()).toBe(1);
    await until('two spares closed', async () => (await named('baton-spare-bounded')).length === 1);
    bounded.close();
    await until('every spare closed', async () => (await named('baton-spare-bounded')).length === 0);
    // Closed: a duplicate is the caller's own again.
    const fresh = own.duplicate({ connectionName: 'after-close' });
    expect(fresh.status).not.toBe('ready');
    fresh.disconnect();
    own.disconnect();
  });
});
