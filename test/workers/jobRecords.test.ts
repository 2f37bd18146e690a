import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { uniquePrefix } from '../support/fixtures.ts';
import { eventsField, forgetRepositoryMetrics, jobNameFor, latencyBucketField } from '../../src/workers/jobRecords.ts';
import { LATENCY_BUCKETS_S, metricsKey } from '../../src/queue/keys.ts';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';

// The worker's bookkeeping fields: which latency bucket a value lands in, how counters are keyed,
// what a hook job is renamed to, and forgetting one repository's counters.

const redis = new Redis(redisOptionsFromUrl(inject('redisUrl')));
afterAll(() => redis.disconnect());

describe('job records', () => {
  it('puts a latency in the smallest bucket that holds it, +Inf beyond the last', () => {
    expect(latencyBucketField('r1', 0)).toBe('r1\t0.005');
    expect(latencyBucketField('r1', 0.005)).toBe('r1\t0.005');
    expect(latencyBucketField('r1', 0.0051)).toBe('r1\t0.01');
    expect(latencyBucketField('r1', 59.9)).toBe('r1\t60');
    expect(latencyBucketField('r1', 61)).toBe('r1\t+Inf');
    expect(LATENCY_BUCKETS_S).toEqual([...LATENCY_BUCKETS_S].sort((a, b) => a - b));
    expect(eventsField('r1', 'prepare', 'applied:running')).toBe('r1\tprepare\tapplied:running');
    expect(jobNameFor('hook-stop', 'TASK-20260101-000001')).toBe('hook-stop · TASK-20260101-000001');
    expect(jobNameFor('hook-stop', null)).toBe('hook-stop');
  });

  it("forgets one repository's counters and leaves the others", async () => {
    const prefix = uniquePrefix('records');
    await redis.hset(
      metricsKey(prefix, 'events'),
      eventsField('aaaa', 'prepare', 'failed'),
      2,
      eventsField('bbbb', 'prepare', 'failed'),
      3,
    );
    await redis.hset(metricsKey(prefix, 'latency'), 'aaaa\tcount', 1, 'aaaa\tsum', 0.5);
    await forgetRepositoryMetrics(redis, prefix, 'aaaa');
    expect(await redis.hgetall(metricsKey(prefix, 'events'))).toEqual({ [eventsField('bbbb', 'prepare', 'failed')]: '3' });
    expect(await redis.exists(metricsKey(prefix, 'latency'))).toBe(0);
  });
});
