import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { findRepoRoot, REPO_ROOT_NOT_FOUND_MESSAGE } from '../../src/base/repoRoot.ts';
import type { ProcessedJob, ServedRepository } from '../../src/workers/processor.ts';
import { EXIT_FAILURE, EXIT_USAGE, jobLine, quietRepeats, ServiceHost, timestampedLog } from '../../src/cli/serviceHost.ts';
import { waitForRedis } from '../../src/cli/redisWait.ts';
import { runBaton } from '../support/processes.ts';
import { dirOutsideAnyRepository } from '../support/fixtures.ts';

// The service commands (worker, start, demo, dashboard) share one host (src/cli/serviceHost.ts):
// one exit code for a repository that is not there, one log format, one stop order.

const UNREACHABLE_REDIS = 'unix:///nonexistent/baton-test/redis.sock';
const outside = dirOutsideAnyRepository('no-repo');
const missing = path.join(outside, 'no-such-dir');
afterAll(() => fs.rmSync(outside, { recursive: true, force: true }));

/** Environment without a Redis address, so nothing can reach a Redis by accident. */
function env(): NodeJS.ProcessEnv {
  const copy: NodeJS.ProcessEnv = { ...process.env, BATON_DEFAULT_REDIS_URL: UNREACHABLE_REDIS, NO_COLOR: '1', PATH: '/nonexistent' };
  delete copy.REDIS_URL;
  return copy;
}

const HINT = 'run it inside a git repository or pass --repo DIR';

describe('every command pointed at no repository exits 1, the code of a failure (docs/usage.md "Exit codes"), before touching Redis', () => {
  it('(precondition: no directory above the temp folder holds a .git, or every command would find it)', () => {
    expect(findRepoRoot(missing)).toBeNull();
  });

  it.each([['worker'], ['start']])('baton %s --repo <not a repository>', async (command) => {
    const run = await runBaton([command, '--repo', missing], { env: env(), cwd: outside });
    expect(run.code).toBe(EXIT_FAILURE);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`baton ${command}: ${REPO_ROOT_NOT_FOUND_MESSAGE} (${missing}); ${HINT}\n`);
  });

  it.each([['worker'], ['start']])('baton %s outside any repository', async (command) => {
    const run = await runBaton([command], { env: env(), cwd: outside });
    expect(run.code).toBe(EXIT_FAILURE);
    expect(run.stderr).toBe(`baton ${command}: ${REPO_ROOT_NOT_FOUND_MESSAGE}; ${HINT}\n`);
  });

  // The same kind of error, the same exit code, whatever the command; each says so in its own words.
  it.each([
    [['task', '01', 'status'], 'stdout'],
    [['task', '01', 'begin-or-resume', '--redis', UNREACHABLE_REDIS], 'stdout'],
    [['runs'], 'stderr'],
    [['init', '--client', 'claude-code'], 'stderr'],
    [['new', 'A title'], 'stderr'],
    [['doctor'], 'stderr'],
    [['doctor', '--json'], 'stdout'],
    [['uninstall'], 'stderr'],
    [['install-hooks', 'claude-code'], 'stderr'],
    [['fingerprint'], 'stderr'],
    [['worker'], 'stderr'],
    [['start'], 'stderr'],
  ] as const)('baton %s outside any repository: exit 1, "not inside a git repository"', async (args, stream) => {
    const run = await runBaton([...args], { env: env(), cwd: outside });
    expect(run.code, run.stdout + run.stderr).toBe(EXIT_FAILURE);
    expect(run[stream]).toContain(REPO_ROOT_NOT_FOUND_MESSAGE);
    expect(REPO_ROOT_NOT_FOUND_MESSAGE).toBe('current directory is not inside a git repository');
  });

  it('a usage error is 2 whether or not there is a repository: an unknown option to any command outside any repository', async () => {
    const commands = [
      ['init'],
      ['new'],
      ['doctor'],
      ['uninstall'],
      ['install-hooks', 'claude-code'],
      ['worker'],
      ['start'],
      ['runs'],
      ['demo'],
      ['dashboard'],
      ['fingerprint'],
      ['task', '01', 'status'],
    ];
    for (const args of commands.map((command) => [...command, '--no-such-option'])) {
      const run = await runBaton(args, { env: env(), cwd: outside });
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(EXIT_USAGE);
    }
  });

  it('baton dashboard serves no single repository: --repo <not a repository> is ignored with a warning', async () => {
    const run = await runBaton(['dashboard', '--repo', missing, '--redis', UNREACHABLE_REDIS], { env: env(), cwd: outside });
    expect(run.stderr).toContain('baton dashboard: warning: --repo is ignored');
    expect(run.stderr).not.toContain(REPO_ROOT_NOT_FOUND_MESSAGE);
    // It went on to Redis, which does not answer here.
    expect(run.code).toBe(EXIT_FAILURE);
    expect(run.stderr).toContain('baton dashboard: cannot reach Redis');
  });

  it('baton demo makes its own repository: --repo <not a repository> is ignored with a warning', async () => {
    const run = await runBaton(['demo', '--repo', missing, '--redis', UNREACHABLE_REDIS], { env: env(), cwd: outside, timeoutMs: 30_000 });
    expect(run.stderr).toContain('baton demo: warning: --repo is ignored');
    expect(run.stderr).not.toContain(REPO_ROOT_NOT_FOUND_MESSAGE);
    expect(run.code).toBe(EXIT_FAILURE);
    expect(run.stderr).toContain('baton demo: Redis at');
    expect(run.stderr).toContain('does not answer');
  });
});

