import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { afterRounds, workerIdOf } from '../support/dutyRounds.ts';
import { TASK_ID, uniquePrefix } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { batonEnv, jsonOf, runBaton, startWorkerProcess } from '../support/processes.ts';
import type { WorkerProcess } from '../support/processes.ts';

// `baton worker --discover --allow-root DIR`: a shared box serves every repository below the
// allowed roots, and only those.

const redisUrl = inject('redisUrl');
const repos: GitRepo[] = [];
let worker: WorkerProcess | null = null;

afterEach(async () => {
  await worker?.stop('SIGKILL');
  worker = null;
  for (const repo of repos.splice(0)) repo.cleanup();
});

describe('worker --discover', () => {
  it('serves a repository inside an allowed root, and never one outside', async () => {
    const inside = gitRepoWithTask();
    const outside = gitRepoWithTask();
    repos.push(inside, outside);
    const env = batonEnv({ redisUrl, prefix: uniquePrefix('disc') });
    worker = await startWorkerProcess(['--discover', '--allow-root', path.dirname(inside.root), '--lock-duration', '2000'], { env });
    // Both repos live in the same temp dir; allow only `inside` by moving `outside` elsewhere.
    const elsewhere = fs.realpathSync(fs.mkdtempSync(path.join(os.homedir(), '.baton-outside-')));
    const moved = path.join(elsewhere, 'repo');
    fs.renameSync(outside.root, moved);
    repos.push({ ...outside, root: moved, cleanup: () => fs.rmSync(elsewhere, { recursive: true, force: true }) });

    const ok = jsonOf(await runBaton(['task', TASK_ID, 'begin-or-resume', '--timeout', '10000'], { env, cwd: inside.root }));
    expect(ok).toMatchObject({ status: 'running', changed: true });
    expect(worker.output()).toContain(`serving ${inside.root}`);

    const refused = await runBaton(['task', TASK_ID, 'begin-or-resume', '--timeout', '3000'], { env, cwd: moved });
    expect(jsonOf(refused).error.code).toBe('BATON_WORKER_UNAVAILABLE');
    expect(fs.existsSync(path.join(moved, '.agents/workspace/active', TASK_ID, 'orchestration.json'))).toBe(false);
    expect(worker.output()).not.toContain(`serving ${moved}`);
  }, 40_000);

  it("leaves alone another machine's checkout registered at a path that exists here, and creates no id file outside the roots", async () => {
    const local = gitRepoWithTask();
    const outside = gitRepoWithTask();
    repos.push(local, outside);
    const prefix = uniquePrefix('disc');
    const env = batonEnv({ redisUrl, prefix });
    const elsewhere = fs.realpathSync(fs.mkdtempSync(path.join(os.homedir(), '.baton-outside-')));
    const moved = path.join(elsewhere, 'repo');
    fs.renameSync(outside.root, moved);
    repos.push({ ...outside, root: moved, cleanup: () => fs.rmSync(elsewhere, { recursive: true, force: true }) });
    const redis = new Redis(redisOptionsFromUrl(redisUrl));
    try {
      // Machine B's checkout at the same path as ours (another id), and one outside the roots.
      await redis.hset(`${prefix}:baton:repos`, 'b0b0b0b0b0b0b0b0', JSON.stringify({ root: local.root, host: 'machine-b' }));
      await redis.hset(`${prefix}:baton:repos`, 'c0c0c0c0c0c0c0c0', JSON.stringify({ root: moved, host: 'machine-c' }));
      worker = await startWorkerProcess(['--discover', '--allow-root', path.dirname(local.root)], { env });
      // A discovery round after the start (the worker's round counter says so) served neither.
      await afterRounds(redisUrl, prefix, [workerIdOf(worker.output())], 'discover');
      expect(worker.output()).not.toContain('serving');
      expect(fs.existsSync(path.join(moved, '.git', 'baton', 'checkout.json'))).toBe(false);
      // Our own checkout is served once it enqueues under its own id.
      const ok = jsonOf(await runBaton(['task', TASK_ID, 'begin-or-resume', '--timeout', '10000'], { env, cwd: local.root }));
      expect(ok).toMatchObject({ status: 'running', changed: true });
      const id = JSON.parse(fs.readFileSync(path.join(local.root, '.git', 'baton', 'checkout.json'), 'utf8')).id as string;
      expect(id).not.toBe('b0b0b0b0b0b0b0b0');
      expect(worker.output()).toContain(`serving ${local.root} (queue baton-${id})`);
      expect(worker.output()).not.toContain('baton-b0b0b0b0b0b0b0b0');
    } finally {
      redis.disconnect();
    }
  }, 40_000);

  it('refuses to start without an allowed root', async () => {
    const run = await runBaton(['worker', '--discover'], { env: batonEnv({ redisUrl, prefix: uniquePrefix('disc') }) });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--discover needs at least one --allow-root');
  });
});
