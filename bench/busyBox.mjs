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
// With --workers 1,2 each build is also measured with TWO `baton worker --discover` processes, each
// in a UTS namespace of its own with its own hostname (two simulated machines: `unshare --uts`,
// which needs root or unprivileged user namespaces), both serving the same 1,000 checkouts.
//
// The first events are broken into their parts from timestamps (BATON_TRACE_FILE, src/workers/trace.ts,
// in builds that have it): enqueue → the watch woke the worker (`hold`) → the checkout's BullMQ Worker
// was made (`opened`) → its job was fetched (`fetched`) → applied (`applied`, the run state loaded
// and written) → finishedOn (BullMQ acknowledged it); plus the worker's event-loop delay.
//
//   npm run build && node bench/busyBox.mjs [--before DIR] [--workers 1,2] [--append] [--note TEXT] [--checkouts 1000]
//     [--active 100] [--rate 100] [--seconds 60] [--swap 5] [--keep-warm 2000]
//
// --before DIR: a build of main, e.g. git clone /work/main /tmp/bb-before && cd /tmp/bb-before &&
// cp -al <this checkout>/node_modules . && npm run build.
// The machine may be shared and loaded: compare the builds' ratios, not absolute figures.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import {
  RESULTS_DIR,
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
const WORKER_COUNTS = String(options.workers ?? '1,2')
  .split(',')
  .map(Number);
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
  for (const workers of WORKER_COUNTS)
    for (const build of builds) {
      const result = await measure(build, workers);
      results.push(result);
      process.stderr.write(`busyBox: ${build.label} × ${workers}: ${JSON.stringify(result.latencyMs)} lost ${result.lost}\n`);
    }

  async function measure(build, workerCount) {
    const redis = await startRedis();
    redisVersion = redis.version;
    const raw = redisClient(redis.socket);
    const ownId = Number(await raw.client('ID'));
    const prefix = `bench-box-${process.pid}`;
    const register = raw.pipeline();
    for (const repo of repos)
      register.hset(repositoriesKey(prefix), repo.identity.id, repositoryEntryValue({ root: repo.identity.root, host: os.hostname() }));
    await register.exec();
    const traceDir = tempDir('box-trace');
    const workers = [];
    for (let index = 0; index < workerCount; index += 1) {
      const traceFile = path.join(traceDir, `worker-${index}.jsonl`);
      const env = { ...process.env, REDIS_URL: redis.url, BATON_PREFIX: prefix, BATON_TRACE_FILE: traceFile };
      // Two workers: two simulated machines, each with a hostname of its own.
      const machine =
        workerCount > 1
          ? { command: 'unshare', commandArgs: ['--uts', 'sh', '-c', 'hostname "$0" && exec "$@"', `box-${index}`, process.execPath] }
          : {};
      const started = await startWorker(build.bin, ['--discover', '--allow-root', parent, '--quiet', '--keep-warm', String(KEEP_WARM_MS)], {
        env,
        readyTimeoutMs: 600_000,
        ...machine,
      });
      workers.push({ ...started, pid: started.child.pid, traceFile });
    }
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
    const usedMemorySamples = [];
    const cpuStart = workers.map((worker) => cpuSeconds(worker.pid));
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
        usedMemorySamples.push(await usedMemoryMb(raw));
        rssSamples.push(Math.max(...workers.map((worker) => rssMb(worker.pid))));
      }
      const target = active[tick % active.length];
      const first = target.last === 0 || now - target.last > KEEP_WARM_MS * 2;
      target.last = now;
      const eventId = randomEventId();
      const envelope = envelopeFor({ intent: 'begin-or-resume', taskRef: TASK_ID }, target.repo.identity, 'cli', eventId);
      target.sent.push(eventId);
      events.push({ queueName: target.repo.queueName, checkout: target.repo.identity.id, eventId, first });
      adds.push(queueOf(target.repo).add(envelope.intent, envelope, { ...JOB_OPTIONS, jobId: eventId }));
      tick += 1;
    }
    await Promise.all(adds);
    const windowSeconds = (Date.now() - started) / 1000;
    // Per worker process (the most busy one, with two).
    const cpuPercent = round(
      (Math.max(...workers.map((worker, index) => cpuSeconds(worker.pid) - cpuStart[index])) / windowSeconds) * 100,
      1,
    );

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
    rssSamples.push(Math.max(...workers.map((worker) => rssMb(worker.pid))));
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
    await Promise.all(workers.map((worker) => worker.stop('SIGTERM')));
    raw.disconnect();
    const parts = breakdown(
      events,
      records,
      workers.map((worker) => readTrace(worker.traceFile)),
    );
    const all = [...latency.first, ...latency.later];
    return {
      build: build.label,
      workers: workerCount,
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
      // Redis's own memory (INFO used_memory), at most: the queues' keys and every connection.
      redisUsedMemoryMbMax: Math.max(...usedMemorySamples),
      rssMbMax: Math.max(...rssSamples),
      cpuPercent,
      parts,
    };
  }

  // ---------------------------------------------------------------------------------------------
  const machine = { ...machineInfo(), redis: redisVersion };
  const ratiosFor = (workers) => {
    const before = results.find((result) => result.build === 'before' && result.workers === workers);
    const after = results.find((result) => result.build === 'after' && result.workers === workers);
    if (!before || !after) return null;
    const ratio = (pick) => round(pick(after) / pick(before));
    return {
      workers,
      p99All: ratio((r) => r.latencyMs.all.p99),
      p99First: ratio((r) => r.latencyMs.first.p99),
      p50First: ratio((r) => r.latencyMs.first.p50),
      p99Later: ratio((r) => r.latencyMs.later.p99),
      connectionsMax: ratio((r) => r.connections.max),
      redisClientMemory: ratio((r) => r.redisClientMemoryKbMax),
      redisUsedMemory: ratio((r) => r.redisUsedMemoryMbMax),
      rssMax: ratio((r) => r.rssMbMax),
      cpu: ratio((r) => r.cpuPercent),
    };
  };
  const run = {
    machine,
    ...(options.note ? { note: String(options.note) } : {}),
    results,
    afterOverBefore: WORKER_COUNTS.map(ratiosFor).filter(Boolean),
  };
  // --append: keep the runs recorded before (same settings), so that every run is reported.
  const file = path.join(RESULTS_DIR, 'busyBox.json');
  const earlier = options.append && fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')).runs ?? []) : [];
  const runs = [...earlier, run];
  const command = `npm run build && node bench/busyBox.mjs${options.before ? ' --before <build of main>' : ''} --workers ${WORKER_COUNTS.join(',')} --seconds ${SECONDS}${options.append ? ' --append' : ''}`;
  const json = {
    benchmark: 'busyBox',
    goal: `one worker, ${CHECKOUTS} checkouts, ${ACTIVE} active, ${RATE} events/s: enqueue → applied p99 ≤ ${GOALS.p99Ms} ms (first events included), nothing lost, applied twice or reordered, RSS ≤ ${GOALS.rssMb} MB`,
    command,
    settings: { checkouts: CHECKOUTS, active: ACTIVE, rate: RATE, seconds: SECONDS, swapPerSecond: SWAP, keepWarmMs: KEEP_WARM_MS },
    runs,
  };
  const ms = (summary) => (summary ? `${summary.p50} / ${summary.p99} / ${summary.max}` : '–');
  const resultRows = (r) => [
    r.build,
    String(r.workers),
    `${r.events} (${r.firstEvents} first)`,
    ms(r.latencyMs.first),
    ms(r.latencyMs.later),
    ms(r.latencyMs.all),
    `${r.lost} / ${r.appliedTwice} / ${r.reordered}`,
    `${r.connections.median} (max ${r.connections.max}; ${r.redisClientMemoryKbMax} KB in Redis)`,
    r.redisUsedMemoryMbMax === undefined ? '–' : `${r.redisUsedMemoryMbMax} MB`,
    `${r.rssMbMax} MB`,
    `${r.cpuPercent} %`,
  ];
  const partRows = (r) =>
    r.parts
      ? [
          [
            `${r.build} × ${r.workers}`,
            `${r.parts.cold.count} cold`,
            ms(r.parts.cold.wake),
            ms(r.parts.cold.open),
            ms(r.parts.cold.fetch),
            ms(r.parts.cold.apply),
            ms(r.parts.cold.ack),
            ms(r.parts.cold.total),
          ],
          [
            `${r.build} × ${r.workers}`,
            `${r.parts.warm.count} warm`,
            '–',
            '–',
            ms(r.parts.warm.fetch),
            ms(r.parts.warm.apply),
            ms(r.parts.warm.ack),
            ms(r.parts.warm.total),
          ],
        ]
      : [];
  const ratioLine = (ratios) =>
    `${ratios.workers} worker(s), after over before: p99 of first events ${ratios.p99First}×, p50 of first events ${ratios.p50First}×, p99 of later events ${ratios.p99Later}×, p99 of all ${ratios.p99All}×; connections (max) ${ratios.connectionsMax}×, their memory in Redis ${ratios.redisClientMemory}×, Redis's used memory ${ratios.redisUsedMemory ?? '–'}×, RSS ${ratios.rssMax}×, CPU ${ratios.cpu}×.`;
  const runMarkdown = (recorded, index) => `## Run ${index + 1} (${recorded.machine.date}, load average ${recorded.machine.loadAverage})
${recorded.note ? `\n${recorded.note}\n` : ''}
${table(['build', 'workers', 'events', 'first events: p50 / p99 / max', 'later events', 'all', 'lost / applied twice / reordered', 'connections: median', 'Redis used memory (max)', 'worker RSS (max)', 'worker CPU'], recorded.results.map(resultRows))}

${recorded.afterOverBefore.map(ratioLine).join('\n\n')}

The parts (p50 / p99 / max, ms; builds with the trace): enqueue → the watch woke the worker → a BullMQ Worker was made for the checkout → the job was fetched → applied → acknowledged (finishedOn); the worker's event-loop delay p99 per second: ${recorded.results
    .filter((r) => r.parts)
    .map((r) => `${r.build} × ${r.workers}: ${ms(r.parts.loopDelayP99Ms)}`)
    .join('; ')}. Cold events whose Worker was given a spare connection / opened its own (count: total p50 / p99 / max): ${
    recorded.results
      .filter((r) => r.parts?.coldBySpare)
      .map(
        (r) =>
          `${r.build} × ${r.workers}: ${r.parts.coldBySpare.spare.n}: ${ms(r.parts.coldBySpare.spare)} / ${r.parts.coldBySpare.opened.n}: ${ms(r.parts.coldBySpare.opened)}`,
      )
      .join('; ') || '–'
  }.

${table(['build × workers', 'events', 'wake', 'open a Worker', 'fetch', 'apply', 'acknowledge', 'total'], recorded.results.flatMap(partRows))}

${machineMarkdown(recorded.machine, { settings: `${CHECKOUTS} checkouts, ${ACTIVE} active, ${RATE}/s, ${SECONDS} s` })}
`;
  const markdown = `# A busy box

\`baton worker --discover\` serving ${CHECKOUTS} checkouts (fresh repositories, one running task each) on a
private redis-server (unix socket); ${ACTIVE} active at once, ${RATE} events/s of real CLI envelopes
(\`begin-or-resume\`) for ${SECONDS} s; every second ${SWAP} active checkouts go quiet and as many idle ones
(quiet for more than 2 × \`--keep-warm ${KEEP_WARM_MS}\`) become active: their next event is a **first
event**, which waits while the worker starts consuming that checkout's queue. With 2 workers, two
\`baton worker\` processes, each in a UTS namespace with a hostname of its own (two simulated machines),
serve the same checkouts. Enqueue → applied is the job's finishedOn − timestamp (p50 / p99 / max, ms).
Connections: the workers' (CLIENT LIST without the benchmark's), sampled every second, and what they
cost Redis (CLIENT LIST tot-mem, summed; at most); Redis's used memory (INFO used_memory, at most;
runs that have it). RSS and CPU: the larger worker. The machine is
shared with other work: read the ratios of the builds, measured in the same run, rather than the
absolute figures. Every run is reported.

Reproduce: \`${command}\`

${runs.map(runMarkdown).join('\n')}`;
  process.stdout.write(`\n${results.map((r) => resultRows(r).join(' | ')).join('\n')}\n\n`);
  writeResults('busyBox', json, markdown);
  fs.rmSync(parent, { recursive: true, force: true });
});

