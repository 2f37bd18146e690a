import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { startPrivateRedis, startTcpRedis } from '../support/redisServer.ts';
import { jsonOf, runBaton } from '../support/processes.ts';
import { startBaton } from '../support/services.ts';

// Errors a user meets with the built bundle: a worker started before its Redis
// says once what to do and waits quietly; a URL that cannot name a Redis is a one-line usage error
// for every command, never a stack trace and never "start Redis".

const repo: GitRepo = gitRepoWithTask();
afterAll(() => repo.cleanup());

/** No Redis configured anywhere: only what a test passes reaches one. */
function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const copy: NodeJS.ProcessEnv = { ...process.env, BATON_DEFAULT_REDIS_URL: 'unix:///nonexistent/baton-test/redis.sock', NO_COLOR: '1' };
  delete copy.REDIS_URL;
  return { ...copy, ...extra };
}

const countOf = (text: string, part: string) => text.split(part).length - 1;

describe('baton worker before its Redis answers', () => {
  it('says once what to do, waits quietly, serves when Redis comes, and logs a later outage once per line', async () => {
    const redis = await startPrivateRedis();
    await redis.stop();
    // The worker's trace has a line per error of each Redis connection, which its log says once.
    const traceFile = path.join(redis.dir, 'worker-trace.jsonl');
    const worker = await startBaton(['worker', '--repo', repo.root, '--redis', redis.url, '--shutdown-deadline', '3000'], {
      env: env({ BATON_TRACE_FILE: traceFile }),
      ready: /waiting for Redis at/,
    });
    try {
      const waiting = worker.output();
      expect(waiting).toContain(`baton worker: no Redis: nothing answers on ${redis.url}. Any one of these works:`);
      expect(waiting).toContain('baton start');
      expect(waiting).toContain('docker run -d --name baton-redis -p 127.0.0.1:6379:6379 redis:7 redis-server --appendonly yes');
      expect(waiting).toContain('REDIS_URL=redis://host:6379 baton worker');
      // Time for two more attempts (2 s apart) before Redis comes; what the worker said meanwhile is
      // judged once it says how many attempts it made, which closes the window.
      await new Promise((resolve) => setTimeout(resolve, 4_500));
      expect(worker.child.exitCode).toBeNull();

      await redis.start();
      await expect.poll(() => worker.output(), { timeout: 20_000 }).toContain(' ready: ');
      const answered = new RegExp(`Redis at ${redis.url.replace(/[/.]/g, '\\$&')} answers after (\\d+) attempts`).exec(worker.output());
      expect(answered, worker.output()).not.toBeNull();
      // At least two attempts failed after the first message, and said nothing: up to the line
      // that counts them, the output is that message alone.
      expect(Number(answered![1])).toBeGreaterThanOrEqual(3);
      const before = worker.output().slice(0, answered!.index);
      expect(before.startsWith(waiting), worker.output()).toBe(true);
      expect(before.slice(waiting.length)).toMatch(/^\S* ?$/);
      expect(countOf(worker.output(), 'Any one of these works')).toBe(1);

      // Redis goes away while the worker serves: each connection's error once, not every 2 s.
      const stoppedAt = Date.now();
      await redis.stop();
      await expect.poll(() => worker.output(), { timeout: 10_000 }).toMatch(/redis: connect E/);
      // Until the trace shows each failing connection's error again after the first (a retry that
      // failed while Redis stayed down), for the worker's own connection at least.
      const retried = () => {
        const errors = fs.existsSync(traceFile)
          ? fs
              .readFileSync(traceFile, 'utf8')
              .split('\n')
              .filter((line) => line.includes('"step":"redis-error"'))
              .map((line) => JSON.parse(line) as { at: number; connection: string; message: string })
              .filter((entry) => entry.at >= stoppedAt && /connect E[A-Z]+/.test(entry.message))
          : [];
        const perConnection = new Map<string, number>();
        for (const { connection } of errors) perConnection.set(connection, (perConnection.get(connection) ?? 0) + 1);
        return perConnection;
      };
      await expect
        .poll(
          () => {
            const perConnection = retried();
            return (perConnection.get('worker') ?? 0) >= 2 && [...perConnection.values()].every((count) => count >= 2);
          },
          { timeout: 20_000 },
        )
        .toBe(true);

      // Asked to stop while its Redis is down, it stops: every step that waits for Redis is bounded,
      // and no job was being applied, so nothing is unfinished.
      expect(await worker.stop('SIGTERM')).toBe(0);
      expect(worker.output()).toMatch(/SIGTERM: finishing the active job, then stopping \(deadline 3000 ms\)\n.*stopped\n/);
      // Judged on the whole output of the exited process (no later line can come): each
      // connection's error once, not once per retry.
      const lines = worker
        .output()
        .split('\n')
        .filter((line) => /connect E[A-Z]+/.test(line))
        .map((line) => line.replace(/^\S+ /, ''));
      expect(lines.length).toBeGreaterThan(0);
      expect(new Set(lines).size).toBe(lines.length);
      // ... while the trace counted more errors than that: the retries happened, and were quiet.
      const traced = [...retried().values()].reduce((sum, count) => sum + count, 0);
      expect(traced).toBeGreaterThan(lines.length);
    } finally {
      await worker.stop('SIGKILL');
      fs.rmSync(redis.dir, { recursive: true, force: true });
    }
  }, 90_000);

  it('a signal while it waits stops it cleanly', async () => {
    const worker = await startBaton(['worker', '--repo', repo.root, '--redis', 'unix:///nonexistent/baton-test/redis.sock'], {
      env: env(),
      ready: /waiting for Redis at unix:\/\/\/nonexistent/,
    });
    expect(await worker.stop('SIGINT')).toBe(0);
    expect(worker.output()).toMatch(
      /SIGINT: stopped before Redis at unix:\/\/\/nonexistent\/baton-test\/redis\.sock answered \(\d+ attempts\)/,
    );
  }, 30_000);
});