describe('ServiceHost', () => {
  it('timestampedLog prefixes each line with an ISO timestamp', () => {
    const lines: string[] = [];
    timestampedLog((line) => lines.push(line))('worker ready');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z worker ready$/);
  });

  it('jobLine names the repository, the source, the intent, the task, the outcome and the time', () => {
    const repository = { root: '/repo' } as ServedRepository;
    const job = (result: object, replayed: boolean) =>
      ({ envelope: { source: 'hook', intent: 'hook-stop', taskRef: 'auto' }, result, replayed }) as unknown as ProcessedJob;
    expect(jobLine(repository, job({ status: 'running' }, false), 3.125)).toBe('/repo hook hook-stop auto -> running 3.1ms');
    expect(jobLine(repository, job({ status: 'failed', error: { code: 'ORCHESTRATION_RUN_MISSING' } }, true), 12)).toBe(
      '/repo hook hook-stop auto -> failed ORCHESTRATION_RUN_MISSING (duplicate, first result returned) 12.0ms',
    );
  });

  it('stop() runs the steps newest first, reports a failing one and still runs the rest', async () => {
    const order: string[] = [];
    const host = new ServiceHost('baton test', () => undefined);
    host.onStop(() => void order.push('redis'));
    host.onStop(() => {
      order.push('worker');
      throw new Error('worker would not close');
    });
    host.onStop(async () => void order.push('dashboard'));
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    let written: unknown[][];
    try {
      await host.stop();
    } finally {
      written = stderr.mock.calls.map((call) => [...call]);
      stderr.mockRestore();
    }
    expect(order).toEqual(['dashboard', 'worker', 'redis']);
    expect(written).toEqual([['baton test: stopping: worker would not close\n']]);
    await host.stop(); // each step runs once
    expect(order).toHaveLength(3);
  });
});

describe('a worker waiting for Redis, and a Redis that stays down', () => {
  it('waitForRedis says what to do once, then only a count now and then, until Redis answers', async () => {
    const said: string[] = [];
    const logged: string[] = [];
    let probes = 0;
    const answered = await waitForRedis('redis://127.0.0.1:1', {
      say: (message) => said.push(message),
      log: (line) => logged.push(line),
      probe: async () => ((probes += 1) > 4 ? { kind: 'answers' } : { kind: 'unreachable', reason: 'connect ECONNREFUSED 127.0.0.1:1' }),
      retryMs: 5,
      reportMs: 0,
    });
    expect(answered).toBe('ready');
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^no Redis: nothing answers on redis:\/\/127\.0\.0\.1:1\. Any one of these works:\n/);
    expect(said[0]).toMatch(/waiting for Redis at redis:\/\/127\.0\.0\.1:1: retrying every 0\.005 s \(Ctrl-C to stop\)$/);
    expect(logged.slice(0, 3)).toEqual(
      [2, 3, 4].map((attempts) =>
        expect.stringMatching(new RegExp(`^still no Redis at redis://127\\.0\\.0\\.1:1: ${attempts} attempts in \\d+ s`)),
      ),
    );
    expect(logged.at(-1)).toMatch(/^Redis at redis:\/\/127\.0\.0\.1:1 answers after 5 attempts/);
    // A Redis that answers at once: nothing said at all.
    const quiet: string[] = [];
    expect(
      await waitForRedis('redis://127.0.0.1:1', {
        say: (message) => quiet.push(message),
        log: (line) => quiet.push(line),
        probe: async () => ({ kind: 'answers' }),
      }),
    ).toBe('ready');
    expect(quiet).toEqual([]);
    // A Redis that answers but refuses (a wrong password): said once with why, not waited for.
    const refused: string[] = [];
    const outcome = await waitForRedis('redis://127.0.0.1:1', {
      say: (message) => refused.push(message),
      log: (line) => refused.push(line),
      probe: async () => ({ kind: 'refused', reason: 'WRONGPASS invalid username-password pair' }),
    });
    expect(outcome).toBe('refused');
    expect(refused).toEqual([
      "Redis at redis://127.0.0.1:1 answers but refuses this worker: WRONGPASS invalid username-password pair; check the URL's user and password, its TLS files, and the Redis ACL (docs/teams.md)",
    ]);
  });

  it('quietRepeats says a repeated line again only after the quiet time, with its count', () => {
    const lines: string[] = [];
    let now = 0;
    const log = quietRepeats(
      (line) => lines.push(line),
      30_000,
      () => now,
    );
    for (let second = 0; second < 40; second += 2) {
      now = second * 1000;
      log('redis: connect ECONNREFUSED 127.0.0.1:6379');
      log('queue q: connect ECONNREFUSED 127.0.0.1:6379');
    }
    log('serving /repo');
    expect(lines).toEqual([
      'redis: connect ECONNREFUSED 127.0.0.1:6379',
      'queue q: connect ECONNREFUSED 127.0.0.1:6379',
      'redis: connect ECONNREFUSED 127.0.0.1:6379 (14 more times in the last 30 s)',
      'queue q: connect ECONNREFUSED 127.0.0.1:6379 (14 more times in the last 30 s)',
      'serving /repo',
    ]);
  });
});
