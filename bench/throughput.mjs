// Benchmark 3: aggregate throughput over 50 repositories served by one `baton worker` process,
// and the scaling with a second process serving the same 50 repositories (global concurrency 1
// per repository still holds: at most one job of a repository at a time across both).
//
// Each repository's queue is filled first (pause / begin-or-resume alternating on its task, the
// envelopes `baton task` would enqueue), then the worker process(es) start and drain the backlog.
// Throughput = events / (last finishedOn − first processedOn), from BullMQ's job timestamps; the
// wall time from spawning the worker(s) to the last completion is reported too. Afterwards every
// repository's run file must show its last event applied, and every job must have completed.
// Goal (docs/architecture.md): ≥ 1,000 events/s aggregate over 50 repositories in one worker process.
//
// With --before DIR (an earlier build: a DIR holding bin/ and dist/; --before-label names it in the
// results), every scenario also runs with that build's worker, the two alternating, each --rounds
// times (default 3), and the results give this build's median events/s over the earlier one's.
//
//   npm run build && node bench/throughput.mjs [--repos 50] [--events 100] [--processes 1,2] [--runtimes node,bun] [--profile DIR]
//                                              [--before DIR [--before-label TEXT] [--rounds 3]]
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import {
  BUN,
  TASK_ID,
  flags,
  importSource,
  machineInfo,
  machineMarkdown,
  main,
  makeRepo,
  redisClient,
  round,
  runningRun,
  sleep,
  snapshotBuild,
  startRedis,
  startWorker,
  table,
  tempDir,
  writeResults,
  writeRun,
} from './lib.mjs';

const options = flags();
const REPOS = Number(options.repos ?? 50);
const EVENTS_PER_REPO = Number(options.events ?? 100);
const PROCESS_COUNTS = String(options.processes ?? '1,2')
  .split(',')
  .map(Number);
const RUNTIMES = String(options.runtimes ?? 'node')
  .split(',')
  .filter(Boolean);
// Where the 50 repositories live: the default temp dir (a disk), and tmpfs (/dev/shm) when there is
// one, to separate baton's own cost from the file system's.
const FILESYSTEMS = String(options.fs ?? (fs.existsSync('/dev/shm') ? 'disk,tmpfs' : 'disk'))
  .split(',')
  .filter(Boolean);
const GOAL = 1_000;
// --profile DIR: run Node workers with --cpu-prof, profiles written to DIR (for finding bottlenecks).
const PROFILE = options.profile ? ['--cpu-prof', `--cpu-prof-dir=${options.profile}`] : [];

