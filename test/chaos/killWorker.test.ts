import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LifecycleEvent } from '../../src/core/events.ts';
import type { OrchestrationResult, OrchestrationRun } from '../../src/core/types.ts';
import { envelopeFor } from '../../src/queue/envelope.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { JOB_OPTIONS } from '../../src/queue/keys.ts';
import { spooledFiles } from '../../src/queue/spool.ts';
import { uniquePrefix } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { batonEnv, startWorkerProcess } from '../support/processes.ts';
import type { WorkerProcess } from '../support/processes.ts';
import {
  ROUNDS,
  leftoverTempFiles,
  lifecycleStream,
  projectResult,
  projectRun,
  queueFor,
  referenceOutcome,
  sleep,
  watchRunFile,
} from './support.ts';

// docs/architecture.md "Reliability": a worker killed at any point (kill -9) loses no event and applies
// none twice; run files are always valid JSON. Each round enqueues a stream of lifecycle events
// (with real fingerprints on SubagentStop), then kills the worker with SIGKILL at random moments
// and/or at the failpoints (after-journal, after-commit, after-done), starting a new worker each
// time. Afterwards: every job completed, each with the result the fault-free reference run gave
// for that event (so none was lost, reordered or applied twice), the final run equals the
// reference, every read of the run file during the stream was a valid run, and no temp file of an
// interrupted atomic write is left in the task directory (it would show up in fingerprints: see
// interruptedWrite.test.ts, the regression test for what these rounds found).
//
// CI runs 12 rounds; `npm run chaos` runs CHAOS_ROUNDS (default 60 there). A failing round prints
// its seed; CHAOS_SEED=<seed> replays its random choices.

const redisUrl = inject('redisUrl');
const ROUND_COUNT = ROUNDS || 12;
const CYCLES = 6;
const FAILPOINTS = ['', 'after-journal:*', 'after-commit:*', 'after-done:*', 'after-commit:hook-stop', 'after-journal:advance'];

let events: LifecycleEvent[];
let reference: Awaited<ReturnType<typeof referenceOutcome>>;
beforeAll(async () => {
  events = lifecycleStream(CYCLES);
  reference = await referenceOutcome(events);
}, 60_000);

let repo: GitRepo | null = null;
const workers: WorkerProcess[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop('SIGKILL')));
  repo?.cleanup();
  repo = null;
});

