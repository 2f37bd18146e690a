import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRun } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { HOOK_WAITS_FOR_RESULT, batonEnv, jsonOf, runBaton, startWorkerProcess } from '../support/processes.ts';
import type { WorkerProcess } from '../support/processes.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { makeCertificates, startRedisCluster } from '../support/redisTopologies.ts';
import type { RedisClusterSetup } from '../support/redisTopologies.ts';

// A Redis Cluster that speaks only TLS (clients, bus and replication), as managed team clusters
// do: `rediss+cluster://` with the CA from BATON_REDIS_CA. Commands, a hook and a worker.

let certsDir: string;
let cluster: RedisClusterSetup;
let repo: GitRepo;
let worker: WorkerProcess | null = null;

beforeAll(async () => {
  certsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-tls-cluster-certs-'));
  cluster = await startRedisCluster({ tls: makeCertificates(certsDir) });
  repo = gitRepoWithTask();
}, 120_000);

afterAll(async () => {
  await worker?.stop('SIGKILL');
  repo?.cleanup();
  await cluster?.stop();
  fs.rmSync(certsDir, { recursive: true, force: true });
});

describe('Redis Cluster over TLS', () => {
  it('rediss+cluster:// with BATON_REDIS_CA: commands, a hook and a worker', async () => {
    expect(cluster.url).toMatch(/^rediss\+cluster:\/\/127\.0\.0\.1:\d+(,127\.0\.0\.1:\d+){5}$/);
    const env = batonEnv({ redisUrl: cluster.url, prefix: '{bt-tls-cluster}' }, { BATON_REDIS_CA: path.join(certsDir, 'ca.pem') });
    worker = await startWorkerProcess(['--repo', repo.root], { env });
    expect(jsonOf(await runBaton(['task', '01', 'begin-or-resume'], { env, cwd: repo.root })).status).toBe('running');
    expect(jsonOf(await runBaton(['task', '01', 'prepare', '--client', 'claude-code'], { env, cwd: repo.root })).status).toBe('running');
    // The hook waits for its event's result and prints it on stderr (stdout stays empty).
    const hook = await runBaton(['hook', 'claude-code'], {
      env: { ...env, ...HOOK_WAITS_FOR_RESULT },
      cwd: repo.root,
      input: nativePayload('claude-code', 'SubagentStart', 'executor', 'child-tls', repo.root),
    });
    expect(hook.code, hook.stderr).toBe(0);
    expect(hook.stdout).toBe('');
    expect(JSON.parse(/^baton: (\{.*\})$/m.exec(hook.stderr)?.[1] ?? 'null')?.status).toBe('running');
    expect(readRun(repo.taskDir).pendingDelegation).toMatchObject({ status: 'activated', childId: 'child-tls' });

    // Without the CA the cluster's certificates are refused.
    const untrusted = { ...env };
    delete untrusted.BATON_REDIS_CA;
    const refused = jsonOf(await runBaton(['task', '01', 'abort'], { env: untrusted, cwd: repo.root }));
    expect(refused.error.code).toBe('BATON_REDIS_UNAVAILABLE');
    expect(readRun(repo.taskDir).pendingDelegation).toMatchObject({ status: 'activated' });
  }, 90_000);
});
