import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TASK_ID, readRun } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { batonEnv, jsonOf, runBaton, startWorkerProcess } from '../support/processes.ts';
import { driveLifecycle, nativePayload } from '../support/lifecycleDriver.ts';
import { URL_PATTERN, dashboardQueues, dashboardUrlOf, startBaton } from '../support/services.ts';
import { failoverWithEvents } from '../support/failoverFlow.ts';
import { startRedisCluster, useTopology } from '../support/redisTopologies.ts';
import type { RedisClusterSetup } from '../support/redisTopologies.ts';
import { connectFast } from '../../src/queue/connection.ts';
import { queueNameFor } from '../../src/queue/keys.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { spooledFiles } from '../../src/queue/spool.ts';

// baton on a real Redis Cluster (3 masters + 3 replicas on free ports): a prefix without a hash tag
// is refused; with `{…}` the hooks, CLI, spool drain, worker, global concurrency and dashboard work;
// and a master fails over while events flow without losing, repeating or reordering any.

let cluster: RedisClusterSetup;
const { repos, processes: services } = useTopology(startRedisCluster, (started) => (cluster = started));

function newRepo(): GitRepo {
  const repo = gitRepoWithTask();
  repos.push(repo);
  return repo;
}

const tagged = (label: string) => `{bt-${label}-${Math.random().toString(16).slice(2, 8)}}`;

