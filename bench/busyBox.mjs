// A busy shared box (issue 29): ONE `baton worker --discover` process serving 1,000 registered
// checkouts on a private redis-server, 100 of them active at once, for ~100 events/s of real CLI
// envelopes (`begin-or-resume`, as `baton task` sends it, added with the job options the CLI uses).
// Every second a few active checkouts go quiet and as many idle ones (untouched, or quiet for longer
// than --keep-warm) become active, so the first event of an idle checkout keeps happening: that is
// the event that waits while the worker starts consuming the checkout's queue.
//
// Measured per build, in the same run (builds one after the other, each on a fresh Redis, same
// checkouts): enqueue → applied (the job's finishedOn − its timestamp, both written on this machine)
// p50/p99/max, for first events of an idle checkout and for the later ones; lost (a job never
// finished), applied twice (started more than once) and reordered (finished out of enqueue order
// within a checkout); the worker's Redis connections (CLIENT LIST without the benchmark's own,
// sampled every second: median and max), its RSS (max) and CPU (utime + stime over the window).
//
//   npm run build && node bench/busyBox.mjs [--before DIR] [--checkouts 1000] [--active 100]
//     [--rate 100] [--seconds 60] [--swap 5] [--keep-warm 2000]
//
// --before DIR: a build of main's tree, e.g. mkdir /tmp/box-before && git archive main | tar -x -C
// /tmp/box-before && ln -s "$PWD/node_modules" /tmp/box-before/ && (cd /tmp/box-before && npm run build).
// The machine may be shared and loaded: compare the builds' ratios, not absolute figures.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import {
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
  summarize,
  table,
  tempDir,
  writeResults,
  writeRun,
} from './lib.mjs';

const options = flags();
const CHECKOUTS = Number(options.checkouts ?? 1000);
const ACTIVE = Number(options.active ?? 100);
const RATE = Number(options.rate ?? 100);
const SECONDS = Number(options.seconds ?? 60);
const SWAP = Number(options.swap ?? 5);
const KEEP_WARM_MS = Number(options['keep-warm'] ?? 2000);
const SETTLE_MS = 3_000;
const DRAIN_MS = 30_000;
const GOALS = { p99Ms: 50, rssMb: 200 };

