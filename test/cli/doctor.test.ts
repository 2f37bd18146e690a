import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { batonShimDir } from '../support/agentClients.ts';
import { uniquePrefix } from '../support/fixtures.ts';
import { git } from '../support/gitRepo.ts';
import { runBaton, startWorkerProcess } from '../support/processes.ts';
import type { WorkerProcess } from '../support/processes.ts';
import { startPrivateRedis } from '../support/redisServer.ts';
import type { PrivateRedis } from '../support/redisServer.ts';

// baton doctor (docs/adopting.md "baton doctor"): one line per check with what to do, --json for
// scripts. Levels ok, WARN (fine on a development machine: a Redis without persistence, a client
// that has not trusted the project) and FAIL; the exit code follows FAIL only, and --strict (a shared
// box, CI) counts warnings as failures.

let work: string;
let root: string;
let baseEnv: NodeJS.ProcessEnv;
let worker: WorkerProcess | null = null;
let redis: PrivateRedis | null = null;

beforeEach(() => {
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-doctor-')));
  root = path.join(work, 'project');
  fs.mkdirSync(root);
  git(root, ['init', '-q']);
  const { REDIS_URL: _url, ...rest } = process.env;
  baseEnv = {
    ...rest,
    BATON_PREFIX: uniquePrefix('doctor'),
    CODEX_HOME: path.join(work, 'codex-home'),
    CLAUDE_CONFIG_DIR: path.join(work, 'claude-home'),
    COPILOT_HOME: path.join(work, 'copilot-home'),
    PATH: `${batonShimDir(path.join(work, 'shims'))}:${process.env.PATH}`,
  };
});
afterEach(async () => {
  await worker?.stop();
  worker = null;
  await redis?.stop();
  if (redis) fs.rmSync(redis.dir, { recursive: true, force: true });
  redis = null;
  fs.rmSync(work, { recursive: true, force: true });
});

type Report = { ok: boolean; strict: boolean; repository: string; checks: Array<{ check: string; status: string; message: string }> };

async function doctor(env: NodeJS.ProcessEnv, args: string[] = []): Promise<{ code: number | null; report: Report }> {
  const run = await runBaton(['doctor', '--json', ...args], { cwd: root, env, timeoutMs: 60_000 });
  return { code: run.code, report: JSON.parse(run.stdout) as Report };
}

/** Every client's hooks installed, none of the clients trusting the project yet. */
const HOOKED_NOT_TRUSTED = {
  'hooks claude-code': 'ok',
  'hooks codex': 'ok',
  'hooks copilot-cli': 'ok',
  'trust claude-code': 'warn',
  'trust codex': 'warn',
  'trust copilot-cli': 'warn',
};
const statusOf = (report: Report) => Object.fromEntries(report.checks.map((check) => [check.check, check.status]));
const messageOf = (report: Report, name: string) => report.checks.find((check) => check.check === name)?.message ?? '';

