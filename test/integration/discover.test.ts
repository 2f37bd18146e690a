import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
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

  it('refuses to start without an allowed root', async () => {
    const run = await runBaton(['worker', '--discover'], { env: batonEnv({ redisUrl, prefix: uniquePrefix('disc') }) });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--discover needs at least one --allow-root');
  });
});
