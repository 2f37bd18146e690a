// N linked worktrees × one worker (issue 42; docs/architecture.md "Worktrees"): one repository with
// N linked worktrees (real `git worktree add`), each a checkout of its own with one running task,
// served by one `baton worker --repo MAIN` (which follows the repository's worktrees). The baseline,
// measured in the same run and interleaved per N, is the same number of checkouts as N independent
// repositories served by one `baton worker --discover` (the serving path of issue 19). Per N and
// layout, on a private redis-server:
//
// - the worker's Redis connections (CLIENT LIST, the benchmark's own left out) with every checkout
//   idle, and right after every checkout had an event (all busy, within --keep-warm);
// - enqueue → applied of an in-process `begin-or-resume` (RepositoryQueueClient, as bench/latency.mjs),
//   one event on every checkout at once per round ("N agents at once"), --rounds rounds: p50, p99, max.
//
//   npm run build && node bench/worktrees.mjs [--sizes 1,4,16] [--rounds 20] [--keep-warm 5000]
//
// Ratios worktrees / baseline are what carry over: the machines are shared and noisy.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import * as lib from './lib.mjs';

const options = lib.flags();
const SIZES = String(options.sizes ?? '1,4,16')
  .split(',')
  .map(Number);
const ROUNDS = Number(options.rounds ?? 20);
const KEEP_WARM_MS = Number(options['keep-warm'] ?? 5000);
const SETTLE_MS = 2_000;
const GIT_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

