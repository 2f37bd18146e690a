import fs from 'node:fs';
import { afterAll, afterEach, inject } from 'vitest';
import { uniquePrefix } from './fixtures.ts';
import { gitRepoWithTask, linkedWorktree } from './gitRepo.ts';
import type { GitRepo } from './gitRepo.ts';
import { batonEnv, startWorkerProcess } from './processes.ts';
import type { WorkerProcess } from './processes.ts';
import { startPrivateRedis } from './redisServer.ts';
import type { PrivateRedis } from './redisServer.ts';

// The set-up of the tests that run baton as users do: a git repository with a task, the environment
// of its commands and hooks (a Redis, a key prefix of its own), and `baton worker` processes serving
// it, on the suite's Redis or a private redis-server of its own. `useWorkerHarness()` registers the
// clean-up after each test (or, with 'file', after the file's tests, for a set-up made in beforeAll):
// every worker it started is killed, every private Redis stopped, every repository removed.

export type HarnessRepository = Readonly<{ repo: GitRepo; env: NodeJS.ProcessEnv; prefix: string }>;
export type ServedRepository = HarnessRepository & Readonly<{ worker: WorkerProcess }>;

export type RepositoryOptions = Readonly<{
  /** Default: the suite's Redis. */
  redisUrl?: string;
  /** Default: a unique prefix from the label. */
  prefix?: string;
  /** Variables added to the environment (hook budget, runtimes' caches). */
  env?: Readonly<Record<string, string>>;
}>;

export type WorkerOptions = Omit<Parameters<typeof startWorkerProcess>[1], 'env'> & Readonly<{ env?: NodeJS.ProcessEnv }>;

export type WorkerHarness = Readonly<{
  /** A fresh repository with a task, and the environment its commands run with. */
  repository(label: string, options?: RepositoryOptions): HarnessRepository;
  /** A linked worktree of `repository` with a task of its own (`linkedWorktree`), removed with it. */
  worktree(repository: HarnessRepository, name: string, branch?: string | null): GitRepo;
  /** Starts `baton worker ARGS` with `env` (default: none besides `options.env`'s). */
  startWorker(args: readonly string[], options: WorkerOptions & Readonly<{ env: NodeJS.ProcessEnv }>): Promise<WorkerProcess>;
  /** A private redis-server (for tests that stop and start it, or change its settings). */
  privateRedis(options?: Parameters<typeof startPrivateRedis>[0]): Promise<PrivateRedis>;
  /** A fresh repository served by a worker (`baton worker --repo ROOT` and `workerArgs`). */
  serve(
    label: string,
    options?: RepositoryOptions & Readonly<{ workerArgs?: readonly string[]; worker?: WorkerOptions }>,
  ): Promise<ServedRepository>;
}>;

export function useWorkerHarness(lifetime: 'test' | 'file' = 'test'): WorkerHarness {
  const repos: GitRepo[] = [];
  const workers: WorkerProcess[] = [];
  const servers: PrivateRedis[] = [];
  (lifetime === 'test' ? afterEach : afterAll)(async () => {
    for (const worker of workers.splice(0)) await worker.stop('SIGKILL');
    for (const redis of servers.splice(0)) {
      await redis.stop(true);
      fs.rmSync(redis.dir, { recursive: true, force: true });
    }
    for (const repo of repos.splice(0)) repo.cleanup();
  });
  const harness: WorkerHarness = {
    repository(label, options = {}) {
      const repo = gitRepoWithTask();
      repos.push(repo);
      const prefix = options.prefix ?? uniquePrefix(label);
      return { repo, prefix, env: batonEnv({ redisUrl: options.redisUrl ?? inject('redisUrl'), prefix }, options.env) };
    },
    worktree(repository, name, branch) {
      const linked = linkedWorktree(repository.repo, name, branch);
      repos.push(linked);
      return linked;
    },
    async startWorker(args, options) {
      const worker = await startWorkerProcess(args, options);
      workers.push(worker);
      return worker;
    },
    async privateRedis(options) {
      const redis = await startPrivateRedis(options);
      servers.push(redis);
      return redis;
    },
    async serve(label, options = {}) {
      const served = harness.repository(label, options);
      const worker = await harness.startWorker(['--repo', served.repo.root, ...(options.workerArgs ?? [])], {
        ...options.worker,
        env: { ...served.env, ...options.worker?.env },
      });
      return { ...served, worker };
    },
  };
  return harness;
}
