import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spooledFiles } from '../../src/queue/spool.ts';
import { UNTOUCHED, startForeignRedis } from '../support/foreignRedis.ts';
import type { ForeignRedis } from '../support/foreignRedis.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { TASK_ID } from '../support/fixtures.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { jsonOf, runBaton } from '../support/processes.ts';

// Issue 44, "One rule for which Redis every command uses" (docs/usage.md "Which Redis"): with no
// URL given and no private Redis running, no command writes into a Redis that merely answers on the
// default address. That address is pointed (BATON_DEFAULT_REDIS_URL) at a "foreign" Redis on a port
// this test owns (test/support/foreignRedis.ts), holding someone's keys; every command runs against
// it, and afterwards it holds exactly what it held, with no command run on it beyond looking.

let foreign: ForeignRedis;
let repo: GitRepo;

/** A user's shell with no Redis named anywhere; "the default address" is the foreign Redis. */
function unnamedEnv(): NodeJS.ProcessEnv {
  const { REDIS_URL: _url, BATON_PREFIX: _prefix, ...rest } = process.env;
  return { ...rest, BATON_DEFAULT_REDIS_URL: foreign.url, NO_COLOR: '1' };
}

const run = (args: string[], input?: string) =>
  runBaton(args, { cwd: repo.root, env: unnamedEnv(), timeoutMs: 20_000, ...(input !== undefined ? { input } : {}) });

/** Both ways the error names: name a Redis, or run `baton start`. */
function expectBothWays(text: string, command: string): void {
  expect(text).toContain(`no Redis is named for ${repo.root}`);
  expect(text).toContain(`${command} --redis redis://host:6379   (or set REDIS_URL)`);
  expect(text).toContain("run 'baton start' in the repository");
}

beforeAll(async () => {
  foreign = await startForeignRedis();
  repo = gitRepoWithTask();
});

afterAll(async () => {
  repo?.cleanup();
  await foreign?.stop();
});

describe('with a Redis on the default address and none named, a command', () => {
  it('baton worker: refuses, naming both ways', async () => {
    const worker = await run(['worker', '--repo', repo.root]);
    expect(worker.code).toBe(1);
    expectBothWays(worker.stderr, 'baton worker');
  });

  it('baton worker --discover: refuses (no repository, so only a named Redis)', async () => {
    const roots = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-which-'));
    try {
      const worker = await run(['worker', '--discover', '--allow-root', roots]);
      expect(worker.code).toBe(1);
      expect(worker.stderr).toContain('no Redis is named, and baton does not guess one');
    } finally {
      fs.rmSync(roots, { recursive: true, force: true });
    }
  });

  it('baton dashboard: refuses, naming both ways', async () => {
    const dashboard = await run(['dashboard', '--port', '0']);
    expect(dashboard.code).toBe(1);
    expectBothWays(dashboard.stderr, 'baton dashboard');
  });

  it('baton task: BATON_REDIS_UNAVAILABLE, naming both ways', async () => {
    const task = await run(['task', TASK_ID, 'begin-or-resume']);
    const result = jsonOf(task);
    expect(result.error.code).toBe('BATON_REDIS_UNAVAILABLE');
    expectBothWays(result.error.message, 'baton task');
  });

  it('baton hook: keeps the event in the spool and says why (a hook never blocks the agent)', async () => {
    const hook = await run(['hook', 'claude-code'], nativePayload('claude-code', 'SubagentStart', 'executor', 'child-which', repo.root));
    expect(hook.code).toBe(0);
    expect(hook.stderr).toContain(`no Redis is configured for ${repo.root}`);
    expect(spooledFiles(repo.root)).toHaveLength(1);
  });

  it('baton doctor: fails its redis check, naming both ways, and looks at nothing', async () => {
    const doctor = await run(['doctor', '--json']);
    expect(doctor.code).toBe(1);
    const checks = (jsonOf(doctor).checks as Array<{ check: string; status: string; message: string }>).filter(({ check }) =>
      check.startsWith('redis'),
    );
    expect(checks.map(({ check, status }) => [check, status])).toEqual([
      ['redis', 'fail'],
      ['redis settings', 'skip'],
    ]);
    expectBothWays(checks[0]!.message, 'baton doctor');
  });

  it('baton runs: lists the runs from the files (no Redis at all)', async () => {
    const runs = await run(['runs', '--json']);
    expect(runs.code).toBe(0);
    expect(JSON.parse(runs.stdout).repo).toBe(repo.root);
  });

  it('(after all of them) the foreign Redis holds what it held, and nothing ran on it beyond looking', async () => {
    expect(await foreign.touches()).toEqual(UNTOUCHED);
  });
});
