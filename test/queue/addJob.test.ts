import { Queue, Worker } from 'bullmq';
import type { ConnectionOptions } from 'bullmq';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { Packr } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { addPlainJob, packMsgpack } from '../../src/queue/addJob.ts';
import { RepositoryQueueClient } from '../../src/queue/client.ts';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { envelopeFor, queueNameFor } from '../../src/queue/envelope.ts';
import { JOB_OPTIONS } from '../../src/queue/keys.ts';
import { uniquePrefix } from '../support/fixtures.ts';

// The hook adds jobs without loading BullMQ (src/queue/addJob.ts, for start-up time). This proves
// that what it writes is what BullMQ's Queue.add writes, against the installed BullMQ: the same
// msgpack bytes as BullMQ's encoder, and the same job, lists, events and meta in Redis. If a BullMQ
// upgrade changes any of it, this test fails before a hook enqueues a job a worker misreads.

const redisUrl = inject('redisUrl');
const connection = () => redisOptionsFromUrl(redisUrl) as ConnectionOptions;
let redis: Redis;
beforeAll(() => {
  redis = new Redis(redisOptionsFromUrl(redisUrl));
});
afterAll(() => redis.disconnect());

describe('packMsgpack', () => {
  const bullmqPacker = new Packr({ useRecords: false, encodeUndefinedAsNil: true });
  const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constant(null),
      fc.boolean(),
      fc.integer({ min: -(2 ** 31), max: 2 ** 32 - 1 }),
      fc.constantFrom(0, -1, -32, -33, 127, 128, 255, 256, 65535, 65536, 2 ** 32, 2 ** 31, -(2 ** 31) - 1, Date.now(), Number.MAX_SAFE_INTEGER, 1.5, -0.25),
      fc.double({ noNaN: true }),
      fc.string({ maxLength: 300, unit: 'grapheme' }),
      fc.string({ minLength: 250, maxLength: 70_000 }).filter((text) => text.length > 255),
      fc.array(tie('value'), { maxLength: 20 }),
      fc.dictionary(fc.string({ maxLength: 8 }), tie('value'), { maxKeys: 18 }),
    ),
  })).value;

  it('encodes exactly as BullMQ (msgpackr, useRecords false, undefined as nil)', () => {
    fc.assert(
      fc.property(value, (item) => {
        expect(packMsgpack(item).equals(bullmqPacker.pack(item))).toBe(true);
      }),
      { numRuns: 2000 },
    );
    const args = ['bull:q:', 'job-1', 'name', Date.now(), null, null, undefined, undefined, null, null];
    expect(packMsgpack(args).equals(bullmqPacker.pack(args))).toBe(true);
  });
});

