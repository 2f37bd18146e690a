import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { missingTool, requireHere } from '../support/requirements.ts';
import { TASK_ID, readRun, uniquePrefix } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { batonEnv, jsonOf, runBaton } from '../support/processes.ts';
import { dashboardUrlOf, startBaton } from '../support/services.ts';
import type { ServiceProcess } from '../support/services.ts';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { UNTOUCHED, startForeignRedis } from '../support/foreignRedis.ts';
import type { ForeignRedis } from '../support/foreignRedis.ts';
import { findRedisServer } from '../../src/redisServer/launch.ts';

// `baton start`: worker + dashboard for the repository, with Redis from REDIS_URL or --redis, else a
// private redis-server it starts — or instructions when there is none. A Redis that merely answers on
// the default address is someone else's: baton says it passed it over and never writes into it. The
// default address is pointed (BATON_DEFAULT_REDIS_URL) at a closed socket, or at a "foreign" Redis
// the test owns (test/support/foreignRedis.ts), never at this machine's 6379.

const redisUrl = inject('redisUrl');
const CLOSED = 'unix:///nonexistent/baton-default-probe.sock';
let repo: GitRepo;
const services: ServiceProcess[] = [];
let foreign: ForeignRedis | null = null;

afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.stop('SIGKILL')));
  repo?.cleanup();
  await foreign?.stop();
  foreign = null;
});

function envWithout(name: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  delete env[name];
  return env;
}

const queueRoots = async (url: string): Promise<string[]> =>
  ((await (await fetch(new URL('api/queues', url))).json()) as { queues: { displayName: string }[] }).queues.map(
    (entry) => entry.displayName,
  );

