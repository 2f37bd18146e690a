// What one worker costs when it serves many checkouts (docs/architecture.md "Serving on demand"):
// one `baton worker --discover` process serving N registered checkouts (N = 1, 64, 256, 1024) on a
// private redis-server, measured per build (e.g. the build before serving on demand, and this one)
// in the same run, one N at a time, builds interleaved:
//
// - Redis connections (CLIENT LIST, the benchmark's own connection left out) with every checkout
//   idle, and again right after `--busy` checkouts (default 5) had an event each;
// - idle Redis commands/s (INFO stats total_commands_processed over an idle window, the
//   benchmark's own INFO left out), the worker's CPU (utime + stime from /proc) and RSS (VmRSS);
// - the round trip of a `baton task <ref> begin-or-resume` command (a process, as people and agents
//   run it: enqueue, the worker applies, the result comes back) on a checkout that has been idle
//   (untouched since the worker started, or released since its last event) and on a busy one (an
//   event within the last second), interleaved; and the same round trip in process
//   (RepositoryQueueClient, as bench/latency.mjs), where the first-event cost is not hidden by the
//   command's start-up.
//
//   npm run build && node bench/manyCheckouts.mjs [--baseline DIR] [--sizes 1,64,256,1024]
//     [--idle-seconds 10] [--samples 25] [--busy 5] [--keep-warm 1000]
//
// --baseline DIR measures DIR's bin/ + dist/ too (labelled "before"), e.g. a build of the commit
// before serving on demand:  git worktree add /tmp/before <commit> && ln -s "$PWD/node_modules"
// /tmp/before/ && (cd /tmp/before && npm run build). A build whose worker knows `--keep-warm` is
// started with `--keep-warm <ms>` (short, so that a checkout of N = 1 goes idle again between
// samples); an older build holds every checkout all the time.
import { spawnSync } from 'node:child_process';
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
  timedRun,
  writeResults,
  writeRun,
} from './lib.mjs';

const options = flags();
const SIZES = String(options.sizes ?? '1,64,256,1024')
  .split(',')
  .map(Number);
const IDLE_SECONDS = Number(options['idle-seconds'] ?? 10);
const SAMPLES = Number(options.samples ?? 25);
const BUSY = Number(options.busy ?? 5);
const KEEP_WARM_MS = Number(options['keep-warm'] ?? 1000);
const SETTLE_MS = 3_000;
const GOALS = { flatFactor: 2, rssMb: 150, idleOverBusy: 1.3 };

