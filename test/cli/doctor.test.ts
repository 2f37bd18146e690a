import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { batonShimDir } from '../support/agentClients.ts';
import { uniquePrefix } from '../support/fixtures.ts';
import { git } from '../support/gitRepo.ts';
import { runBaton, startWorkerProcess } from '../support/processes.ts';
import type { WorkerProcess } from '../support/processes.ts';
import { startPrivateRedis } from '../support/redisServer.ts';
import type { PrivateRedis } from '../support/redisServer.ts';

// baton doctor (docs/adopting.md "baton doctor"): one line per check with what to
// do, --json for scripts, exit 0 only when every check holds.

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

type Report = { ok: boolean; repository: string; checks: Array<{ check: string; status: string; message: string }> };

async function doctor(env: NodeJS.ProcessEnv): Promise<{ code: number | null; report: Report }> {
  const run = await runBaton(['doctor', '--json'], { cwd: root, env, timeoutMs: 60_000 });
  return { code: run.code, report: JSON.parse(run.stdout) as Report };
}
const statusOf = (report: Report) => Object.fromEntries(report.checks.map((check) => [check.check, check.status]));
const messageOf = (report: Report, name: string) => report.checks.find((check) => check.check === name)?.message ?? '';

describe('baton doctor', () => {
  it('names the missing worker and the missing trust, and says what to do; exit 1', async () => {
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
      'hooks claude-code': 'ok',
      'hooks codex': 'ok',
      'trust claude-code': 'fail',
      'trust codex': 'fail',
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
    expect(text.stdout.trim().split('\n')).toHaveLength(report.checks.length);
    expect(text.stdout).toMatch(/^FAIL {2}worker {13}no worker serves /m);
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