/** Small deterministic PRNG (mulberry32), so a failing round can be replayed from its seed. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('kill -9 of a worker during a stream of lifecycle events', () => {
  const seeds = Array.from({ length: ROUND_COUNT }, (_, index) => (Number(process.env.CHAOS_SEED) || 1000) + index);

  it.each(seeds)(
    'round with seed %i: nothing lost, nothing applied twice, always valid JSON, same final state',
    async (seed) => {
      const rand = random(seed);
      repo = gitRepoWithTask();
      const root = repo.root;
      const prefix = uniquePrefix(`chaos-kill-${seed}`);
      const env = batonEnv({ redisUrl, prefix });
      const log: string[] = [];
      const startWorker = async (failpoint: string) => {
        const worker = await startWorkerProcess(['--repo', root, '--lock-duration', '1000', '--stalled-interval', '250'], {
          env: { ...env, ...(failpoint ? { BATON_FAILPOINT: failpoint } : {}) },
          // Started while jobs wait, a worker may reach its failpoint before it logs ready (seen under
          // load): then it is simply dead, and the loop below starts the next one.
          mayExitBeforeReady: failpoint !== '',
        });
        workers.push(worker);
        log.push(`started worker ${worker.child.pid}${failpoint ? ` with ${failpoint}` : ''}`);
        return worker;
      };
      const alive = (worker: WorkerProcess) => worker.child.exitCode === null && worker.child.signalCode === null;

      const identity = repoIdentity(root);
      const queue = queueFor(redisUrl, prefix, root);
      const ids = events.map((_, index) => `c-chaos-${seed}-${String(index).padStart(3, '0')}`);
      const watcher = watchRunFile(path.join(repo.taskDir, 'orchestration.json'));
      try {
        // The first worker gets a failpoint in most rounds; the stream is enqueued at once.
        let worker = await startWorker(FAILPOINTS[seed % FAILPOINTS.length]!);
        for (const [index, event] of events.entries()) {
          await queue.add(event.intent, envelopeFor(event, identity, 'cli', ids[index]!), { ...JOB_OPTIONS, jobId: ids[index]! });
        }
        let kills = 0;
        const plannedKills = 1 + Math.floor(rand() * 3);
        const deadline = Date.now() + 90_000;
        for (;;) {
          const counts = await queue.getJobCounts('completed', 'failed');
          if ((counts.completed ?? 0) + (counts.failed ?? 0) >= events.length) break;
          if (Date.now() > deadline)
            throw new Error(
              `stream did not finish: ${JSON.stringify(counts)}\n${log.join('\n')}\n${workers.map((w) => w.output()).join('\n---\n')}`,
            );
          if (!alive(worker)) {
            log.push(`worker ${worker.child.pid} died (${worker.child.signalCode ?? worker.child.exitCode})`);
            worker = await startWorker(rand() < 0.3 ? FAILPOINTS[1 + Math.floor(rand() * (FAILPOINTS.length - 1))]! : '');
            continue;
          }
          if (kills < plannedKills) {
            // Kill while the worker is busy: once it has applied something since it started, at a
            // random moment within the next few events.
            const before = (await queue.getJobCounts('completed')).completed ?? 0;
            while (alive(worker) && ((await queue.getJobCounts('completed')).completed ?? 0) === before && Date.now() < deadline)
              await sleep(5);
            await sleep(Math.floor(rand() * 60));
            if (alive(worker)) {
              worker.child.kill('SIGKILL');
              await new Promise<void>((resolve) =>
                worker.child.exitCode !== null || worker.child.signalCode !== null ? resolve() : worker.child.once('exit', () => resolve()),
              );
              kills += 1;
              const done = await queue.getJobCounts('completed');
              log.push(`SIGKILL ${worker.child.pid} with ${done.completed ?? 0}/${events.length} events applied`);
            }
            continue;
          }
          await sleep(50);
        }
        const seen = await watcher.stop();
        const context = `seed ${seed}\n${log.join('\n')}`;
        if (process.env.CHAOS_VERBOSE) console.log(context);

        // Every event was applied: all jobs completed, none failed, in enqueue order.
        const jobs = await Promise.all(ids.map((id) => queue.getJob(id)));
        const failed = jobs.filter((job) => job?.failedReason);
        expect(
          failed.map((job) => `${job!.id}: ${job!.failedReason}`),
          context,
        ).toEqual([]);
        expect(
          jobs.every((job) => job?.finishedOn),
          context,
        ).toBe(true);
        for (let index = 1; index < jobs.length; index += 1) {
          expect(jobs[index]!.processedOn!, `${context}\n${ids[index]} started before ${ids[index - 1]} finished`).toBeGreaterThanOrEqual(
            jobs[index - 1]!.finishedOn!,
          );
        }
        // Each with the result of the fault-free run: nothing lost, reordered or applied twice.
        const results = jobs.map((job) => projectResult(job!.returnvalue as OrchestrationResult));
        for (const [index, expected] of reference.results.entries()) {
          expect(results[index], `${context}\nevent ${index} (${events[index]!.intent})`).toEqual(expected);
        }
        const run = JSON.parse(fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8')) as OrchestrationRun;
        expect(projectRun(run), context).toEqual(reference.run);
        // The run file was valid at every read while the stream ran.
        expect(seen.invalid, context).toEqual([]);
        expect(seen.reads).toBeGreaterThan(0);
        // Read on the kernel's word that it changed, not only by the clock.
        expect(seen.changes).toBeGreaterThan(0);
        // Nothing half-done is left behind.
        expect(leftoverTempFiles(repo.taskDir), context).toEqual([]);
        expect(spooledFiles(root)).toEqual([]);
        const journal = path.join(root, '.git', 'baton', 'journal');
        const records = fs.readdirSync(journal).filter((name) => name.endsWith('.json'));
        expect(records.sort(), context).toEqual(ids.map((id) => `${id}.json`).sort());
        for (const name of records)
          expect(JSON.parse(fs.readFileSync(path.join(journal, name), 'utf8')).state, `${context}\n${name}`).toBe('done');
        // A kill while a journal record was being written may leave its temp file in .git/baton
        // (not state, not fingerprinted; prune removes it after a minute): only such files.
        for (const name of leftoverTempFiles(journal)) expect(name, context).toMatch(/^c-chaos-\d+-\d{3}\.json\.[0-9a-f-]{36}\.tmp$/);
      } finally {
        await watcher.stop();
        await queue.close();
      }
    },
    120_000,
  );
});