async function usedMemoryMb(raw) {
  const info = String(await raw.info('memory'));
  return round(Number(/used_memory:(\d+)/.exec(info)?.[1] ?? Number.NaN) / 2 ** 20, 1);
}

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

function readTrace(file) {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/**
 * An event's latency in its parts, from the workers' traces and the job's own timestamps. An event is
 * *cold* when the worker that took it started consuming its checkout after it was enqueued (a `hold`
 * between the enqueue and the fetch), *warm* otherwise. null for a build without the trace.
 */
function breakdown(events, records, traces) {
  if (traces.every((lines) => lines.length === 0)) return null;
  const fetched = new Map();
  const applied = new Map();
  const holds = new Map();
  const loopP99 = [];
  traces.forEach((lines, worker) => {
    for (const line of lines) {
      if (line.step === 'fetched') fetched.set(line.job, { ...line, worker });
      else if (line.step === 'applied') applied.set(line.job, line);
      else if (line.step === 'loop') loopP99.push(line.p99Ms);
      else if (line.step === 'connection') {
        // BullMQ names a Worker's blocking connection <prefix>:<base64 of the queue>:w:<worker name>.
        const queueName = Buffer.from(
          String(line.name ?? '')
            .split(':')
            .at(-3) ?? '',
          'base64',
        ).toString();
        const list = holds.get(`${worker}:${queueName.replace(/^baton-/, '')}`);
        if (list?.length) list.at(-1).spare = line.spare;
      } else if (line.checkout) {
        const key = `${worker}:${line.checkout}`;
        const list = holds.get(key) ?? [];
        if (line.step === 'hold') list.push({ hold: line.at });
        else if (list.length > 0) list.at(-1)[line.step] = line.at;
        holds.set(key, list);
      }
    }
  });
  const cold = { wake: [], open: [], fetch: [], apply: [], ack: [], total: [] };
  // Cold events whose Worker got a spare connection, and those that opened one of their own.
  const bySpare = { spare: [], opened: [] };
  const warm = { fetch: [], apply: [], ack: [], total: [] };
  events.forEach((event, index) => {
    const [timestamp, , finishedOn] = (records[index] ?? []).map(Number);
    const take = fetched.get(event.eventId);
    const done = applied.get(event.eventId);
    if (!take || !done || !finishedOn) return;
    const hold = (holds.get(`${take.worker}:${event.checkout}`) ?? []).findLast((candidate) => candidate.hold <= take.at);
    const parts = { apply: done.at - take.at, ack: finishedOn - done.at, total: finishedOn - timestamp };
    if (hold && hold.hold >= timestamp - 1 && hold.opened !== undefined) {
      Object.assign(parts, { wake: hold.hold - timestamp, open: hold.opened - hold.hold, fetch: take.at - hold.opened });
      for (const [name, value] of Object.entries(parts)) cold[name].push(value);
      if (hold.spare !== undefined) bySpare[hold.spare ? 'spare' : 'opened'].push(parts.total);
    } else {
      parts.fetch = take.at - timestamp;
      for (const name of Object.keys(warm)) warm[name].push(parts[name]);
    }
  });
  const summarized = (group) => Object.fromEntries(Object.entries(group).map(([name, values]) => [name, summarize(values)]));
  return {
    cold: { count: cold.total.length, ...summarized(cold) },
    warm: { count: warm.total.length, ...summarized(warm) },
    coldBySpare: summarized(bySpare),
    loopDelayP99Ms: summarize(loopP99),
  };
}