await main(async () => {
  const builds = [];
  if (options.baseline) builds.push({ label: 'before', ...snapshotBuild(path.resolve(String(options.baseline))) });
  builds.push({ label: 'after', ...snapshotBuild() });
  for (const build of builds) build.keepWarm = workerHelp(build.bin).includes('--keep-warm');
  const { envelopeFor } = await importSource('src/queue/envelope.ts');
  const { randomEventId } = await importSource('src/queue/eventIds.ts');
  const { repoIdentity } = await importSource('src/queue/checkoutId.ts');
  const { repositoriesKey, repositoryEntryValue } = await importSource('src/queue/keys.ts');
  const { RepositoryQueueClient } = await importSource('src/queue/client.ts');

  const results = [];
  let redisVersion = '';
  for (const size of SIZES) {
    for (const build of builds) {
      const result = await measure(build, size);
      results.push(result);
      process.stderr.write(
        `manyCheckouts: ${build.label} N=${size}: ${JSON.stringify(result.idle)} busy connections ${result.busyConnections}\n`,
      );
    }
  }

  async function measure(build, size) {
    const redis = await startRedis();
    redisVersion = redis.version;
    const raw = redisClient(redis.socket);
    const ownId = Number(await raw.client('ID'));
    const prefix = `bench-many-${process.pid}`;
    const parent = tempDir(`many-${build.label}-${size}`);
    const repos = [];
    const pipeline = raw.pipeline();
    for (let index = 0; index < size; index += 1) {
      const repo = makeRepo({ label: `c${index}`, parent });
      writeRun(repo.runFile, runningRun());
      const identity = repoIdentity(repo.root);
      pipeline.hset(repositoriesKey(prefix), identity.id, repositoryEntryValue({ root: identity.root, host: os.hostname() }));
      repos.push({ ...repo, identity, queueName: `baton-${identity.id}`, lastEvent: 0 });
    }
    await pipeline.exec();
    const env = { ...process.env, REDIS_URL: redis.url, BATON_PREFIX: prefix };
    const startedAt = Date.now();
    const worker = await startWorker(
      build.bin,
      ['--discover', '--allow-root', parent, '--quiet', ...(build.keepWarm ? ['--keep-warm', String(KEEP_WARM_MS)] : [])],
      { env, readyTimeoutMs: 600_000 },
    );
    const readyMs = Date.now() - startedAt;
    const pid = worker.child.pid;
    await sleep(SETTLE_MS);

    // Idle: every checkout untouched since the worker started.
    const connectionsIdle = await connections(raw, ownId);
    const before = { commands: await totalCommands(raw), cpu: cpuSeconds(pid), at: process.hrtime.bigint() };
    await sleep(IDLE_SECONDS * 1000);
    const after = { commands: await totalCommands(raw), cpu: cpuSeconds(pid), at: process.hrtime.bigint() };
    const seconds = Number(after.at - before.at) / 1e9;
    const idle = {
      connections: connectionsIdle.count,
      infoClients: connectionsIdle.info,
      spares: connectionsIdle.spares,
      commandsPerSecond: round((after.commands - before.commands - 1) / seconds, 1),
      cpuPercent: round(((after.cpu - before.cpu) / seconds) * 100, 2),
      rssMb: rssMb(pid),
    };

    // Round trips: idle and busy checkouts interleaved, as a command and in process.
    const hot = repos.slice(0, Math.min(BUSY, size));
    const untouched = repos.slice(hot.length).reverse();
    const cli = async (repo) => {
      const run = await timedRun(process.execPath, [build.bin, 'task', TASK_ID, 'begin-or-resume'], {
        env,
        cwd: repo.root,
        timeoutMs: 60_000,
      });
      const result = JSON.parse(run.stdout.trim() || '{}');
      if (run.code !== 0 || result.status !== 'running')
        throw new Error(`round trip on ${repo.root} failed (${run.code}): ${run.stdout}${run.stderr}`);
      repo.lastEvent = Date.now();
      return run.ms;
    };
    const inProcess = async (repo) => {
      const started = process.hrtime.bigint();
      const client = await RepositoryQueueClient.connect({ redisUrl: redis.url, prefix }, repo.identity, 5_000);
      try {
        const eventId = randomEventId();
        await client.enqueue(envelopeFor({ intent: 'begin-or-resume', taskRef: TASK_ID }, repo.identity, 'cli', eventId));
        const outcome = await client.waitFor(eventId, 60_000);
        if (outcome.kind !== 'completed' || outcome.value.status !== 'running')
          throw new Error(`in-process round trip on ${repo.root}: ${JSON.stringify(outcome)}`);
      } finally {
        await client.close();
      }
      repo.lastEvent = Date.now();
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    /** A checkout nobody touched yet; else (small N) one that the worker has released again. */
    const idleRepo = async () => {
      const fresh = untouched.pop();
      if (fresh) return { repo: fresh, idleMs: Date.now() - startedAt };
      const repo = repos.at(-1);
      if (build.keepWarm) {
        const deadline = Date.now() + KEEP_WARM_MS * 4 + 30_000;
        while (await held(raw, repo.queueName)) {
          if (Date.now() > deadline)
            throw new Error(`${build.label}: ${repo.queueName} still held ${KEEP_WARM_MS * 4 + 30_000} ms after its last event`);
          await sleep(100);
        }
      } else {
        await sleep(KEEP_WARM_MS + 1_000); // an older build never lets go: the same pause, for the same conditions
      }
      return { repo, idleMs: Date.now() - (repo.lastEvent || startedAt) };
    };
    const busyRepo = async (index) => {
      const repo = hot[index % hot.length];
      if (Date.now() - repo.lastEvent > 1_000) await cli(repo); // unmeasured: make it busy
      return repo;
    };
    const samples = { cliIdle: [], cliBusy: [], inProcessIdle: [], inProcessBusy: [], idleForMs: [] };
    for (let index = 0; index < SAMPLES; index += 1) {
      const idleCli = await idleRepo();
      samples.idleForMs.push(idleCli.idleMs);
      samples.cliIdle.push(await cli(idleCli.repo));
      samples.cliBusy.push(await cli(await busyRepo(index)));
      const idleInProcess = await idleRepo();
      samples.idleForMs.push(idleInProcess.idleMs);
      samples.inProcessIdle.push(await inProcess(idleInProcess.repo));
      samples.inProcessBusy.push(await inProcess(await busyRepo(index)));
    }
    // What holding the busy checkouts costs: once the others touched above went idle again (a
    // build that releases them does so after --keep-warm), right after each busy one had an event.
    if (build.keepWarm) {
      const deadline = Date.now() + KEEP_WARM_MS * 4 + 30_000;
      for (const repo of repos.filter((candidate) => !hot.includes(candidate) && candidate.lastEvent > 0)) {
        while (await held(raw, repo.queueName)) {
          if (Date.now() > deadline) throw new Error(`${build.label}: ${repo.queueName} still held long after its last event`);
          await sleep(100);
        }
      }
    }
    // In process (milliseconds each), so that all of them are well within --keep-warm when counted.
    for (const repo of hot) await inProcess(repo);
    await sleep(250); // the in-process client's closed connection leaves the server's list
    const busy = await connections(raw, ownId);
    const busyRss = rssMb(pid);
    await worker.stop('SIGTERM');
    raw.disconnect();
    fs.rmSync(parent, { recursive: true, force: true });
    const roundTrip = Object.fromEntries(
      ['cliIdle', 'cliBusy', 'inProcessIdle', 'inProcessBusy'].map((key) => [key, summarize(samples[key])]),
    );
    return {
      build: build.label,
      checkouts: size,
      readyMs,
      idle,
      busyCheckouts: hot.length,
      busyConnections: busy.count,
      busyInfoClients: busy.info,
      busySpares: busy.spares,
      busyRssMb: busyRss,
      idleForSeconds: summarize(samples.idleForMs.map((ms) => ms / 1000)),
      roundTripMs: roundTrip,
      idleOverBusy: {
        cli: round(roundTrip.cliIdle.p50 / roundTrip.cliBusy.p50),
        inProcess: round(roundTrip.inProcessIdle.p50 / roundTrip.inProcessBusy.p50),
      },
      // Each idle sample over the busy one taken right after it: less exposed to the machine's load drifting.
      pairedRatioMedian: {
        cli: summarize(samples.cliIdle.map((ms, index) => ms / samples.cliBusy[index])).p50,
        inProcess: summarize(samples.inProcessIdle.map((ms, index) => ms / samples.inProcessBusy[index])).p50,
      },
    };
  }

  // ---------------------------------------------------------------------------------------------
  const machine = machineInfo();
  const labels = builds.map((build) => build.label);
  const at = (label, size) => results.find((result) => result.build === label && result.checkouts === size);
  const goalsFor = (label) => {
    const first = at(label, Math.min(...SIZES));
    const last = at(label, Math.max(...SIZES));
    if (!first || !last) return null;
    return {
      // As the issue counts them (INFO clients, the measuring connection included), idle and with ≤ BUSY busy,
      // the spare connections (at most 8, whatever N) left out.
      connectionsFlat:
        last.busyInfoClients - (last.busySpares ?? 0) <= GOALS.flatFactor * (first.busyInfoClients - (first.busySpares ?? 0)) &&
        last.idle.infoClients - (last.idle.spares ?? 0) <= GOALS.flatFactor * (first.idle.infoClients - (first.idle.spares ?? 0)),
      commandsFlat: last.idle.commandsPerSecond <= GOALS.flatFactor * Math.max(first.idle.commandsPerSecond, 1),
      rss: last.idle.rssMb <= GOALS.rssMb && last.busyRssMb <= GOALS.rssMb,
      roundTrip: results.filter((result) => result.build === label).every((result) => result.idleOverBusy.cli <= GOALS.idleOverBusy),
    };
  };
  const goalMet = Object.fromEntries(labels.map((label) => [label, goalsFor(label)]));
  const command = `npm run build && node bench/manyCheckouts.mjs${options.baseline ? ' --baseline <build before serving on demand>' : ''}${options.sizes ? ` --sizes ${options.sizes}` : ''}`;
  const json = {
    benchmark: 'manyCheckouts',
    goal: `one worker, N checkouts: connections and idle commands/s at the largest N ≤ ${GOALS.flatFactor}× the smallest N (with ≤ ${BUSY} busy), RSS ≤ ${GOALS.rssMb} MB, idle-checkout round trip ≤ ${GOALS.idleOverBusy}× a busy one`,
    command,
    settings: { sizes: SIZES, idleSeconds: IDLE_SECONDS, samples: SAMPLES, busy: BUSY, keepWarmMs: KEEP_WARM_MS, settleMs: SETTLE_MS },
    builds: builds.map((build) => ({ label: build.label, bundle: build.bundleHash, keepWarmOption: build.keepWarm })),
    machine: { ...machine, redis: redisVersion },
    results,
    goalMet,
  };
  const rows = results.map((result) => [
    result.build,
    result.checkouts,
    `${result.idle.infoClients} (${result.idle.connections})`,
    `${result.busyInfoClients} (${result.busyConnections}; ${result.busyCheckouts} busy)`,
    result.idle.commandsPerSecond,
    `${result.idle.cpuPercent} %`,
    `${result.idle.rssMb} MB`,
    `${result.roundTripMs.cliIdle.p50} / ${result.roundTripMs.cliBusy.p50} ms (${result.idleOverBusy.cli}×; paired ${result.pairedRatioMedian.cli}×)`,
    `${result.roundTripMs.inProcessIdle.p50} / ${result.roundTripMs.inProcessBusy.p50} ms (${result.idleOverBusy.inProcess}×; paired ${result.pairedRatioMedian.inProcess}×)`,
    `${Math.round(result.readyMs / 100) / 10} s`,
  ]);
  const mark = (value) => (value === true ? '✅' : value === false ? '❌' : '—');
  const goalRows = labels.map((label) => {
    const goals = goalMet[label];
    return [label, mark(goals?.connectionsFlat), mark(goals?.commandsFlat), mark(goals?.rss), mark(goals?.roundTrip)];
  });
  const markdown = `# One worker, many checkouts

One \`baton worker --discover\` process serving N checkouts registered in a private redis-server
(unix socket): each checkout a fresh repository with one running task. Per N and build: ${SETTLE_MS / 1000} s to
settle after the worker is ready, then an idle window of ${IDLE_SECONDS} s (connections from CLIENT LIST without
the benchmark's own; commands/s from INFO stats; the worker's CPU from /proc and RSS), then
${SAMPLES} round trips each, interleaved, of \`baton task ${TASK_ID} begin-or-resume\` (a process:
enqueue, the worker applies it, the result comes back) and of the same event in process
(RepositoryQueueClient) on an idle checkout (untouched since the worker started, or released by
the worker since its last event; idle for ${json.results.length ? `${Math.min(...results.map((r) => r.idleForSeconds.min))}–${Math.max(...results.map((r) => r.idleForSeconds.max))}` : '?'} s) and on a busy one (an event within the last
second); "paired" is the median of each idle sample over the busy one taken right after it. Connections are counted as INFO clients does (connected_clients: the benchmark's own
connection included, as in issue 19's table) and, in brackets, the worker's own (CLIENT LIST
without the benchmark's); "busy": right after ${BUSY} checkouts (or N, if fewer) had an event each,
the others idle again.
Builds: ${builds.map((build) => `**${build.label}** (bundle ${build.bundleHash}${build.keepWarm ? `, \`--keep-warm ${KEEP_WARM_MS}\`` : ', holds every checkout'})`).join(', ')}.

Goals (issue 19): connections and idle commands/s flat in N (at N = ${Math.max(...SIZES)} ≤ ${GOALS.flatFactor}× N = ${Math.min(...SIZES)}, with ≤ ${BUSY} busy), RSS ≤ ${GOALS.rssMb} MB at N = ${Math.max(...SIZES)}, the round trip on an idle checkout ≤ ${GOALS.idleOverBusy}× a busy one.

Reproduce: \`${command}\`

${table(['build', 'N checkouts', "connections, idle: INFO clients (worker's own)", "connections, busy: INFO clients (worker's own)", 'idle Redis commands/s', 'worker idle CPU', 'worker RSS', 'round trip p50, idle / busy (command)', 'round trip p50, idle / busy (in process)', 'worker ready after'], rows)}

${table(['build', 'connections flat', 'idle commands/s flat', `RSS ≤ ${GOALS.rssMb} MB`, `idle round trip ≤ ${GOALS.idleOverBusy}× busy (command)`], goalRows)}

${machineMarkdown(machine, { redis: redisVersion, settings: `idle ${IDLE_SECONDS} s, ${SAMPLES} samples, ${BUSY} busy` })}
`;
  process.stdout.write(
    `\n${table(['build', 'N', 'conn idle', 'conn busy', 'cmds/s idle', 'CPU idle', 'RSS', 'round trip idle/busy (cmd)', 'round trip idle/busy (in process)', 'ready'], rows)}\n\n`,
  );
  writeResults('manyCheckouts', json, markdown);
});

function workerHelp(bin) {
  return spawnSync(process.execPath, [bin, 'worker', '--help'], { encoding: 'utf8' }).stdout ?? '';
}

/**
 * Clients connected to Redis: `info`, INFO clients' connected_clients (the issue's figure, which
 * counts the benchmark's own connection), and `count`, the worker's own (CLIENT LIST without ours).
 */
async function connections(raw, ownId) {
  const list = String(await raw.client('LIST'));
  const info = Number(/connected_clients:(\d+)/.exec(String(await raw.info('clients')))?.[1] ?? NaN);
  const clients = list
    .split('\n')
    .filter(Boolean)
    .map((line) => Object.fromEntries(line.split(' ').map((field) => field.split(/=(.*)/s).slice(0, 2))));
  const others = clients.filter((client) => Number(client.id) !== ownId);
  // Spare connections (src/workers/spareConnections.ts): bounded (at most 8), counted apart.
  const spares = others.filter((client) => String(client.name ?? '').startsWith('baton-spare-')).length;
  return { count: others.length, info, spares, names: others.map((client) => client.name) };
}

/** Whether a BullMQ Worker consumes the queue: its blocking connection is named after the queue (base64). */
async function held(raw, queueName) {
  const list = String(await raw.client('LIST'));
  return list.includes(`:${Buffer.from(queueName).toString('base64')}:w:`);
}

async function totalCommands(raw) {
  const info = String(await raw.info('stats'));
  return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? NaN);
}

function cpuSeconds(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 of /proc/<pid>/stat (1-based; here after the command name).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssMb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024, 1);
}
