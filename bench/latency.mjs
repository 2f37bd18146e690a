// Benchmark 2: enqueue → applied latency for intents that capture no fingerprint (pause and
// begin-or-resume, alternating: every event rewrites the run file through the worker's journal).
// The caller is in process and uses the same RepositoryQueueClient as `baton task` (enqueue, then
// wait for the result on the queue's event stream); the worker is a real `baton worker` process.
// One event at a time (latency, not throughput), ≥ 2,000 events per worker runtime.
// Goal (docs/architecture.md): p50 ≤ 5 ms, p99 ≤ 25 ms on loopback.
//
//   npm run build && node bench/latency.mjs [--events 2000] [--warmup 100] [--runtimes node,bun]
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
  runningRun,
  snapshotBuild,
  startRedis,
  startWorker,
  summarize,
  table,
  writeResults,
  writeRun,
} from './lib.mjs';

const options = flags();
const EVENTS = Number(options.events ?? 2000);
const WARMUP = Number(options.warmup ?? 100);
const RUNTIMES = String(options.runtimes ?? 'node,bun')
  .split(',')
  .filter(Boolean);
const GOAL = { p50: 5, p99: 25 };

await main(async () => {
  const build = snapshotBuild();
  const redis = await startRedis();
  const { RepositoryQueueClient } = await importSource('src/queue/client.ts');
  const { envelopeFor } = await importSource('src/queue/envelope.ts');
  const { randomEventId } = await importSource('src/queue/eventIds.ts');
  const { repoIdentity } = await importSource('src/queue/checkoutId.ts');
  const { jobKey } = await importSource('src/queue/keys.ts');
  const raw = redisClient(redis.socket);

  const phases = [];
  for (const runtime of RUNTIMES) {
    const repo = makeRepo({ label: `latency-${runtime}` });
    writeRun(repo.runFile, runningRun());
    const prefix = `bench-lat-${runtime}-${process.pid}`;
    const env = { ...process.env, REDIS_URL: redis.url, BATON_PREFIX: prefix };
    const worker = await startWorker(build.bin, ['--repo', repo.root, '--quiet'], {
      env,
      ...(runtime === 'bun' ? { command: BUN } : {}),
    });
    const identity = repoIdentity(repo.root);
    const config = { redisUrl: redis.url, prefix };
    const client = await RepositoryQueueClient.connect(config, identity, 2_000);
    const samples = [];
    const ids = [];
    try {
      for (let index = 0; index < WARMUP + EVENTS; index += 1) {
        const event =
          index % 2 === 0
            ? { intent: 'pause', taskRef: TASK_ID, code: `BENCH_${index}`, message: `event ${index}`, recoverable: true }
            : { intent: 'begin-or-resume', taskRef: TASK_ID };
        const eventId = randomEventId();
        const started = process.hrtime.bigint();
        await client.enqueue(envelopeFor(event, identity, 'cli', eventId));
        const outcome = await client.waitFor(eventId, 10_000);
        const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
        const expected = index % 2 === 0 ? 'paused' : 'running';
        if (outcome.kind !== 'completed' || outcome.value.status !== expected || outcome.value.changed !== true) {
          throw new Error(`event ${index}: expected ${expected}, got ${JSON.stringify(outcome)}`);
        }
        if (index >= WARMUP) {
          samples.push(elapsed);
          ids.push(eventId);
        }
      }
    } finally {
      await client.close();
    }
    // Where the time goes, from BullMQ's own (millisecond) timestamps: waiting in the queue, and
    // the worker's processing (validate, journal, read + write the run file, acknowledge).
    const pipeline = raw.pipeline();
    const queueName = `baton-${identity.id}`;
    for (const id of ids) pipeline.hmget(jobKey(prefix, queueName, id), 'timestamp', 'processedOn', 'finishedOn');
    const stamps = (await pipeline.exec()).map(([, value]) => value.map(Number));
    await worker.stop('SIGTERM');
    phases.push({
      runtime,
      events: samples.length,
      latencyMs: summarize(samples),
      queueWaitMs: summarize(stamps.map(([timestamp, processed]) => processed - timestamp)),
      processingMs: summarize(stamps.map(([, processed, finished]) => finished - processed)),
    });
    process.stderr.write(`latency bench: ${runtime} worker done\n`);
  }

  const machine = machineInfo();
  const command = `npm run build && node bench/latency.mjs${EVENTS !== 2000 ? ` --events ${EVENTS}` : ''}`;
  const met = (phase) => phase.latencyMs.p50 <= GOAL.p50 && phase.latencyMs.p99 <= GOAL.p99;
  const json = {
    benchmark: 'latency',
    goal: `enqueue → applied p50 ≤ ${GOAL.p50} ms, p99 ≤ ${GOAL.p99} ms (intents without a fingerprint)`,
    command,
    machine: { ...machine, redis: redis.version, bundle: build.bundleHash },
    phases,
    goalMet: Object.fromEntries(phases.map((phase) => [phase.runtime, met(phase)])),
  };
  const rows = phases.map((phase) => [
    phase.runtime,
    phase.events,
    phase.latencyMs.p50,
    phase.latencyMs.p90,
    phase.latencyMs.p99,
    phase.latencyMs.max,
    met(phase) ? '✅' : '❌',
  ]);
  const breakdown = phases.map((phase) => [
    phase.runtime,
    phase.queueWaitMs.p50,
    phase.queueWaitMs.p99,
    phase.processingMs.p50,
    phase.processingMs.p99,
  ]);
  const markdown = `# Enqueue → applied latency (no fingerprint)

Goal: p50 ≤ ${GOAL.p50} ms, p99 ≤ ${GOAL.p99} ms. ${EVENTS} events per worker runtime after ${WARMUP} warm-up
events, one at a time: alternately \`pause\` and \`begin-or-resume\` of one task (each rewrites
\`orchestration.json\` through the worker's journal). The caller is in process and uses
\`RepositoryQueueClient\` exactly as \`baton task\` does (enqueue, then wait for the result on the
queue's event stream); the worker is a real \`baton worker\` process; Redis is a private
redis-server on a unix socket.

Reproduce: \`${command}\`

## Caller-measured latency (ms)

${table(['worker runtime', 'events', 'p50', 'p90', 'p99', 'max', 'goal'], rows)}

## Breakdown from BullMQ's job timestamps (ms, millisecond resolution)

${table(['worker runtime', 'queue wait p50', 'queue wait p99', 'processing p50', 'processing p99'], breakdown)}

${machineMarkdown(machine, { redis: redis.version, bundle: build.bundleHash })}
`;
  writeResults('latency', json, markdown);
});
