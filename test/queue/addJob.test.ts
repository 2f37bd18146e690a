import fs from 'node:fs';
import { Queue, Worker } from 'bullmq';
import type { ConnectionOptions } from 'bullmq';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { Packr } from 'msgpackr';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ADD_JOB_SCRIPT_SHA, addPlainJob, packMsgpack } from '../../src/queue/addJob.ts';
import { RepositoryQueueClient } from '../../src/queue/client.ts';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { envelopeFor } from '../../src/queue/envelope.ts';
import { queueNameFor } from '../../src/queue/keys.ts';
import { RawQueueClient, waitForResult } from '../../src/queue/hookTransport.ts';
import { JOB_OPTIONS } from '../../src/queue/keys.ts';
import { rawRedisTarget } from '../../src/queue/resp.ts';
import { uniquePrefix } from '../support/fixtures.ts';
import { startPrivateRedis } from '../support/redisServer.ts';

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
      fc.constantFrom(
        0,
        -1,
        -32,
        -33,
        127,
        128,
        255,
        256,
        65535,
        65536,
        2 ** 32,
        2 ** 31,
        -(2 ** 31) - 1,
        Date.now(),
        Number.MAX_SAFE_INTEGER,
        1.5,
        -0.25,
      ),
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

async function snapshot(prefix: string, queueName: string) {
  const base = `${prefix}:${queueName}`;
  const keys = (await redis.keys(`${base}:*`)).map((key) => key.slice(base.length + 1)).sort();
  const job = async (id: string) => {
    const hash = await redis.hgetall(`${base}:${id}`);
    const { timestamp, opts, data, ...rest } = hash;
    return {
      ...rest,
      opts: JSON.parse(opts ?? 'null'),
      data: JSON.parse(data ?? 'null'),
      timestampIsRecent: Math.abs(Number(timestamp) - Date.now()) < 60_000,
    };
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

describe('addPlainJob', () => {
  it('writes what Queue.add writes: job hash, wait list, events, meta; duplicates are left alone', async () => {
    const prefix = uniquePrefix('addjob');
    const envelope = (id: string) =>
      envelopeFor(
        { intent: 'pause', taskRef: '01', code: 'X', message: 'm', recoverable: true },
        { id: '0123456789abcdef', root: '/srv/r' },
        'cli',
        id,
        new Date('2026-01-01T00:00:00Z'),
      );
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
    addPlainJob(redis, pipeline, {
      prefix,
      queueName: 'baton-w',
      name: 'pause',
      data: { hello: 'world' },
      jobId: 'c-w',
      opts: JOB_OPTIONS,
    });
    await pipeline.exec();
    const seen = new Promise<unknown>((resolve) => {
      const worker = new Worker(
        'baton-w',
        async (job) => {
          resolve({ name: job.name, data: job.data, attempts: job.opts.attempts, removeOnComplete: job.opts.removeOnComplete });
          return 'ok';
        },
        { connection: connection(), prefix, skipVersionCheck: true },
      );
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
  it('enqueues, reports no outcome yet, times out waiting, and withdraws the job', async () => {
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
      expect(await client.withdraw('c-withdraw')).toEqual({ kind: 'withdrawn' });
      expect(await queue.getJob('c-withdraw')).toBeUndefined();
      expect(await client.withdraw('c-withdraw')).toEqual({ kind: 'missing' });
      expect(JSON.parse((await redis.hget(`${prefix}:baton:repos`, repo.id))!)).toEqual({ root: repo.root, host: null });
      await queue.close();
    } finally {
      await client.close();
    }
  });
});

describe('the raw RESP path (what a hook uses)', () => {
  const target = () => rawRedisTarget(redisUrl)!;
  const repo = { id: '00112233445566ff', root: '/srv/raw' };
  const envelope = (id: string) =>
    envelopeFor(
      { intent: 'pause', taskRef: '01', code: 'X', message: 'm', recoverable: true },
      repo,
      'hook',
      id,
      new Date('2026-01-01T00:00:00Z'),
    );

  it('adds the job Queue.add adds: same job hashes, wait list, events and meta; duplicates left alone', async () => {
    const prefix = uniquePrefix('addjob-raw');
    const queue = new Queue('baton-reference', { connection: connection(), prefix, skipVersionCheck: true });
    for (const id of ['c-a', 'c-b', 'c-a']) await queue.add('pause', envelope(id), { ...JOB_OPTIONS, jobId: id });
    await queue.close();
    // RawQueueClient adds to the repository's queue: compare that queue with the reference one.
    const client = await RawQueueClient.connect(target(), prefix, repo, 2_000);
    try {
      for (const id of ['c-a', 'c-b', 'c-a']) await client.enqueue(envelope(id));
    } finally {
      await client.close();
    }
    expect(await snapshot(prefix, queueNameFor(repo.id))).toEqual(await snapshot(prefix, 'baton-reference'));
  });

  it('a BullMQ Worker processes a raw-added job, and waitForResult sees its completion and a failure', async () => {
    const prefix = uniquePrefix('addjob-raw-w');
    const queueName = queueNameFor(repo.id);
    const client = await RawQueueClient.connect(target(), prefix, repo, 2_000);
    const seen: unknown[] = [];
    const worker = new Worker(
      queueName,
      async (job) => {
        seen.push({ name: job.name, data: job.data, attempts: job.opts.attempts, removeOnFail: job.opts.removeOnFail });
        if (job.id === 'c-bad') throw new Error('refused by the test worker');
        return { status: 'running', taskId: 'TASK-1', runId: 'r', stepCount: 1, nextAction: 'none' };
      },
      { connection: connection(), prefix, skipVersionCheck: true },
    );
    try {
      await client.enqueue(envelope('c-good'));
      // The result is checked against the orchestration result schema: this one is not a result.
      expect(await client.waitFor('c-good', 10_000)).toEqual({
        kind: 'failed',
        reason: expect.stringMatching(/^the worker returned a malformed result/),
      });
      await client.enqueue(envelope('c-bad'));
      expect(await client.waitFor('c-bad', 10_000)).toEqual({ kind: 'failed', reason: 'refused by the test worker' });
      // A fresh connection finds a finished job from its hash.
      expect(await waitForResult({ redisUrl, prefix }, repo, 'c-bad', 1_000)).toEqual({
        kind: 'failed',
        reason: 'refused by the test worker',
      });
      expect(seen).toEqual([
        { name: 'pause', data: envelope('c-good'), attempts: 1, removeOnFail: JOB_OPTIONS.removeOnFail },
        { name: 'pause', data: envelope('c-bad'), attempts: 1, removeOnFail: JOB_OPTIONS.removeOnFail },
      ]);
    } finally {
      await worker.close();
      await client.close();
    }
  });

  it('times out waiting for a job nobody processes', async () => {
    const client = await RawQueueClient.connect(target(), uniquePrefix('addjob-raw-t'), repo, 2_000);
    try {
      await client.enqueue(envelope('c-idle'));
      expect(await client.workerAvailable()).toBe(false);
      expect(await client.waitFor('c-idle', 150)).toEqual({ kind: 'timeout' });
    } finally {
      await client.close();
    }
  });

  it('a server that has not seen the script answers NOSCRIPT: the job is added with EVAL, then by sha', async () => {
    const server = await startPrivateRedis();
    const reference = new Redis(redisOptionsFromUrl(server.url));
    try {
      expect(await reference.script('EXISTS', ADD_JOB_SCRIPT_SHA)).toEqual([0]);
      const prefix = uniquePrefix('addjob-noscript');
      const client = await RawQueueClient.connect(rawRedisTarget(server.url)!, prefix, repo, 2_000);
      try {
        await client.enqueue(envelope('c-first'));
        expect(await reference.script('EXISTS', ADD_JOB_SCRIPT_SHA)).toEqual([1]);
        await client.enqueue(envelope('c-second'));
      } finally {
        await client.close();
      }
      expect(await reference.lrange(`${prefix}:${queueNameFor(repo.id)}:wait`, 0, -1)).toEqual(['c-second', 'c-first']);
      expect(JSON.parse((await reference.hget(`${prefix}:baton:repos`, repo.id))!)).toEqual({ root: repo.root, host: null });
    } finally {
      reference.disconnect();
      await server.stop();
      fs.rmSync(server.dir, { recursive: true, force: true });
    }
  });
});
