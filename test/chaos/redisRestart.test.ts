import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { OrchestrationRun } from '../../src/core/types.ts';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { queueNameFor } from '../../src/queue/keys.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { heartbeatKey } from '../../src/queue/keys.ts';
import { spooledFiles } from '../../src/queue/spool.ts';
import { TASK_ID } from '../support/fixtures.ts';
import { completeStageArgs } from '../support/runSteps.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { HOOK_WAITS_FOR_RESULT, runBaton } from '../support/processes.ts';
import { useWorkerHarness } from '../support/workerHarness.ts';
import type { CliRun } from '../support/processes.ts';
import { doStageWork, sleep } from './support.ts';
import type { StageNext } from './support.ts';

// docs/architecture.md "Reliability": Redis restarted mid-stream — hooks spool, workers reconnect,
// nothing is lost. A whole lifecycle runs through the real CLI and hooks while a private
// redis-server (appendonly) is stopped and started again at random moments. Hooks must always exit
// 0, and spool at once when Redis is gone; CLI commands may fail while Redis is away and are retried with
// the same --idempotency-key (the documented way to make a retried command apply once). At the end
// every stage completed exactly once, in order, with the child ids the hooks reported, nothing is
// left in the spool, and the worker survived every restart.

const harness = useWorkerHarness();

type Json = Record<string, any>;
/** What a retried CLI call may meet while Redis is away: answers that mean "nothing decided yet". */
const TRANSIENT = new Set(['BATON_REDIS_UNAVAILABLE', 'BATON_WORKER_UNAVAILABLE', 'BATON_TIMEOUT', 'BATON_JOB_FAILED']);

