import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TASK_ID } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { jsonOf, runBaton } from '../support/processes.ts';

// `--repo`, `--redis` and `--help` work with every command: scripts pass them everywhere. A command
// with no use for one accepts it and warns that it ignores it (never "unknown option").

const UNREACHABLE_REDIS = 'unix:///nonexistent/baton-test/redis.sock';
let repo: GitRepo;

beforeAll(() => {
  repo = gitRepoWithTask();
});
afterAll(() => repo.cleanup());

/** Environment without a Redis address, so nothing can reach a Redis by accident. */
function env(): NodeJS.ProcessEnv {
  const copy: NodeJS.ProcessEnv = { ...process.env, BATON_DEFAULT_REDIS_URL: UNREACHABLE_REDIS, NO_COLOR: '1' };
  delete copy.REDIS_URL;
  return copy;
}

describe('--help on every command names --repo and --redis', () => {
  const commands = [
    ['task'],
    ['hook'],
    ['worker'],
    ['start'],
    ['dashboard'],
    ['runs'],
    ['install-hooks'],
    ['fingerprint'],
    ['demo'],
    ['init'],
    ['new'],
    ['doctor'],
    ['uninstall'],
  ];
  it.each(commands)('baton %s --help', async (command) => {
    const run = await runBaton([command, '--help'], { cwd: repo.root, env: env() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/--repo (<dir>|DIR)/);
    expect(run.stdout).toMatch(/--redis (<url>|URL)/);
  });

  it('baton --help says so', async () => {
    const run = await runBaton(['--help'], { env: env() });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Options: --repo DIR, --redis URL and -h, --help work with every command');
  });
});

describe('a command that does not use Redis, given --redis', () => {
  it('baton runs warns and lists the runs', async () => {
    const run = await runBaton(['runs', '--redis', UNREACHABLE_REDIS, '--repo', repo.root], { env: env() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('baton runs: warning: --redis is ignored: baton runs reads the run files directly; it does not use Redis\n');
    expect(run.stdout).toMatch(
      new RegExp(
        `^no orchestration runs in ${repo.root} yet\\. To see one, run 'baton demo'.*\n` +
          'queue baton-[0-9a-f]{16} · checkout [0-9a-f]{16} on [^:]+:' +
          repo.root +
          '\n$',
      ),
    );
  });

  it('baton task <ref> route and status warn and answer from the files', async () => {
    for (const intent of ['route', 'status']) {
      const run = await runBaton(['task', TASK_ID, intent, '--redis', UNREACHABLE_REDIS], { cwd: repo.root, env: env() });
      expect(run.stderr).toBe(`baton task: warning: --redis is ignored: '${intent}' reads the run files directly; it does not use Redis\n`);
      if (intent === 'route') {
        expect(run.code).toBe(0);
        expect(jsonOf(run).next).toMatchObject({ action: 'analyze-task', artifact: 'analysis.md' });
      } else {
        expect(run.code).toBe(1);
        expect(jsonOf(run).error.code).toBe('ORCHESTRATION_RUN_MISSING');
      }
    }
  });

  it('baton fingerprint warns and prints the fingerprint', async () => {
    const run = await runBaton(['fingerprint', '--redis', UNREACHABLE_REDIS], { cwd: repo.root, env: env() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe(
      'baton fingerprint: warning: --redis is ignored: baton fingerprint reads the work tree and .git only; it does not use Redis\n',
    );
    expect(run.stdout).toMatch(/^[0-9a-f]{40}\n$/);
  });

  it('baton install-hooks warns and installs', async () => {
    const run = await runBaton(['install-hooks', 'claude-code', '--redis', UNREACHABLE_REDIS, '--repo', repo.root], { env: env() });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      'baton install-hooks: warning: --redis is ignored: baton install-hooks only writes settings files; it does not use Redis',
    );
    expect(fs.existsSync(`${repo.root}/.claude/settings.json`)).toBe(true);
  });

  it('a state-changing intent uses --redis: no warning, and the unreachable address is reported', async () => {
    const run = await runBaton(['task', TASK_ID, 'begin-or-resume', '--redis', UNREACHABLE_REDIS], { cwd: repo.root, env: env() });
    expect(run.stderr).not.toContain('is ignored');
    expect(run.code).toBe(1);
    expect(jsonOf(run).error.code).toBe('BATON_REDIS_UNAVAILABLE');
  });
});

describe('a command that serves no single repository, given --repo', () => {
  it('baton dashboard warns (and here refuses a public bind without a token)', async () => {
    const run = await runBaton(['dashboard', '--repo', repo.root, '--host', '0.0.0.0'], { env: { ...env(), BATON_DASHBOARD_TOKEN: '' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('baton dashboard: warning: --repo is ignored: baton dashboard shows every repository recorded in Redis');
    expect(run.stderr).toContain('refusing to serve the dashboard on 0.0.0.0 without a token');
  });

  it('baton demo warns (and here reports the unreachable Redis)', async () => {
    const run = await runBaton(['demo', '--repo', repo.root, '--redis', UNREACHABLE_REDIS], { env: env(), timeoutMs: 30_000 });
    expect(run.stderr).toContain('baton demo: warning: --repo is ignored: baton demo creates its own temporary repository');
    expect(run.code).not.toBe(0);
    expect(`${run.stdout}${run.stderr}`).toContain('does not answer');
  });
});
