import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TASK_ID, readRun } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { PROJECT_ROOT, batonEnv, jsonOf, runBaton, runProcess, startWorkerProcess } from '../support/processes.ts';
import type { WorkerProcess } from '../support/processes.ts';
import { driveLifecycle, nativePayload } from '../support/lifecycleDriver.ts';
import { URL_PATTERN, dashboardQueues, dashboardUrlOf, startBaton } from '../support/services.ts';
import type { ServiceProcess } from '../support/services.ts';
import { startTlsRedis, withNode } from '../support/redisTopologies.ts';
import type { TlsSetup } from '../support/redisTopologies.ts';
import { batonAclCommand, batonAclRules } from '../../src/queue/acl.ts';
import { RepositoryQueueClient } from '../../src/queue/client.ts';
import { envelopeFor } from '../../src/queue/envelope.ts';
import { queueNameFor } from '../../src/queue/keys.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';

// A locked-down team Redis: TLS only (a CA and a server certificate made by openssl for this test),
// baton's user limited by the ACL rule of docs/teams.md to `{baton}:*` and the commands baton needs;
// and another team's user, limited to its own prefix, can neither read nor enqueue baton's jobs.

const PREFIX = '{baton}';
const TEAMS_DOC = fileURLToPath(new URL('../../docs/teams.md', import.meta.url));

let tls: TlsSetup;
let repo: GitRepo;
const services: (WorkerProcess | ServiceProcess)[] = [];

beforeAll(async () => {
  tls = await startTlsRedis();
  await withNode({ port: tls.port, tls: { ca: fs.readFileSync(tls.caFile) } }, async (admin) => {
    await admin.call('ACL', 'SETUSER', 'baton', ...batonAclRules('baton-secret', PREFIX));
    await admin.call('ACL', 'SETUSER', 'other', ...batonAclRules('other-secret', '{other}'));
  });
  repo = gitRepoWithTask();
}, 60_000);

afterAll(async () => {
  await Promise.all(services.map((service) => service.stop('SIGKILL')));
  repo?.cleanup();
  await tls?.stop();
});

const batonUrl = () => `rediss://baton:baton-secret@127.0.0.1:${tls.port}`;