describe('Redis stopped and restarted during a stream of lifecycle events', () => {
  it('hooks spool and exit 0 quickly, commands retry, and everything is applied once, in order', async () => {
    const redis = await harness.privateRedis({ appendonly: true });
    const { repo, env, worker } = await harness.serve('chaos-redis', { redisUrl: redis.url, env: { BATON_HOOK_BUDGET_MS: '4000' } });
    const root = repo.root;
    const log: string[] = [];
    let redisUp = true;
    const outages = { count: 0 };
    const stopRedis = async () => {
      redisUp = false;
      await redis.stop();
      outages.count += 1;
      log.push(`redis stopped (${outages.count})`);
    };
    const startRedis = async () => {
      await redis.start();
      redisUp = true;
      log.push('redis started');
    };

    let keyCounter = 0;
    /** A CLI intent, retried with the same idempotency key until it gets a lifecycle answer. */
    const task = async (...args: string[]): Promise<Json> => {
      const key = `chaos-redis-${(keyCounter += 1)}`;
      for (let attempt = 1; ; attempt += 1) {
        const run = await runBaton(['task', TASK_ID, ...args, '--idempotency-key', key, '--timeout', '6000'], {
          env,
          cwd: root,
          timeoutMs: 30_000,
        });
        // Whatever happens to Redis, the command answers with its one-line JSON result.
        let json: Json;
        try {
          json = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '');
        } catch {
          throw new Error(
            `baton task ${args.join(' ')} printed no JSON result (exit ${run.code}):\n${run.stdout}\n${run.stderr}\n${log.join('\n')}`,
          );
        }
        if (!(json.status === 'failed' && TRANSIENT.has(json.error?.code))) return json;
        log.push(
          `task ${args[0]} attempt ${attempt}: ${json.error.code}${json.error.message.startsWith('lost') ? ' (lost mid-command)' : ''}`,
        );
        if (attempt >= 60) throw new Error(`task ${args.join(' ')} never got through:\n${log.join('\n')}`);
        await sleep(250);
      }
    };
    const hooks: { phase: string; childId: string; run: CliRun; redisWasUp: boolean }[] = [];
    const hook = async (phase: 'SubagentStart' | 'SubagentStop', role: string, childId: string) => {
      const redisWasUp = redisUp;
      const run = await runBaton(['hook', 'claude-code'], {
        env,
        cwd: root,
        input: nativePayload('claude-code', phase, role, childId, root),
        timeoutMs: 30_000,
      });
      hooks.push({ phase, childId, run, redisWasUp });
      log.push(
        `hook ${phase} ${childId}: exit ${run.code} in ${Math.round(run.ms)} ms${run.stderr.includes('spooled') ? ' (spooled)' : ''}`,
      );
      expect(run.code, run.stderr).toBe(0);
      return run;
    };

    // Random outages while the lifecycle runs (after the first, deterministic one below).
    let chaos = false;
    let stopChaos = false;
    const chaosLoop = (async () => {
      while (!stopChaos) {
        await sleep(400 + Math.random() * 1200);
        if (!chaos || stopChaos) continue;
        await stopRedis();
        await sleep(300 + Math.random() * 1200);
        await startRedis();
      }
    })();

    try {
      expect((await task('begin-or-resume')).status).toBe('running');
      const childIds: string[] = [];
      for (let step = 1; step <= 10; step += 1) {
        const routed = await task('route');
        const next = routed.next as StageNext;
        const prepared = await task('prepare', '--client', 'claude-code');
        expect(prepared.status, JSON.stringify(prepared)).toBe('running');
        const childId = `child-${step}`;
        childIds.push(childId);
        if (step === 1) {
          // Deterministic outage: the start hook spools, twice (a duplicate delivery), then Redis returns.
          await stopRedis();
          const spooled = await hook('SubagentStart', next.role, childId);
          expect(spooled.stderr).toContain('spooled');
          await hook('SubagentStart', next.role, childId);
          expect(spooledFiles(root)).toHaveLength(2);
          await startRedis();
          chaos = true;
        } else {
          await hook('SubagentStart', next.role, childId);
        }
        doStageWork(root, repo.taskDir, next);
        // The CLI drains the spool before adding its own event, so the start is applied first.
        const completed =
          next.stage === 'commit' ? await task('stage-completed', '--agent', 'claude') : await task(...completeStageArgs(next));
        expect(completed.status, `${JSON.stringify(completed)}\n${log.join('\n')}`).toBe('running');
        await hook('SubagentStop', next.role, childId);
        const advanced = await task('advance');
        if (advanced.status === 'completed') break;
        expect(advanced.status, `${JSON.stringify(advanced)}\n${log.join('\n')}`).toBe('running');
      }
      stopChaos = true;
      await chaosLoop;
      if (!redisUp) await startRedis();
      const context = log.join('\n');
      if (process.env.CHAOS_VERBOSE) console.log(context);

      const run = JSON.parse(fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8')) as OrchestrationRun;
      expect(run.status, context).toBe('completed');
      expect(
        run.receipts.map((receipt) => `${receipt.stage}:${receipt.status}:${receipt.childId}`),
        context,
      ).toEqual(
        ['analysis', 'review-analysis', 'plan', 'review-plan', 'code', 'review-code', 'commit'].map(
          (stage, index) => `${stage}:consumed:child-${index + 1}`,
        ),
      );
      expect(run.stepCount).toBe(7);
      expect(spooledFiles(root), context).toEqual([]);
      // Hooks that met a stopped Redis spooled and exited 0. The first two that met it down (step 1,
      // run after the stop completed) spooled at once on the refused connection, without waiting out
      // their budget; a random outage may catch a hook while Redis is still shutting down and not
      // answering, when waiting for the budget is right. (Reasons, not wall-clock times:
      // docs/architecture.md "Testing".)
      const spooled = hooks.filter((entry) => entry.run.stderr.includes('spooled'));
      expect(spooled.length, context).toBeGreaterThanOrEqual(2);
      for (const entry of spooled)
        expect(entry.run.stderr, context).toMatch(/^baton: Redis unreachable \(.+\); hook-(start|stop) event spooled to /m);
      const whileDown = hooks.filter((entry) => !entry.redisWasUp);
      expect(whileDown.length, context).toBeGreaterThanOrEqual(2);
      for (const entry of whileDown.slice(0, 2))
        expect(entry.run.stderr, `${entry.phase} ${entry.childId}\n${context}`).not.toContain('did not answer within the hook budget');
      // The worker lived through every restart.
      expect(worker.child.exitCode, `${context}\n${worker.output()}`).toBeNull();
      expect(outages.count).toBeGreaterThanOrEqual(1);
    } finally {
      stopChaos = true;
      await chaosLoop;
    }
  }, 240_000);

  it('a command waiting for its result when Redis stops answers with JSON, not a stack trace (regression)', async () => {
    const redis = await harness.privateRedis({ appendonly: true });
    const { repo, env, prefix } = harness.repository('chaos-redis-lost', { redisUrl: redis.url });
    // A worker seems to serve the repository (a heartbeat), but none applies the job: the command waits.
    const queueName = queueNameFor(repoIdentity(repo.root).id);
    const client = new Redis(redisOptionsFromUrl(redis.url));
    await client.zadd(heartbeatKey(prefix, queueName), Date.now() + 600_000, 'phantom-worker');
    client.disconnect();
    const pending = runBaton(['task', TASK_ID, 'begin-or-resume', '--timeout', '20000', '--idempotency-key', 'lost-1'], {
      env,
      cwd: repo.root,
    });
    const pendingHook = runBaton(['hook', 'claude-code'], {
      env: { ...env, ...HOOK_WAITS_FOR_RESULT },
      cwd: repo.root,
      input: nativePayload('claude-code', 'SubagentStart', 'executor', 'child-1', repo.root),
    });
    // Redis stops once both have queued their job and wait for its result: made to happen, not
    // hoped for after a fixed pause.
    const waiting = new Redis(redisOptionsFromUrl(redis.url));
    await expect.poll(() => waiting.llen(`${prefix}:${queueName}:wait`), { timeout: 60_000, interval: 50 }).toBe(2);
    waiting.disconnect();
    await redis.stop();
    const stoppedAt = performance.now();
    const answeredAt = pending.then(() => performance.now());
    // The hook's event is queued; losing Redis while waiting for its result is not the agent's problem.
    const hookRun = await pendingHook;
    expect(hookRun.code, hookRun.stderr).toBe(0);
    expect(hookRun.stderr).toContain('lost the connection to Redis while waiting');
    const run = await pending;
    expect(run.code).toBe(1);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    const result = JSON.parse(run.stdout.trim());
    expect(result).toMatchObject({ status: 'failed', changed: false, error: { code: 'BATON_REDIS_UNAVAILABLE' } });
    expect(result.error.message).toContain('lost the connection to Redis');
    expect(result.error.message).toContain('same --idempotency-key');
    // It noticed the loss rather than waiting out its --timeout.
    expect((await answeredAt) - stoppedAt).toBeLessThan(20_000);
  }, 120_000);
});