describe('baton worker and a Redis that answers but refuses it', () => {
  it('a password-protected Redis without the password: one message naming NOAUTH, exit 1, no waiting', async () => {
    const redis = await startTcpRedis({ password: 'baton-test-secret' });
    try {
      const run = await runBaton(['worker', '--repo', repo.root, '--redis', `redis://127.0.0.1:${redis.port}`], {
        env: env(),
        timeoutMs: 20_000,
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        new RegExp(`^baton worker: Redis at redis://127\\.0\\.0\\.1:${redis.port} answers but refuses this worker: .*NOAUTH`),
      );
      expect(run.stderr).not.toContain('Any one of these works');
    } finally {
      await redis.stop();
    }
  }, 30_000);
});

describe('a Redis URL that names no Redis is a usage error', () => {
  it.each([['worker'], ['start'], ['dashboard'], ['demo']])('baton %s --redis notaurl: one line, exit 2, no stack', async (command) => {
    const run = await runBaton(
      [command, '--redis', 'notaurl', ...(command === 'demo' ? [] : command === 'dashboard' ? [] : ['--repo', repo.root])],
      { env: env() },
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `baton ${command}: --redis: invalid Redis URL 'notaurl': expected redis://, rediss://, unix://, redis+cluster://, rediss+cluster://, redis+sentinel:// or rediss+sentinel://\n`,
    );
  });

  it('REDIS_URL=http://… is named as where the bad URL came from', async () => {
    const run = await runBaton(['worker', '--repo', repo.root], { env: env({ REDIS_URL: 'http://127.0.0.1:6379' }) });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^baton worker: REDIS_URL: invalid Redis URL 'http:\/\/127\.0\.0\.1:6379'/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('baton task --redis http://…: ORCHESTRATION_PAYLOAD_INVALID (exit 2), not BATON_REDIS_UNAVAILABLE', async () => {
    const run = await runBaton(['task', '01', 'begin-or-resume', '--redis', 'http://127.0.0.1:6379'], { env: env(), cwd: repo.root });
    expect(run.code).toBe(2);
    expect(jsonOf(run)).toEqual({
      status: 'failed',
      changed: false,
      error: {
        code: 'ORCHESTRATION_PAYLOAD_INVALID',
        message: expect.stringMatching(/^--redis: invalid Redis URL 'http:\/\/127\.0\.0\.1:6379': expected redis:\/\//),
      },
    });
    // A read-only intent does not use Redis: the option is ignored with its warning, as before.
    const route = await runBaton(['task', '01', 'route', '--redis', 'http://127.0.0.1:6379'], { env: env(), cwd: repo.root });
    expect(route.code).toBe(0);
    expect(route.stderr).toContain('--redis is ignored');
  });
});