await main(async () => {
  const build = snapshotBuild();
  const earlier = options.before ? snapshotBuild(path.resolve(options.before)) : null;
  const ROUNDS = earlier ? Number(options.rounds ?? 3) : 1;
  // Which worker runs: this build, and with --before the earlier one, in alternating order per round.
  const buildsOf = (roundIndex) => {
    const both = [['after', build], ...(earlier ? [['before', earlier]] : [])];
    return roundIndex % 2 === 0 ? both : both.reverse();
  };
  const redis = await startRedis();
  const raw = redisClient(redis.socket);
  const { envelopeFor } = await importSource('src/queue/envelope.ts');
  const { randomEventId } = await importSource('src/queue/eventIds.ts');
  const { repoIdentity } = await importSource('src/queue/checkoutId.ts');
  const { queueNameFor } = await importSource('src/queue/keys.ts');
  const { JOB_OPTIONS } = await importSource('src/queue/keys.ts');
  const { Queue } = await import('bullmq');

  // The file system's own ceiling, measured on the same file system in the same run: events/s if
  // each event did nothing but the one write the architecture requires (an atomic replace of the
  // task's orchestration.json: temp file + rename), round-robin over 50 task directories.
  const ceilings = {};
  for (const filesystem of FILESYSTEMS) {
    const parent = tempDir(`tp-fs-${filesystem}`, filesystem === 'tmpfs' ? '/dev/shm' : undefined);
    const files = Array.from({ length: REPOS }, (_, index) => {
      const repo = makeRepo({ label: `f${index}`, parent });
      writeRun(repo.runFile, runningRun());
      return repo.runFile;
    });
    const content = fs.readFileSync(files[0], 'utf8');
    const writes = Math.max(2_000, REPOS * EVENTS_PER_REPO);
    const started = process.hrtime.bigint();
    for (let index = 0; index < writes; index += 1) {
      const file = files[index % files.length];
      const temp = `${file}.${index}.tmp`;
      fs.writeFileSync(temp, content, { flag: 'wx' });
      fs.renameSync(temp, file);
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    ceilings[filesystem] = { atomicWritesPerSecond: round(writes / seconds, 0), writes };
    process.stderr.write(`throughput bench: ${filesystem}: ${ceilings[filesystem].atomicWritesPerSecond} atomic run-file writes/s\n`);
  }

  const scenarios = [];
  for (let roundIndex = 0; roundIndex < ROUNDS; roundIndex += 1)
    for (const filesystem of FILESYSTEMS)
      for (const runtime of RUNTIMES) {
        for (const processes of PROCESS_COUNTS)
          for (const [buildLabel, worker] of buildsOf(roundIndex)) {
            const parent = tempDir(`tp-${runtime}-${processes}`, filesystem === 'tmpfs' ? '/dev/shm' : undefined);
            const repos = Array.from({ length: REPOS }, (_, index) => {
              const repo = makeRepo({ label: `r${index}`, parent });
              writeRun(repo.runFile, runningRun());
              return { ...repo, identity: repoIdentity(repo.root) };
            });
            const prefix = `bench-tp-${filesystem}-${runtime}-${processes}-${buildLabel}-${roundIndex}-${process.pid}`;
            // Fill every queue first (no worker yet), with the envelopes the CLI would add.
            for (const repo of repos) {
              const queue = new Queue(queueNameFor(repo.identity.id), {
                connection: { path: redis.socket },
                prefix,
                skipVersionCheck: true,
              });
              const jobs = [];
              for (let index = 0; index < EVENTS_PER_REPO; index += 1) {
                const event =
                  index % 2 === 0
                    ? { intent: 'pause', taskRef: TASK_ID, code: `BENCH_${index}`, message: `event ${index}`, recoverable: true }
                    : { intent: 'begin-or-resume', taskRef: TASK_ID };
                const eventId = randomEventId();
                jobs.push({
                  name: event.intent,
                  data: envelopeFor(event, repo.identity, 'cli', eventId),
                  opts: { ...JOB_OPTIONS, jobId: eventId },
                });
              }
              await queue.addBulk(jobs);
              repo.queueName = queue.name;
              await queue.close();
            }
            const total = REPOS * EVENTS_PER_REPO;
            const args = ['--quiet', ...repos.flatMap((repo) => ['--repo', repo.root])];
            const env = { ...process.env, REDIS_URL: redis.url, BATON_PREFIX: prefix };
            const spawnedAt = Date.now();
            const workers = await Promise.all(
              Array.from({ length: processes }, () =>
                startWorker(worker.bin, args, { env, ...(runtime === 'bun' ? { command: BUN } : { commandArgs: PROFILE }) }),
              ),
            );
            const completedCount = async () => {
              const pipeline = raw.pipeline();
              for (const repo of repos) pipeline.zcard(`${prefix}:${repo.queueName}:completed`);
              return (await pipeline.exec()).reduce((sum, [, count]) => sum + Number(count), 0);
            };
            const deadline = Date.now() + 600_000;
            let done = 0;
            while ((done = await completedCount()) < total) {
              if (Date.now() > deadline) throw new Error(`only ${done}/${total} events completed`);
              await sleep(50);
            }
            const drainedAt = Date.now();
            await Promise.all(workers.map((worker) => worker.stop('SIGTERM')));
            // Job timestamps: the processing window, and which process applied each job.
            let first = Infinity;
            let last = 0;
            const byWorker = new Map();
            let failed = 0;
            for (const repo of repos) {
              const ids = await raw.zrange(`${prefix}:${repo.queueName}:completed`, 0, -1);
              failed += await raw.zcard(`${prefix}:${repo.queueName}:failed`);
              const pipeline = raw.pipeline();
              for (const id of ids) pipeline.hmget(`${prefix}:${repo.queueName}:${id}`, 'processedOn', 'finishedOn', 'pb');
              for (const [, [processedOn, finishedOn, by]] of await pipeline.exec()) {
                first = Math.min(first, Number(processedOn));
                last = Math.max(last, Number(finishedOn));
                byWorker.set(by, (byWorker.get(by) ?? 0) + 1);
              }
              // The last event of each repository was a begin-or-resume after a pause: running.
              const run = JSON.parse(fs.readFileSync(repo.runFile, 'utf8'));
              const expected = EVENTS_PER_REPO % 2 === 0 ? 'running' : 'paused';
              if (run.status !== expected) throw new Error(`${repo.root}: run is ${run.status}, expected ${expected}`);
            }
            if (failed > 0) throw new Error(`${failed} jobs failed`);
            const windowMs = last - first;
            scenarios.push({
              build: buildLabel,
              round: roundIndex,
              filesystem,
              runtime,
              processes,
              repos: REPOS,
              events: total,
              windowMs,
              eventsPerSecond: round((total / windowMs) * 1000, 0),
              wallFromSpawnMs: drainedAt - spawnedAt,
              eventsPerSecondIncludingStartup: round((total / (drainedAt - spawnedAt)) * 1000, 0),
              jobsPerProcess: [...byWorker.values()],
            });
            process.stderr.write(
              `throughput bench: ${earlier ? `${buildLabel}, round ${roundIndex + 1}: ` : ''}${filesystem} ${runtime} × ${processes} process(es): ${scenarios.at(-1).eventsPerSecond} events/s\n`,
            );
          }
      }

  const machine = machineInfo();
  const command = `npm run build && node bench/throughput.mjs${REPOS !== 50 ? ` --repos ${REPOS}` : ''}${EVENTS_PER_REPO !== 100 ? ` --events ${EVENTS_PER_REPO}` : ''}${RUNTIMES.join(',') !== 'node' ? ` --runtimes ${RUNTIMES.join(',')}` : ''}${PROCESS_COUNTS.join(',') !== '1,2' ? ` --processes ${PROCESS_COUNTS.join(',')}` : ''}${earlier ? ` --before DIR --rounds ${ROUNDS}` : ''}`;
  // --before: per scenario, the median events/s of each build and this build's over the earlier one's.
  const median = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  };
  const sameScenario = (a, b) => a.filesystem === b.filesystem && a.runtime === b.runtime && a.processes === b.processes;
  const afterToBefore = earlier
    ? scenarios
        .filter((scenario) => scenario.build === 'after' && scenario.round === 0)
        .map((scenario) => {
          const of = (label) =>
            median(
              scenarios.filter((other) => other.build === label && sameScenario(other, scenario)).map((other) => other.eventsPerSecond),
            );
          const [after, before] = [of('after'), of('before')];
          return {
            filesystem: scenario.filesystem,
            runtime: scenario.runtime,
            processes: scenario.processes,
            after,
            before,
            ratio: round(after / before),
          };
        })
    : null;
  const ofThisBuild = scenarios.filter((scenario) => scenario.build === 'after');
  const single =
    ofThisBuild.find((scenario) => scenario.processes === 1 && scenario.runtime === 'node' && scenario.filesystem === FILESYSTEMS[0]) ??
    ofThisBuild[0];
  const json = {
    benchmark: 'throughput',
    goal: `≥ ${GOAL} events/s aggregate over ${REPOS} repositories in one worker process`,
    command,
    machine: { ...machine, redis: redis.version, bundle: build.bundleHash },
    fileSystemCeiling: ceilings,
    scenarios,
    goalMet: single.eventsPerSecond >= GOAL,
    ...(earlier
      ? { before: { build: options['before-label'] ?? 'an earlier build', bundle: earlier.bundleHash, rounds: ROUNDS }, afterToBefore }
      : {}),
  };
  const rows = scenarios.map((scenario) => {
    const base = scenarios.find(
      (other) =>
        other.filesystem === scenario.filesystem &&
        other.runtime === scenario.runtime &&
        other.processes === 1 &&
        other.build === scenario.build &&
        other.round === scenario.round,
    );
    return [
      ...(earlier ? [scenario.build === 'after' ? 'this build' : 'before', scenario.round + 1] : []),
      scenario.filesystem,
      scenario.runtime,
      scenario.processes,
      scenario.events,
      scenario.eventsPerSecond,
      base ? `${round(scenario.eventsPerSecond / base.eventsPerSecond)}×` : '',
      scenario.eventsPerSecondIncludingStartup,
      scenario.jobsPerProcess.join(' / '),
      `${round(scenario.eventsPerSecond / ceilings[scenario.filesystem].atomicWritesPerSecond)}×`,
      scenario.processes === 1 ? (scenario.eventsPerSecond >= GOAL ? '✅' : '❌') : '',
    ];
  });
  const markdown = `# Aggregate throughput over ${REPOS} repositories

Goal: ≥ ${GOAL} events/s aggregate over ${REPOS} repositories in one worker process. Each repository's
queue is filled first with ${EVENTS_PER_REPO} events (alternately \`pause\` and \`begin-or-resume\` of its
task; every event rewrites its \`orchestration.json\` through the worker's journal), then the
worker process(es) start and drain the backlog. Events/s = events ÷ (last \`finishedOn\` − first
\`processedOn\`) from BullMQ's job timestamps; "incl. start-up" divides by the wall time from
spawning the worker(s) to the last completion. Every job completed and every run file shows its last
event applied. With 2 processes both serve all ${REPOS} repositories; the global concurrency of 1 per
repository still holds. The machine has ${machine.cores} cores shared by Redis, the worker(s) and this script.

Reproduce: \`${command}\`

${
  afterToBefore
    ? `## This build against an earlier one

Every scenario ran with this build's worker and with the worker of \`--before DIR\`, ${options['before-label'] ?? 'an earlier build'}
(bundle ${earlier.bundleHash}), alternating, ${ROUNDS} times each; the ratio is this build's median events/s over the
earlier build's (above 1 is faster now).

${table(
  ['file system', 'worker runtime', 'processes', 'this build (median events/s)', 'before (median events/s)', 'after / before'],
  afterToBefore.map((entry) => [entry.filesystem, entry.runtime, entry.processes, entry.after, entry.before, `${entry.ratio}×`]),
)}

## Every run

`
    : ''
}${table([...(earlier ? ['build', 'round'] : []), 'file system', 'worker runtime', 'processes', 'events', 'events/s', 'scaling', 'events/s incl. start-up', 'jobs per process', 'vs. FS ceiling', 'goal'], rows)}

File-system ceiling, same run: ${Object.entries(ceilings)
    .map(([name, ceiling]) => `${name} ${ceiling.atomicWritesPerSecond} atomic run-file writes/s`)
    .join('; ')}
(one temp-file write + rename over the task's orchestration.json per event, nothing else: the one
write the architecture requires). Per event the worker does that, plus the journal's pending record
(another temp file + rename, in .git/baton/journal) and its \`done\` mark (an in-place 9-byte write),
plus reading the run file and resolving the task. "disk" is the default temp dir (${FILESYSTEMS.includes('tmpfs') ? 'compared with tmpfs, /dev/shm' : 'no tmpfs here'}).

Scaling with a second process depends on what limits the first: on this machine (2 cores shared
with Redis and the benchmark) a second process overlaps the disk waits of the first when the disk
is the limit, and only competes for the same CPU when nothing else is (tmpfs).

${machineMarkdown(machine, { redis: redis.version, bundle: build.bundleHash })}
`;
  writeResults('throughput', json, markdown);
});