describe('baton start', () => {
  it('with REDIS_URL: serves the repository (worker + dashboard) and stops cleanly on SIGINT', async () => {
    repo = gitRepoWithTask();
    const env = batonEnv({ redisUrl, prefix: uniquePrefix('start') }, { BATON_DEFAULT_REDIS_URL: CLOSED });
    const started = performance.now();
    const service = await startBaton(['start', '--port', '0'], { env, cwd: repo.root, ready: /baton ready in \d+ ms/ });
    services.push(service);
    console.info(`baton start: ready ${(performance.now() - started).toFixed(0)} ms after spawn`);
    expect(service.output()).toContain(`serving ${repo.root}`);
    expect(service.output()).toContain(`  redis      ${redisUrl.replace(/:[^:@/]*@/, ':***@')}\n  worker`);
    // Nothing is wired yet: the banner names baton init, the command that keeps uninstall's record.
    expect(service.output()).toMatch(/^ {2}agents {5}no client is wired here yet: run 'baton init' /m);
    expect(service.output()).not.toContain('install-hooks');
    const url = dashboardUrlOf(service);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(await queueRoots(url)).toEqual([`${repo.root} (${os.hostname()})`]);
    const begun = await runBaton(['task', '01', 'begin-or-resume'], { env, cwd: repo.root });
    expect(jsonOf(begun)).toMatchObject({ status: 'running', taskId: TASK_ID });
    expect(await service.stop('SIGINT')).toBe(0);
    expect(service.output()).toContain('stopped');
  });

  it('starts a private redis-server (append-only, noeviction), passing over the Redis on the default address, and tasks find it', async (context) => {
    requireHere(context, missingTool(findRedisServer() !== null, 'redis-server', 'redis-server'));
    repo = gitRepoWithTask();
    foreign = await startForeignRedis();
    const env = envWithout('REDIS_URL', {
      BATON_PREFIX: uniquePrefix('start-private'),
      BATON_DEFAULT_REDIS_URL: foreign.url,
      CODEX_HOME: path.join(repo.root, '.git', 'codex-home'),
      CLAUDE_CONFIG_DIR: path.join(repo.root, '.git', 'claude-home'),
      COPILOT_HOME: path.join(repo.root, '.git', 'copilot-home'),
    });
    expect((await runBaton(['init'], { env, cwd: repo.root })).code).toBe(0);
    const service = await startBaton(['start', '--port', '0'], { env, cwd: repo.root, ready: /baton ready in \d+ ms/ });
    services.push(service);
    expect(service.output()).toMatch(/^ {2}redis {6}unix:\/\/\S+ \(private redis-server, append-only data in /m);
    expect(service.output()).toContain(
      `\n             not using the Redis that answers on ${foreign.url} (nothing names it); to use it: baton start --redis ${foreign.url}\n`,
    );
    expect(service.output()).not.toContain('warning: Redis');
    expect(service.output()).toContain(
      "  agents     claude-code, codex and copilot-cli wired by baton init ('baton doctor' checks the hooks start)\n",
    );
    const stateDir = path.join(repo.root, '.git', 'baton', 'redis');
    const privateUrl = fs.readFileSync(path.join(stateDir, 'url'), 'utf8').trim();
    expect(privateUrl).toBe(`unix://${path.join(stateDir, 'redis.sock')}`);
    const redis = new Redis(redisOptionsFromUrl(privateUrl));
    try {
      expect(await redis.config('GET', 'appendonly')).toEqual(['appendonly', 'yes']);
      expect(await redis.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
    } finally {
      redis.disconnect();
    }
    // No REDIS_URL anywhere: `baton task` finds the private server of `baton start` by itself.
    const begun = await runBaton(['task', '01', 'begin-or-resume'], { env, cwd: repo.root });
    expect(jsonOf(begun), begun.stderr).toMatchObject({ status: 'running', taskId: TASK_ID });
    expect(readRun(repo.taskDir).status).toBe('running');
    expect(await queueRoots(dashboardUrlOf(service))).toEqual([`${repo.root} (${os.hostname()})`]);

    expect(await service.stop('SIGINT')).toBe(0);
    expect(fs.existsSync(path.join(stateDir, 'url'))).toBe(false);
    expect(fs.existsSync(path.join(stateDir, 'redis.sock'))).toBe(false); // the server shut down
    expect(fs.readdirSync(stateDir)).toContain('appendonlydir');
    expect(await foreign.touches()).toEqual(UNTOUCHED);
  });

  it('with a Redis on the default address and no redis-server: writes nothing into it and says how to use it', async () => {
    repo = gitRepoWithTask();
    foreign = await startForeignRedis();
    const env = envWithout('REDIS_URL', { BATON_DEFAULT_REDIS_URL: foreign.url, PATH: '/nonexistent' });
    const run = await runBaton(['start', '--port', '0'], { env, cwd: repo.root });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`a Redis answers on ${foreign.url}, but nothing names it (--redis, REDIS_URL)`);
    expect(run.stderr).toContain(`baton start --redis ${foreign.url}`);
    expect(run.stderr).toContain('apt-get install -y redis-server');
    expect(await foreign.touches()).toEqual(UNTOUCHED);

    // Named, it is used: the queue lands there (and touches() sees writes when there are some).
    const prefix = uniquePrefix('start-named');
    const named = await startBaton(['start', '--port', '0', '--redis', foreign.url], {
      env: envWithout('REDIS_URL', { BATON_DEFAULT_REDIS_URL: foreign.url, BATON_PREFIX: prefix }),
      cwd: repo.root,
      ready: /baton ready in \d+ ms/,
    });
    services.push(named);
    expect(named.output()).toContain(`  redis      ${foreign.url}\n  worker`);
    expect(await named.stop('SIGINT'), named.output()).toBe(0);
    const touched = await foreign.touches();
    expect(touched.keys.some((key) => key.startsWith(`${prefix}:`))).toBe(true);
    expect(touched.commands.length).toBeGreaterThan(0);
  });

  it('says exactly how to get Redis when none answers and redis-server is not installed', async () => {
    repo = gitRepoWithTask();
    const env = envWithout('REDIS_URL', { BATON_DEFAULT_REDIS_URL: CLOSED, PATH: '/nonexistent' });
    const run = await runBaton(['start', '--port', '0'], { env, cwd: repo.root });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('no Redis');
    expect(run.stderr).toContain('apt-get install -y redis-server');
    expect(run.stderr).toContain('docker run -d --name baton-redis -p 127.0.0.1:6379:6379 redis:7 redis-server --appendonly yes');
    expect(run.stderr).toContain('REDIS_URL=');
    expect(fs.existsSync(path.join(repo.root, '.git', 'baton', 'redis', 'url'))).toBe(false);
  });

  it('refuses a non-loopback dashboard without a token, before starting anything', async () => {
    repo = gitRepoWithTask();
    const run = await runBaton(['start', '--host', '0.0.0.0', '--port', '0'], {
      env: batonEnv({ redisUrl, prefix: uniquePrefix('start-host') }, { BATON_DASHBOARD_TOKEN: '' }),
      cwd: repo.root,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('without a token');
  });
});