describe('TLS and ACL', () => {
  it('docs/teams.md gives the ACL rule the tests use', () => {
    expect(fs.readFileSync(TEAMS_DOC, 'utf8')).toContain(batonAclCommand('baton', 'CHANGE-ME', PREFIX));
  });

  it('without the CA, baton refuses the server certificate and says so', async () => {
    const env = batonEnv({ redisUrl: batonUrl(), prefix: PREFIX });
    delete env.BATON_REDIS_CA;
    const run = await runBaton(['task', '01', 'begin-or-resume'], { env, cwd: repo.root });
    expect(jsonOf(run).error.code).toBe('BATON_REDIS_UNAVAILABLE');
    expect(jsonOf(run).error.message).toMatch(
      /^cannot reach Redis \(cannot connect to Redis at rediss:\/\/baton:\*\*\*@127\.0\.0\.1:\d+: self-signed certificate in certificate chain\)/,
    );
  });

  it('with the CA (BATON_REDIS_CA or ?ca=) and the ACL user: a lifecycle through hooks, CLI, worker and dashboard', async () => {
    const env = batonEnv({ redisUrl: batonUrl(), prefix: PREFIX }, { BATON_REDIS_CA: tls.caFile });
    const worker = await startWorkerProcess(['--repo', repo.root], { env });
    services.push(worker);
    const { steps, final } = await driveLifecycle({ root: repo.root, taskRef: '01', env }).catch((error) => {
      throw new Error(`${(error as Error).message}\n${worker.output()}`);
    });
    expect(steps).toHaveLength(7);
    expect(final).toMatchObject({ status: 'completed', taskId: TASK_ID });
    expect(readRun(repo.taskDir).status).toBe('completed');
    expect(worker.output()).not.toContain('NOPERM');

    // ?ca= in the URL works as well as the environment variable.
    const withQuery = batonEnv({ redisUrl: `${batonUrl()}?ca=${encodeURIComponent(tls.caFile)}`, prefix: PREFIX });
    delete withQuery.BATON_REDIS_CA;
    expect(jsonOf(await runBaton(['task', '01', 'begin-or-resume'], { env: withQuery, cwd: repo.root })).status).toBe('completed');

    const dashboard = await startBaton(['dashboard', '--port', '0'], { env, ready: URL_PATTERN });
    services.push(dashboard);
    const queues = await dashboardQueues(dashboardUrlOf(dashboard));
    expect(queues.map((queue) => queue.displayName)).toEqual([`${repo.root} (${os.hostname()})`]);
    expect(queues[0]!.counts.completed).toBeGreaterThan(10);
  }, 120_000);

  it('the CA in NODE_EXTRA_CA_CERTS only, through the installed launcher (bin/baton): baton task and baton hook, which start without parsing it, still trust it', async () => {
    const own = gitRepoWithTask();
    try {
      const env = batonEnv({ redisUrl: batonUrl(), prefix: PREFIX }, { NODE_EXTRA_CA_CERTS: tls.caFile });
      delete env.BATON_REDIS_CA;
      const launcher = path.join(PROJECT_ROOT, 'bin', 'baton');
      // The raw RESP client (the enqueue) and ioredis (the inline worker) both connect over TLS.
      const task = await runProcess(launcher, ['task', '01', 'begin-or-resume', '--worker', 'inline'], { env, cwd: own.root });
      expect(jsonOf(task)).toMatchObject({ status: 'running', taskId: TASK_ID });
      const hook = await runProcess(launcher, ['hook', 'claude-code'], {
        env,
        cwd: own.root,
        input: nativePayload('claude-code', 'SubagentStart', 'executor', 'child-launched', own.root),
      });
      expect(hook.code, hook.stderr).toBe(0);
      expect(hook.stderr).toMatch(/no worker serves .*; hook-start event queued as h-[0-9a-f]{40}/);
      expect(hook.stderr).not.toContain('spooled');
    } finally {
      own.cleanup();
    }
  });

  it("another prefix's user can neither read nor enqueue baton's jobs", async () => {
    const identity = repoIdentity(repo.root);
    const queue = queueNameFor(identity.id);
    const otherUrl = `rediss://other:other-secret@127.0.0.1:${tls.port}`;
    const env = batonEnv({ redisUrl: otherUrl, prefix: PREFIX }, { BATON_REDIS_CA: tls.caFile });
    const before = fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8');

    const run = await runBaton(['task', '01', 'abort', '--reason', 'from another team'], { env, cwd: repo.root });
    expect(run.code).toBe(1);
    expect(jsonOf(run).error.code).toBe('BATON_REDIS_NO_PERMISSION');
    expect(jsonOf(run).error.message).toContain("the Redis user may not do what baton needs under prefix '{baton}' (NOPERM");

    const ca = fs.readFileSync(tls.caFile);
    await withNode({ port: tls.port, tls: { ca }, username: 'other', password: 'other-secret' }, async (other) => {
      await expect(other.hgetall(`${PREFIX}:baton:repos`)).rejects.toThrow(/NOPERM/);
      await expect(other.lrange(`${PREFIX}:${queue}:wait`, 0, -1)).rejects.toThrow(/NOPERM/);
      await expect(other.hgetall(`${PREFIX}:${queue}:1`)).rejects.toThrow(/NOPERM/);
      await expect(other.call('KEYS', '*')).rejects.toThrow(/NOPERM/);
      await expect(other.call('SCAN', '0')).rejects.toThrow(/NOPERM/);
      // its own prefix is fine
      expect(await other.set('{other}:probe', '1')).toBe('OK');
    });
    // Through baton's own client (the hook's path): the add is refused.
    const client = await RepositoryQueueClient.connect(
      { redisUrl: `${otherUrl}?ca=${encodeURIComponent(tls.caFile)}`, prefix: PREFIX },
      identity,
      2_000,
    );
    try {
      const envelope = envelopeFor({ intent: 'abort', taskRef: TASK_ID, reason: 'sneaky' }, identity, 'cli', 'c-sneaky');
      await expect(client.enqueue(envelope)).rejects.toThrow(/NOPERM/);
    } finally {
      await client.close();
    }
    await withNode({ port: tls.port, tls: { ca }, username: 'baton', password: 'baton-secret' }, async (baton) => {
      expect(await baton.exists(`${PREFIX}:${queue}:c-sneaky`)).toBe(0);
      expect(await baton.llen(`${PREFIX}:${queue}:wait`)).toBe(0);
    });
    expect(fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8')).toBe(before);
  });
});