describe('Redis Cluster', () => {
  it('refuses a prefix without a hash tag, saying what to use', async () => {
    const repo = newRepo();
    const env = batonEnv({ redisUrl: cluster.url, prefix: 'baton' });
    const task = await runBaton(['task', '01', 'begin-or-resume'], { env, cwd: repo.root });
    expect(task.code).toBe(1);
    expect(jsonOf(task).error).toEqual({
      code: 'BATON_PREFIX_NOT_HASH_TAGGED',
      message:
        "prefix 'baton' has no hash tag, so on Redis Cluster a queue's keys would land in different slots and its scripts would fail (CROSSSLOT). Use --prefix '{baton}' (or BATON_PREFIX='{baton}')",
    });
    const refusal =
      "BATON_PREFIX_NOT_HASH_TAGGED: prefix 'baton' has no hash tag, so on Redis Cluster a queue's keys would land in different slots and its scripts would fail (CROSSSLOT). Use --prefix '{baton}' (or BATON_PREFIX='{baton}')";
    const worker = await runBaton(['worker', '--repo', repo.root], { env, timeoutMs: 10_000 });
    expect(worker.code).toBe(2);
    expect(worker.stderr).toBe(`baton worker: ${refusal}\n`);
    const dashboard = await runBaton(['dashboard', '--port', '0', '--prefix', 'team'], { env, timeoutMs: 10_000 });
    expect(dashboard.code).toBe(2);
    expect(dashboard.stderr).toContain("baton dashboard: BATON_PREFIX_NOT_HASH_TAGGED: prefix 'team' has no hash tag");
    expect(dashboard.stderr).toContain("Use --prefix '{team}'");
    // A hook never blocks the agent: it keeps the event in the spool and says why.
    const hook = await runBaton(['hook', 'claude-code'], {
      env,
      cwd: repo.root,
      input: nativePayload('claude-code', 'SubagentStart', 'executor', 'child-x', repo.root),
    });
    expect(hook.code).toBe(0);
    expect(hook.stderr).toContain("BATON_PREFIX_NOT_HASH_TAGGED: prefix 'baton' has no hash tag");
    expect(spooledFiles(repo.root)).toHaveLength(1);
    expect(fs.existsSync(path.join(repo.taskDir, 'orchestration.json'))).toBe(false);
  });

  it('hooks, CLI, spool drain, two workers with global concurrency 1, and the dashboard', async () => {
    const repo = newRepo();
    const prefix = tagged('cluster');
    const env = batonEnv({ redisUrl: cluster.url, prefix });
    // A hook while the cluster is unreachable spools its event (a dead seed list)…
    const deadEnv = batonEnv({ redisUrl: 'redis+cluster://127.0.0.1:1', prefix }, { BATON_HOOK_BUDGET_MS: '1500' });
    const first = await runBaton(['task', '01', 'begin-or-resume', '--redis', 'redis+cluster://127.0.0.1:1'], { env, cwd: repo.root });
    expect(jsonOf(first).error.code).toBe('BATON_REDIS_UNAVAILABLE');
    const spooled = await runBaton(['hook', 'claude-code'], {
      env: deadEnv,
      cwd: repo.root,
      input: nativePayload('claude-code', 'SubagentStart', 'executor', 'child-early', repo.root),
    });
    expect(spooled.code, spooled.stderr).toBe(0);
    expect(spooled.stderr).toContain('spooled to');
    expect(spooledFiles(repo.root)).toHaveLength(1);

    // …which the first worker on the cluster drains.
    const workers = [await startWorkerProcess(['--repo', repo.root], { env }), await startWorkerProcess(['--repo', repo.root], { env })];
    services.push(...workers);
    await expect.poll(() => spooledFiles(repo.root).length, { timeout: 30_000 }).toBe(0);

    const { steps, final } = await driveLifecycle({ root: repo.root, taskRef: '01', env }).catch((error) => {
      throw new Error(`${(error as Error).message}\n${workers.map((worker) => worker.output()).join('\n')}`);
    });
    expect(steps).toHaveLength(7);
    expect(final).toMatchObject({ status: 'completed', taskId: TASK_ID });
    expect(readRun(repo.taskDir)).toMatchObject({ status: 'completed', stepCount: 7 });

    // Global concurrency 1 on the queue, kept in the cluster next to the queue's keys.
    const identity = repoIdentity(repo.root);
    const redis = await connectFast(cluster.url, 2_000);
    try {
      expect(await redis.hget(`${prefix}:${queueNameFor(identity.id)}:meta`, 'concurrency')).toBe('1');
      expect(JSON.parse((await redis.hget(`${prefix}:baton:repos`, identity.id))!)).toEqual({ root: identity.root, host: os.hostname() });
      // Jobs never overlapped although two workers served the queue.
      const jobs = (await redis.call('ZRANGE', `${prefix}:${queueNameFor(identity.id)}:completed`, '0', '-1')) as string[];
      const spans = await Promise.all(
        jobs.map(
          async (id) =>
            (await redis.hmget(`${prefix}:${queueNameFor(identity.id)}:${id}`, 'processedOn', 'finishedOn')).map(Number) as [
              number,
              number,
            ],
        ),
      );
      spans.sort((a, b) => a[0] - b[0]);
      for (let index = 1; index < spans.length; index += 1) expect(spans[index]![0]).toBeGreaterThanOrEqual(spans[index - 1]![1]);
      expect(spans.length).toBeGreaterThan(10);
    } finally {
      redis.disconnect();
    }

    // The dashboard lists the queue with its machine and path.
    const dashboard = await startBaton(['dashboard', '--port', '0'], { env, ready: URL_PATTERN });
    services.push(dashboard);
    const health = (await (await fetch(new URL('baton/health', dashboardUrlOf(dashboard)))).json()) as { queues: unknown[] };
    expect(health.queues).toEqual([{ name: queueNameFor(identity.id), root: identity.root, host: os.hostname(), checkout: identity.id }]);
    const queues = await dashboardQueues(dashboardUrlOf(dashboard));
    expect(queues.map((queue) => queue.displayName)).toEqual([`${identity.root} (${os.hostname()})`]);
    expect(queues[0]!.counts.completed).toBeGreaterThan(10);
  }, 120_000);

  it('a master fails over while events flow: nothing lost, nothing applied twice, order kept', async () => {
    const repo = newRepo();
    const prefix = tagged('failover');
    const env = batonEnv({ redisUrl: cluster.url, prefix });
    const worker = await startWorkerProcess(['--repo', repo.root, '--lock-duration', '3000', '--stalled-interval', '1000'], { env });
    services.push(worker);
    expect(jsonOf(await runBaton(['task', '01', 'begin-or-resume'], { env, cwd: repo.root })).status).toBe('running');
    const report = await failoverWithEvents(
      {
        redisUrl: cluster.url,
        prefix,
        root: repo.root,
        taskDir: repo.taskDir,
        stopMaster: () => cluster.stopMasterOf(prefix),
        promotedAfter: (stopped) => cluster.promotedAfter(prefix, stopped),
      },
      worker,
    );
    console.log(`cluster failover: ${JSON.stringify(report)}`);
    // The CLI keeps working against the promoted master.
    expect(jsonOf(await runBaton(['task', '01', 'begin-or-resume'], { env, cwd: repo.root })).status).toBe('running');
  }, 120_000);
});
