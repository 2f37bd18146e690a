import fs from 'node:fs';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { uniquePrefix } from '../support/fixtures.ts';
import { batonEnv, runBaton } from '../support/processes.ts';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { UNTOUCHED, startForeignRedis } from '../support/foreignRedis.ts';

// `baton demo`: a temporary repository, a worker in process, real hook processes, seven stages to a
// completed run; it exits 0 and leaves nothing behind (repository, queue) unless --keep-open.

const redisUrl = inject('redisUrl');

describe('baton demo', () => {
  it('drives a complete lifecycle through hooks, the queue and a worker, and exits 0 with a completed run', async () => {
    const prefix = uniquePrefix('demo');
    const run = await runBaton(['demo'], { env: batonEnv({ redisUrl, prefix }), timeoutMs: 50_000 });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe('baton demo');
    const repoRoot = /repository +(\S+)/.exec(run.stdout)?.[1];
    expect(repoRoot).toMatch(/baton-demo-/);
    expect(run.stdout).toMatch(/dashboard +http:\/\/127\.0\.0\.1:\d+\//);
    const stages = lines.filter((line) => /^ {2}\[\d\] /.test(line));
    expect(stages.map((line) => /\] (\S+ r\d)/.exec(line)?.[1])).toEqual([
      'analysis r1',
      'review-analysis r1',
      'plan r1',
      'review-plan r1',
      'code r1',
      'review-code r1',
      'commit r1',
    ]);
    expect(stages.every((line) => line.includes('SubagentStart hook') && line.includes('SubagentStop hook'))).toBe(true);
    expect(stages.at(-1)).toContain('advance → completed');
    expect(run.stdout).toMatch(/run TASK-20260101-000001 completed in [\d.]+ s: 7\/24 steps, 7 delegations/);
    expect(run.stdout).toMatch(/executor +code r1 +consumed +changed: .*src\/retry\.ts/);
    expect(run.stdout).toMatch(/^dashboard: http:\/\/127\.0\.0\.1:\d+\/ \(stops now/m);
    // Nothing left behind: the temporary repository and its queue are gone.
    expect(fs.existsSync(repoRoot!)).toBe(false);
    const redis = new Redis(redisOptionsFromUrl(redisUrl));
    try {
      expect(await redis.keys(`${prefix}:*`)).toEqual([]);
    } finally {
      redis.disconnect();
    }
  }, 55_000);

  it('without REDIS_URL runs a private redis-server, and leaves the Redis on the default address untouched', async () => {
    const foreign = await startForeignRedis();
    try {
      const { REDIS_URL: _configured, ...rest } = process.env;
      const run = await runBaton(['demo'], { env: { ...rest, BATON_DEFAULT_REDIS_URL: foreign.url }, timeoutMs: 50_000 });
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.stdout).toMatch(/^ {2}redis {7}unix:\/\/\S+ \(private redis-server, append-only data in \S+baton-demo-/m);
      expect(run.stdout).toContain(
        `\n              not using the Redis that answers on ${foreign.url} (nothing names it); to use it: baton demo --redis ${foreign.url}\n`,
      );
      expect(run.stdout).toMatch(/run TASK-20260101-000001 completed in/);
      expect(await foreign.touches()).toEqual(UNTOUCHED);
    } finally {
      await foreign.stop();
    }
  }, 55_000);
});