describe('baton doctor', () => {
  it('names the missing worker (FAIL) and the missing trust (WARN), and says what to do; exit 1', async () => {
    const env = { ...baseEnv, REDIS_URL: inject('redisUrl') };
    expect((await runBaton(['init'], { cwd: root, env })).code).toBe(0);
    const { code, report } = await doctor(env);
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    expect(statusOf(report)).toMatchObject({
      repository: 'ok',
      redis: 'ok',
      worker: 'fail',
      spool: 'ok',
      ...HOOKED_NOT_TRUSTED,
    });
    expect(messageOf(report, 'repository')).toMatch(new RegExp(`^${root}, checkout id [0-9a-f]{16} \\(queue baton-[0-9a-f]{16}\\)$`));
    expect(messageOf(report, 'redis')).toContain('(REDIS_URL)');
    expect(messageOf(report, 'worker')).toContain(`no worker serves ${root}`);
    expect(messageOf(report, 'worker')).toContain(`run 'baton start' in ${root}`);
    expect(messageOf(report, 'hooks claude-code')).toMatch(
      /^SubagentStart, SubagentStop, PreToolUse, PostToolUse run 'baton' \(baton \d+\.\d+\.\d+\)$/,
    );
    expect(messageOf(report, 'trust codex')).toContain("Run 'baton init --client codex --trust'");

    // The same, one line per check.
    const text = await runBaton(['doctor'], { cwd: root, env, timeoutMs: 60_000 });
    expect(text.code).toBe(1);
    expect(text.stdout.trim().split('\n')).toHaveLength(report.checks.length + 1);
    expect(text.stdout).toMatch(/^FAIL {2}worker {13}no worker serves /m);
    expect(text.stdout).toMatch(/^WARN {2}trust codex {8}Codex skips /m);
    expect(text.stdout).toMatch(/^ok {4}redis {14}reachable at /m);
    expect(text.stdout.trim().split('\n').at(-1)).toBe(
      `${report.checks.filter((check) => check.status === 'warn').length} warning(s): fine on a development machine; on a shared box or in CI, 'baton doctor --strict' fails on them`,
    );
  });

  it('a development machine: a Redis without persistence and untrusted clients are WARN, exit 0; --strict makes them FAIL, exit 1', async () => {
    redis = await startPrivateRedis({ appendonly: false });
    const env = { ...baseEnv, REDIS_URL: redis.url };
    expect((await runBaton(['init'], { cwd: root, env })).code).toBe(0);
    worker = await startWorkerProcess(['--repo', root], { env });
    const warned = {
      repository: 'ok',
      profile: 'ok',
      redis: 'ok',
      worker: 'ok',
      'redis settings': 'warn',
      spool: 'ok',
      ...HOOKED_NOT_TRUSTED,
    };
    const relaxed = await doctor(env);
    expect(statusOf(relaxed.report)).toEqual(warned);
    expect(relaxed.report).toMatchObject({ ok: true, strict: false });
    expect(relaxed.code).toBe(0);
    expect(messageOf(relaxed.report, 'redis settings')).toBe(
      'Redis persists nothing (appendonly no, no save points); a Redis restart loses queued events. Enable appendonly yes.',
    );

    const strict = await doctor(env, ['--strict']);
    expect(statusOf(strict.report)).toEqual({
      ...warned,
      'redis settings': 'fail',
      'trust claude-code': 'fail',
      'trust codex': 'fail',
      'trust copilot-cli': 'fail',
    });
    expect(strict.report).toMatchObject({ ok: false, strict: true });
    expect(strict.code).toBe(1);
    const text = await runBaton(['doctor', '--strict'], { cwd: root, env, timeoutMs: 60_000 });
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^FAIL {2}redis settings {5}Redis persists nothing/m);
    expect(text.stdout).not.toContain('warning(s)');

    // A Redis that evicts loses jobs while it runs: FAIL without --strict too.
    const admin = new Redis(redisOptionsFromUrl(redis.url));
    try {
      await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    } finally {
      admin.disconnect();
    }
    const evicting = await doctor(env);
    expect(statusOf(evicting.report)['redis settings']).toBe('fail');
    expect(messageOf(evicting.report, 'redis settings')).toContain("Redis maxmemory-policy is 'allkeys-lru'");
    expect(evicting.code).toBe(1);
  });

  it('exits 0 when everything holds: Redis that keeps its data, a worker, hooks that run, trust', async () => {
    redis = await startPrivateRedis({ appendonly: true });
    const env = { ...baseEnv, REDIS_URL: redis.url };
    expect((await runBaton(['init', '--trust'], { cwd: root, env })).code).toBe(0);
    worker = await startWorkerProcess(['--repo', root], { env });
    const { code, report } = await doctor(env);
    expect(report.checks.filter((check) => check.status !== 'ok')).toEqual([]);
    expect(code).toBe(0);
    expect(messageOf(report, 'worker')).toContain('a worker serves this checkout');
    expect(messageOf(report, 'redis settings')).toBe('maxmemory-policy noeviction; persistence on');
  });

  it('reports an unreachable Redis with its URL and where it came from, a spooled event, and hooks whose command does not start', async () => {
    const env = { ...baseEnv, REDIS_URL: `unix://${path.join(work, 'no-redis.sock')}` };
    expect(
      (await runBaton(['init', '--client', 'claude-code', '--command', path.join(work, 'missing', 'baton')], { cwd: root, env })).code,
    ).toBe(0);
    fs.mkdirSync(path.join(root, '.git', 'baton', 'spool'), { recursive: true });
    fs.writeFileSync(path.join(root, '.git', 'baton', 'spool', '0001-event.json'), '{}');
    const { code, report } = await doctor(env);
    expect(code).toBe(1);
    expect(statusOf(report)).toMatchObject({
      redis: 'fail',
      worker: 'fail',
      spool: 'fail',
      'hooks claude-code': 'fail',
      'hooks codex': 'skip',
    });
    expect(messageOf(report, 'redis')).toContain(`cannot reach unix://${path.join(work, 'no-redis.sock')} (REDIS_URL)`);
    expect(messageOf(report, 'spool')).toContain('1 event(s) wait in .git/baton/spool/');
    expect(messageOf(report, 'hooks claude-code')).toContain(
      `the hooks run '${path.join(work, 'missing', 'baton')}', which does not start here`,
    );
    expect(messageOf(report, 'hooks codex')).toContain("run 'baton init --client codex'");
  });

  it('in a repository nobody set up, says to run baton init', async () => {
    const { code, report } = await doctor({ ...baseEnv, REDIS_URL: inject('redisUrl') });
    expect(code).toBe(1);
    expect(statusOf(report)).toMatchObject({ 'hooks claude-code': 'fail', 'hooks codex': 'fail' });
    expect(messageOf(report, 'hooks claude-code')).toContain("run 'baton init --client claude-code'");
  });
});