await main(async () => {
  const builds = [];
  if (options.before) builds.push({ label: 'before', ...snapshotBuild(path.resolve(String(options.before))) });
  builds.push({ label: 'after', ...snapshotBuild() });
  const { Queue } = await import('bullmq');
  const { envelopeFor } = await importSource('src/queue/envelope.ts');
  const { randomEventId } = await importSource('src/queue/eventIds.ts');
  const { repoIdentity } = await importSource('src/queue/checkoutId.ts');
  const { JOB_OPTIONS, repositoriesKey, repositoryEntryValue, queueNameFor } = await importSource('src/queue/keys.ts');

  const parent = tempDir('busy-box');
  const repos = [];
  for (let index = 0; index < CHECKOUTS; index += 1) {
    const repo = makeRepo({ label: `c${index}`, parent });
    writeRun(repo.runFile, runningRun());
    const identity = repoIdentity(repo.root);
    repos.push({ ...repo, identity, queueName: queueNameFor(identity.id) });
  }

  const results = [];
  let redisVersion = '';
  for (const build of builds) {
    const result = await measure(build);
    results.push(result);
    process.stderr.write(`busyBox: ${build.label}: ${JSON.stringify(result.latencyMs)} lost ${result.lost}\n`);
  }

  async function measure(build) {
    const redis = await startRedis();
    redisVersion = redis.version;
    const raw = redisClient(redis.socket);
    const ownId = Number(await raw.client('ID'));
    const prefix = `bench-box-${process.pid}`;
    const register = raw.pipeline();
    for (const repo of repos)
      register.hset(repositoriesKey(prefix), repo.identity.id, repositoryEntryValue({ root: repo.identity.root, host: os.hostname() }));
    await register.exec();
    const env = { ...process.env, REDIS_URL: redis.url, BATON_PREFIX: prefix };
    const worker = await startWorker(build.bin, ['--discover', '--allow-root', parent, '--quiet', '--keep-warm', String(KEEP_WARM_MS)], {
      env,
      readyTimeoutMs: 600_000,
    });
    const pid = worker.child.pid;
    await sleep(SETTLE_MS);

    // The enqueuing side: one connection, a Queue per checkout made on first use (as many hooks would).
    const queues = new Map();
    const queueOf = (repo) => {
      let queue = queues.get(repo.queueName);
      if (!queue) {
        queue = new Queue(repo.queueName, { connection: raw, prefix, skipVersionCheck: true });
        queues.set(repo.queueName, queue);
      }
      return queue;
    };
    const state = repos.map((repo) => ({ repo, last: 0, sent: [] }));
    const idle = [...state].reverse();
    const active = idle.splice(-ACTIVE);
    const events = [];
    const connectionSamples = [];
    const rssSamples = [];
    const clientMemorySamples = [];
    const cpuStart = cpuSeconds(pid);
    const started = Date.now();
    let tick = 0;
    const adds = [];
    while (Date.now() - started < SECONDS * 1000) {
      const due = started + tick * (1000 / RATE);
      const wait = due - Date.now();
      if (wait > 0) await sleep(wait);
      const now = Date.now();
      if (tick > 0 && tick % RATE === 0) {
        // Once a second: swap some active checkouts for idle ones quiet for longer than --keep-warm.
        const quiet = active.splice(0, SWAP);
        idle.unshift(...quiet);
        for (let swapped = 0; swapped < SWAP; swapped += 1) {
          const at = idle.findLastIndex((candidate) => now - candidate.last > KEEP_WARM_MS * 2);
          if (at < 0) break;
          active.push(...idle.splice(at, 1));
        }
        const seen = await connections(raw, ownId);
        connectionSamples.push(seen.count);
        clientMemorySamples.push(seen.memoryKb);
        rssSamples.push(rssMb(pid));
      }
      const target = active[tick % active.length];
      const first = target.last === 0 || now - target.last > KEEP_WARM_MS * 2;
      target.last = now;
      const eventId = randomEventId();
      const envelope = envelopeFor({ intent: 'begin-or-resume', taskRef: TASK_ID }, target.repo.identity, 'cli', eventId);
      target.sent.push(eventId);
      events.push({ queueName: target.repo.queueName, eventId, first });
      adds.push(queueOf(target.repo).add(envelope.intent, envelope, { ...JOB_OPTIONS, jobId: eventId }));
      tick += 1;
    }
    await Promise.all(adds);
    const windowSeconds = (Date.now() - started) / 1000;
    const cpuPercent = round(((cpuSeconds(pid) - cpuStart) / windowSeconds) * 100, 1);

    // Every job finished (or DRAIN_MS passed), then read what Redis recorded of each.
    const read = async () => {
      const pipeline = raw.pipeline();
      for (const event of events)
        pipeline.hmget(`${prefix}:${event.queueName}:${event.eventId}`, 'timestamp', 'processedOn', 'finishedOn', 'ats');
      return ((await pipeline.exec()) ?? []).map(([, value]) => value);
    };
    let records = await read();
    const drainUntil = Date.now() + DRAIN_MS;
    while (records.some((record) => !record?.[2]) && Date.now() < drainUntil) {
      await sleep(500);
      records = await read();
    }
    rssSamples.push(rssMb(pid));
    const latency = { first: [], later: [] };
    let lost = 0;
    let twice = 0;
    const finishedOrder = new Map();
    events.forEach((event, index) => {
      const [timestamp, , finishedOn, attemptsStarted] = records[index] ?? [];
      if (!finishedOn) {
        lost += 1;
        return;
      }
      if (Number(attemptsStarted ?? 1) > 1) twice += 1;
      latency[event.first ? 'first' : 'later'].push(Number(finishedOn) - Number(timestamp));
      const order = finishedOrder.get(event.queueName) ?? [];
      order.push(Number(finishedOn));
      finishedOrder.set(event.queueName, order);
    });
    let reordered = 0;
    for (const order of finishedOrder.values()) for (let at = 1; at < order.length; at += 1) if (order[at] < order[at - 1]) reordered += 1;
    await Promise.all([...queues.values()].map((queue) => queue.close()));
    await worker.stop('SIGTERM');
    raw.disconnect();
    const all = [...latency.first, ...latency.later];
    return {
      build: build.label,
      bundle: build.bundleHash,
      events: events.length,
      firstEvents: latency.first.length,
      ratePerSecond: round(events.length / windowSeconds, 1),
      latencyMs: { all: summarize(all), first: summarize(latency.first), later: summarize(latency.later) },
      lost,
      appliedTwice: twice,
      reordered,
      connections: { median: summarize(connectionSamples).p50, max: Math.max(...connectionSamples) },
      // What the worker's connections cost Redis (CLIENT LIST tot-mem, summed), at most.
      redisClientMemoryKbMax: Math.max(...clientMemorySamples),
      rssMbMax: Math.max(...rssSamples),
      cpuPercent,
    };
  }

  // ---------------------------------------------------------------------------------------------
  const machine = machineInfo();
  const before = results.find((result) => result.build === 'before');
  const after = results.find((result) => result.build === 'after');
  const ratio = (pick) => (before && after ? round(pick(after) / pick(before)) : null);
  const ratios = before
    ? {
        p99All: ratio((r) => r.latencyMs.all.p99),
        p99First: ratio((r) => r.latencyMs.first.p99),
        p50First: ratio((r) => r.latencyMs.first.p50),
        p99Later: ratio((r) => r.latencyMs.later.p99),
        connectionsMax: ratio((r) => r.connections.max),
        rssMax: ratio((r) => r.rssMbMax),
        cpu: ratio((r) => r.cpuPercent),
      }
    : null;
  const command = `npm run build && node bench/busyBox.mjs${options.before ? ' --before <build of main>' : ''} --seconds ${SECONDS}`;
  const json = {
    benchmark: 'busyBox',
    goal: `one worker, ${CHECKOUTS} checkouts, ${ACTIVE} active, ${RATE} events/s: enqueue → applied p99 ≤ ${GOALS.p99Ms} ms (first events included), nothing lost, applied twice or reordered, RSS ≤ ${GOALS.rssMb} MB`,
    command,
    settings: { checkouts: CHECKOUTS, active: ACTIVE, rate: RATE, seconds: SECONDS, swapPerSecond: SWAP, keepWarmMs: KEEP_WARM_MS },
    machine: { ...machine, redis: redisVersion },
    results,
    afterOverBefore: ratios,
  };
  const ms = (summary) => `${summary.p50} / ${summary.p99} / ${summary.max}`;
  const rows = results.map((r) => [
    r.build,
    `${r.events} (${r.firstEvents} first)`,
    ms(r.latencyMs.first),
    ms(r.latencyMs.later),
    ms(r.latencyMs.all),
    `${r.lost} / ${r.appliedTwice} / ${r.reordered}`,
    `${r.connections.median} (max ${r.connections.max}; ${r.redisClientMemoryKbMax} KB in Redis)`,
    `${r.rssMbMax} MB`,
    `${r.cpuPercent} %`,
  ]);
  const markdown = `# A busy box

One \`baton worker --discover\` process serving ${CHECKOUTS} checkouts (fresh repositories, one running task each) on a
private redis-server (unix socket); ${ACTIVE} active at once, ${RATE} events/s of real CLI envelopes
(\`begin-or-resume\`) for ${SECONDS} s; every second ${SWAP} active checkouts go quiet and as many idle ones
(quiet for more than 2 × \`--keep-warm ${KEEP_WARM_MS}\`) become active: their next event is a **first
event**, which waits while the worker starts consuming that checkout's queue. Enqueue → applied is
the job's finishedOn − timestamp (p50 / p99 / max, ms). Connections: the worker's own (CLIENT LIST
without the benchmark's), sampled every second, and what they cost Redis (CLIENT LIST tot-mem,
summed; at most). The machine is shared with other work: read the
ratios of the builds, measured in the same run, rather than the absolute figures.

Reproduce: \`${command}\`

${table(['build', 'events', 'first events: p50 / p99 / max', 'later events', 'all', 'lost / applied twice / reordered', 'worker connections: median', 'worker RSS (max)', 'worker CPU'], rows)}

${ratios ? `After over before: p99 of first events ${ratios.p99First}×, p50 of first events ${ratios.p50First}×, p99 of later events ${ratios.p99Later}×, p99 of all ${ratios.p99All}×; connections (max) ${ratios.connectionsMax}×, RSS ${ratios.rssMax}×, CPU ${ratios.cpu}×.` : ''}

${machineMarkdown(machine, { redis: redisVersion, settings: `${CHECKOUTS} checkouts, ${ACTIVE} active, ${RATE}/s, ${SECONDS} s` })}
`;
  process.stdout.write(`\n${rows.map((row) => row.join(' | ')).join('\n')}\n\n`);
  writeResults('busyBox', json, markdown);
  fs.rmSync(parent, { recursive: true, force: true });
});

async function connections(raw, ownId) {
  const list = String(await raw.client('LIST'));
  const others = list.split('\n').filter((line) => line && !line.startsWith(`id=${ownId} `));
  const memory = others.reduce((sum, line) => sum + Number(/ tot-mem=(\d+)/.exec(line)?.[1] ?? 0), 0);
  return { count: others.length, memoryKb: round(memory / 1024, 1) };
}

function cpuSeconds(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssMb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024, 1);
}