await lib.main(async () => {
  const build = lib.snapshotBuild();
  const { envelopeFor } = await lib.importSource('src/queue/envelope.ts');
  const { randomEventId } = await lib.importSource('src/queue/eventIds.ts');
  const { repoIdentity } = await lib.importSource('src/queue/checkoutId.ts');
  const { repositoriesKey, repositoryEntryValue } = await lib.importSource('src/queue/keys.ts');
  const { RepositoryQueueClient } = await lib.importSource('src/queue/client.ts');

  const results = [];
  let redisVersion = '';
  for (const size of SIZES) {
    for (const layout of ['independent', 'worktrees']) {
      const result = await measure(layout, size);
      results.push(result);
      process.stderr.write(`worktrees: ${layout} N=${size}: ${JSON.stringify(result)}\n`);
    }
  }

  /** `size` checkouts: the main checkout's N linked worktrees, or N independent repositories. */
  function checkouts(layout, size, parent) {
    if (layout === 'independent')
      return Array.from({ length: size }, (_, index) => lib.makeRepo({ label: `r${index}`, git: true, parent }));
    const main = lib.makeRepo({ label: 'main', git: true, parent });
    return Array.from({ length: size }, (_, index) => {
      const root = path.join(parent, `wt-${index}`);
      execFileSync('git', ['worktree', 'add', '-q', '-b', `agent-${index}`, root], {
        cwd: main.root,
        env: { ...process.env, ...GIT_ENV },
      });
      const taskDir = path.join(root, '.agents', 'workspace', 'active', lib.TASK_ID);
      fs.mkdirSync(taskDir, { recursive: true });
      fs.writeFileSync(path.join(taskDir, 'task.md'), lib.taskMd());
      return { root: fs.realpathSync(root), taskDir, runFile: path.join(taskDir, 'orchestration.json'), main: main.root };
    });
  }

  async function measure(layout, size) {
    const redis = await lib.startRedis();
    redisVersion = redis.version;
    const raw = lib.redisClient(redis.socket);
    const ownId = Number(await raw.client('ID'));
    const prefix = `bench-wt-${process.pid}-${layout}-${size}`;
    const parent = lib.tempDir(`worktrees-${layout}-${size}`);
    const repos = checkouts(layout, size, parent).map((repo) => {
      lib.writeRun(repo.runFile, lib.runningRun());
      return { ...repo, identity: repoIdentity(repo.root) };
    });
    if (layout === 'independent') {
      const pipeline = raw.pipeline();
      for (const repo of repos)
        pipeline.hset(repositoriesKey(prefix), repo.identity.id, repositoryEntryValue({ root: repo.identity.root, host: os.hostname() }));
      await pipeline.exec();
    }
    const env = { ...process.env, REDIS_URL: redis.url, BATON_PREFIX: prefix };
    const serve = layout === 'worktrees' ? ['--repo', repos[0].main] : ['--discover', '--allow-root', parent];
    const worker = await lib.startWorker(build.bin, [...serve, '--quiet', '--keep-warm', String(KEEP_WARM_MS)], {
      env,
      readyTimeoutMs: 120_000,
    });
    await lib.sleep(SETTLE_MS);
    const idle = await workerConnections(raw, ownId);

    const clients = await Promise.all(
      repos.map((repo) => RepositoryQueueClient.connect({ redisUrl: redis.url, prefix }, repo.identity, 10_000)),
    );
    const latencies = [];
    const one = async (client, index) => {
      const started = process.hrtime.bigint();
      const eventId = randomEventId();
      await client.enqueue(envelopeFor({ intent: 'begin-or-resume', taskRef: lib.TASK_ID }, repos[index].identity, 'cli', eventId));
      const outcome = await client.waitFor(eventId, 60_000);
      if (outcome.kind !== 'completed' || outcome.value.status !== 'running')
        throw new Error(`${layout} N=${size}: ${JSON.stringify(outcome)}`);
      latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    };
    try {
      for (let round = 0; round < ROUNDS; round += 1) await Promise.all(clients.map(one));
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
    await lib.sleep(250); // the closed clients leave the server's list; every checkout still within --keep-warm
    const busy = await workerConnections(raw, ownId);
    await worker.stop('SIGTERM');
    raw.disconnect();
    fs.rmSync(parent, { recursive: true, force: true });
    return { layout, checkouts: size, idleConnections: idle, busyConnections: busy, enqueueToAppliedMs: lib.summarize(latencies) };
  }

  // ---------------------------------------------------------------------------------------------
  const machine = lib.machineInfo();
  const at = (layout, size) => results.find((result) => result.layout === layout && result.checkouts === size);
  const ratios = SIZES.map((size) => {
    const base = at('independent', size);
    const wt = at('worktrees', size);
    return {
      checkouts: size,
      p50: lib.round(wt.enqueueToAppliedMs.p50 / base.enqueueToAppliedMs.p50),
      p99: lib.round(wt.enqueueToAppliedMs.p99 / base.enqueueToAppliedMs.p99),
      busyConnections: lib.round(
        (wt.busyConnections.count - wt.busyConnections.spares) / (base.busyConnections.count - base.busyConnections.spares),
      ),
    };
  });
  const command = `npm run build && node bench/worktrees.mjs --sizes ${SIZES.join(',')} --rounds ${ROUNDS}`;
  const json = {
    benchmark: 'worktrees',
    command,
    settings: { sizes: SIZES, rounds: ROUNDS, keepWarmMs: KEEP_WARM_MS, settleMs: SETTLE_MS },
    build: build.bundleHash,
    machine: { ...machine, redis: redisVersion },
    results,
    ratios,
  };
  const conn = (c) => `${c.count - c.spares} + ${c.spares} spare`;
  const rows = results.map((result) => [
    result.layout === 'worktrees' ? 'N worktrees, `--repo MAIN`' : 'N repositories, `--discover` (baseline)',
    result.checkouts,
    conn(result.idleConnections),
    conn(result.busyConnections),
    result.enqueueToAppliedMs.n,
    `${result.enqueueToAppliedMs.p50} ms`,
    `${result.enqueueToAppliedMs.p99} ms`,
    `${result.enqueueToAppliedMs.max} ms`,
  ]);
  const ratioRows = ratios.map((ratio) => [ratio.checkouts, `${ratio.p50}×`, `${ratio.p99}×`, `${ratio.busyConnections}×`]);
  const markdown = `# N worktrees × one worker

One repository with N linked worktrees (\`git worktree add\`), each a checkout of its own with one
running task, served by one \`baton worker --repo MAIN\` (which serves the main checkout too, idle here); the baseline, measured in the same run right
before it at each N, is N independent repositories served by one \`baton worker --discover\`. Per
layout and N, on a private redis-server (unix socket): the worker's connections (CLIENT LIST without
the benchmark's own; the spare connections of src/workers/spareConnections.ts, at most 8 whatever N,
counted apart) ${SETTLE_MS / 1000} s after it is ready, every checkout idle, and right after
the last round (every checkout busy, within \`--keep-warm ${KEEP_WARM_MS}\`); then ${ROUNDS} rounds of one
in-process \`begin-or-resume\` on every checkout at once (RepositoryQueueClient: enqueue, the worker
applies it, the result comes back), enqueue → applied per event. The machine is shared with other
engineers' test runs (load average below): absolute times are noisy, the ratios to the baseline of
the same run are what carry over.

Reproduce: \`${command}\`

${lib.table(['layout', 'N', 'connections idle', 'connections busy', 'events', 'enqueue → applied p50', 'p99', 'max'], rows)}

Worktrees over the baseline of the same run:

${lib.table(['N', 'p50', 'p99', 'connections busy'], ratioRows)}

${lib.machineMarkdown(machine, { redis: redisVersion, settings: `${ROUNDS} rounds, --keep-warm ${KEEP_WARM_MS}`, build: build.bundleHash })}
`;
  process.stdout.write(`\n${lib.table(['layout', 'N', 'conn idle', 'conn busy', 'events', 'p50', 'p99', 'max'], rows)}\n\n`);
  lib.writeResults('worktrees', json, markdown);
});

/** The worker's own connections (CLIENT LIST without the benchmark's), spares counted apart. */
async function workerConnections(raw, ownId) {
  const list = String(await raw.client('LIST'));
  const clients = list
    .split('\n')
    .filter(Boolean)
    .map((line) => Object.fromEntries(line.split(' ').map((field) => field.split(/=(.*)/s).slice(0, 2))))
    .filter((client) => Number(client.id) !== ownId);
  return { count: clients.length, spares: clients.filter((client) => String(client.name ?? '').startsWith('baton-spare-')).length };
}