describe('addPlainJob', () => {
  async function snapshot(prefix: string, queueName: string) {
    const base = `${prefix}:${queueName}`;
    const keys = (await redis.keys(`${base}:*`)).map((key) => key.slice(base.length + 1)).sort();
    const job = async (id: string) => {
      const hash = await redis.hgetall(`${base}:${id}`);
      const { timestamp, opts, data, ...rest } = hash;
      return { ...rest, opts: JSON.parse(opts ?? 'null'), data: JSON.parse(data ?? 'null'), timestampIsRecent: Math.abs(Number(timestamp) - Date.now()) < 60_000 };
    };
    const events = (await redis.xrange(`${base}:events`, '-', '+')).map(([, fields]) => fields);
    return {
      keys,
      wait: await redis.lrange(`${base}:wait`, 0, -1),
      meta: await redis.hgetall(`${base}:meta`),
      marker: await redis.zrange(`${base}:marker`, '0', '-1', 'WITHSCORES'),
      id: await redis.get(`${base}:id`),
      jobs: { a: await job('c-a'), b: await job('c-b') },
      events,
    };
  }

  it('writes what Queue.add writes: job hash, wait list, events, meta; duplicates are left alone', async () => {
    const prefix = uniquePrefix('addjob');
    const envelope = (id: string) => envelopeFor({ intent: 'pause', taskRef: '01', code: 'X', message: 'm', recoverable: true }, { id: '0123456789abcdef', root: '/srv/r' }, 'cli', id, new Date('2026-01-01T00:00:00Z'));
    // The reference: BullMQ's own Queue.add, twice, plus a duplicate.
    const queue = new Queue('baton-reference', { connection: connection(), prefix, skipVersionCheck: true });
    for (const id of ['c-a', 'c-b', 'c-a']) await queue.add('pause', envelope(id), { ...JOB_OPTIONS, jobId: id });
    await queue.close();
    // The same through addPlainJob.
    for (const id of ['c-a', 'c-b', 'c-a']) {
      const pipeline = redis.pipeline();
      addPlainJob(redis, pipeline, { prefix, queueName: 'baton-direct', name: 'pause', data: envelope(id), jobId: id, opts: JOB_OPTIONS });
      const replies = await pipeline.exec();
      expect(replies?.every(([error]) => error === null)).toBe(true);
      expect(replies?.at(-1)?.[1]).toBe(id);
    }
    expect(await snapshot(prefix, 'baton-direct')).toEqual(await snapshot(prefix, 'baton-reference'));
  });

  it('a BullMQ worker processes the job like any other', async () => {
    const prefix = uniquePrefix('addjob-w');
    const pipeline = redis.pipeline();
    addPlainJob(redis, pipeline, { prefix, queueName: 'baton-w', name: 'pause', data: { hello: 'world' }, jobId: 'c-w', opts: JOB_OPTIONS });
    await pipeline.exec();
    const seen = new Promise<unknown>((resolve) => {
      const worker = new Worker('baton-w', async (job) => {
        resolve({ name: job.name, data: job.data, attempts: job.opts.attempts, removeOnComplete: job.opts.removeOnComplete });
        return 'ok';
      }, { connection: connection(), prefix, skipVersionCheck: true });
      worker.on('completed', () => void worker.close());
    });
    expect(await seen).toEqual({ name: 'pause', data: { hello: 'world' }, attempts: 1, removeOnComplete: JOB_OPTIONS.removeOnComplete });
  });

  it('refuses job ids and options BullMQ would refuse or route to another script', () => {
    const pipeline = redis.pipeline();
    const base = { prefix: 'p', queueName: 'q', name: 'n', data: {}, opts: {} };
    expect(() => addPlainJob(redis, pipeline, { ...base, jobId: '123' })).toThrow(/not allowed/);
    expect(() => addPlainJob(redis, pipeline, { ...base, jobId: 'a:b' })).toThrow(/not allowed/);
    expect(() => addPlainJob(redis, pipeline, { ...base, jobId: 'c-x', opts: { delay: 5 } })).toThrow(/delay/);
  });
});

describe('RepositoryQueueClient without BullMQ on the enqueue path', () => {
  it('enqueues, reports no outcome yet, times out waiting, and withdraws the job (loading BullMQ only then)', async () => {
    const prefix = uniquePrefix('client');
    const repo = { id: 'fedcba9876543210', root: '/srv/withdraw' };
    const client = await RepositoryQueueClient.connect({ redisUrl, prefix }, repo, 2_000);
    try {
      const envelope = envelopeFor({ intent: 'advance', taskRef: '01' }, repo, 'cli', 'c-withdraw');
      await client.enqueue(envelope);
      await client.enqueue(envelope); // a duplicate add leaves the job alone
      const queue = new Queue(queueNameFor(repo.id), { connection: connection(), prefix, skipVersionCheck: true });
      expect(await queue.getWaitingCount()).toBe(1);
      expect((await queue.getJob('c-withdraw'))?.data).toEqual(envelope);
      expect(await client.outcomeOf('c-withdraw')).toBeNull();
      expect(await client.waitFor('c-withdraw', 150)).toEqual({ kind: 'timeout' });
      expect(await client.withdraw('c-withdraw')).toBe(true);
      expect(await queue.getJob('c-withdraw')).toBeUndefined();
      expect(await client.withdraw('c-withdraw')).toBe(false);
      expect(JSON.parse((await redis.hget(`${prefix}:baton:repos`, repo.id))!)).toEqual({ root: repo.root, host: null });
      await queue.close();
    } finally {
      await client.close();
    }
  });
});
