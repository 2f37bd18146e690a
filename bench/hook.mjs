// Benchmark 1: hook wall time (spawn → exit) of `baton hook claude-code`, on Node and on Bun,
// against the floor measured in the same run: the runtime starts, connects to Redis over node:net
// and writes one command in RESP by hand, with no Redis client library (bench/raw-write.mjs).
// Goals: for the events that only enqueue (SubagentStart, SubagentStop), hook ≤ 1.5× the floor
// (issue 9, "Cost"); SubagentStart with a worker up ≤ 1.2× the floor (issue 29).
//
// Variants, per runtime:
//   empty start-up             `node -e 0` / `bun -e 0` (information)
//   floor                      raw-write.mjs: start + node:net + connect + one XADD
//   ioredis write              raw-write.mjs --ioredis: the same through ioredis (information:
//                              what loading a client library costs)
//   SubagentStart/Stop, enqueue only
//                              no worker serves the repository: the hook validates, enqueues (one
//                              round trip) and exits. The comparison the goal is about.
//   PreToolUse with a worker   a lifecycle spawn with a prepared delegation: the spawn claim, which
//                              waits for the worker's answer. Information.
//   PreToolUse, no worker      the spawn is blocked and its claim withdrawn (a second round trip,
//                              and the withdraw script loaded from the main bundle). Information.
//   SubagentStart with a worker
//                              enqueue while a worker serves the repository; while SubagentStart
//                              still waits for the result this includes the worker applying it.
//                              Information.
//
// Every round runs every variant once, in a rotating order, so machine noise spreads evenly.
// With --before DIR (an earlier build: a DIR holding bin/ and dist/), the hook variants of that
// build run in the same rounds too, and the results give each one's p50 and min as after / before
// (--before-label names that build in the results, e.g. its commit).
//
// The CA bundle (issue 46): every variant runs twice, as `node`/`bun` without NODE_EXTRA_CA_CERTS and
// as `node+ca`/`bun+ca` with it (--ca FILE, else the bundle this bench was started with, else Debian's),
// as on machines behind a TLS-intercepting proxy: Node parses it at every start, before any code. On
// Node the hook runs through bin/baton, the launcher npm installs as `baton` (which hands the bundle
// over instead, docs/hooks.md "Transport and cost"); a --before build without it runs bin/baton.mjs.
//
//   npm run build && node bench/hook.mjs [--rounds 25] [--warmup 3] [--ca FILE] [--before DIR [--before-label TEXT]]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BUN,
  PROJECT_ROOT,
  flags,
  machineInfo,
  machineMarkdown,
  main,
  makeRepo,
  redisClient,
  round,
  sleep,
  snapshotBuild,
  startRedis,
  startWorker,
  summarize,
  table,
  timedRun,
  writeResults,
} from './lib.mjs';

const options = flags();
const ROUNDS = Number(options.rounds ?? 25);
const WARMUP = Number(options.warmup ?? 3);
const GOAL_RATIO = 1.5;
const GOAL_KEYS = ['start-enqueue', 'stop-enqueue'];
const WORKER_GOAL_RATIO = 1.2;
const INFO_KEYS = ['ioredis', 'pretool-worker', 'pretool-blocked', 'start-worker'];
const HOOK_KEYS = ['start-enqueue', 'stop-enqueue', 'pretool-worker', 'pretool-blocked', 'start-worker'];
const DEBIAN_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
const CA_BUNDLE = options.ca ?? process.env.NODE_EXTRA_CA_CERTS ?? (fs.existsSync(DEBIAN_BUNDLE) ? DEBIAN_BUNDLE : null);
// Every process of a row gets this environment, plus the row's bundle (or none).
const { NODE_EXTRA_CA_CERTS: _startedWith, ...PLAIN_ENV } = process.env;
PLAIN_ENV.PATH = `${path.dirname(process.execPath)}${path.delimiter}${PLAIN_ENV.PATH ?? ''}`;

await main(async () => {
  const build = snapshotBuild();
  const earlier = options.before ? snapshotBuild(path.resolve(options.before)) : null;
  const redis = await startRedis();
  const inspect = redisClient(redis.socket);
  const repo = makeRepo({ label: 'hook', git: true });
  // The enqueue-only variants use a repository no worker serves (a worker records its Redis and
  // prefix in the repository it serves, and hooks there follow that record).
  const idleRepo = makeRepo({ label: 'hook-idle' });
  const examples = fileURLToPath(new URL('../test/fixtures/hooks/claude-code/', import.meta.url));
  const example = (name) => JSON.parse(fs.readFileSync(path.join(examples, name), 'utf8'));
  const startExample = example('SubagentStart.json');
  const stopExample = example('SubagentStop.json');
  const preToolExample = example('PreToolUse-Task.json');
  const payload = (base, fields, root = repo.root) => JSON.stringify({ ...base, cwd: root, ...fields });

  const workerPrefix = `bench-hook-w-${process.pid}`;
  const idlePrefix = `bench-hook-n-${process.pid}`;
  const envFor = (prefix, extra = {}) => ({
    ...PLAIN_ENV,
    ...extra,
    REDIS_URL: redis.url,
    BATON_PREFIX: prefix,
    BATON_HOOK_BUDGET_MS: '4000',
  });
  const worker = await startWorker(build.bin, ['--repo', repo.root, '--quiet'], { env: envFor(workerPrefix) });
  const task = async (...args) => {
    const run = await timedRun(process.execPath, [build.bin, 'task', '01', ...args], { env: envFor(workerPrefix), cwd: repo.root });
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}');
    if (result.status !== 'running') throw new Error(`baton task ${args.join(' ')}: ${run.stdout}${run.stderr}`);
    return result;
  };
  fs.writeFileSync(
    path.join(repo.root, '.agents', 'workspace', 'active', '.short-ids.json'),
    JSON.stringify({ version: 1, ids: { '01': path.basename(repo.taskDir) } }),
  );
  // Template: a prepared delegation (what PreToolUse lets through and SubagentStart activates),
  // produced by the real CLI.
  await task('begin-or-resume', '--max-steps', '1000000');
  await task('prepare', '--client', 'claude-code');
  const prepared = fs.readFileSync(repo.runFile, 'utf8');
  // A repository's queue is named after its checkout id, recorded by the first command or hook.
  const queueOf = (root) => {
    try {
      return `baton-${JSON.parse(fs.readFileSync(path.join(root, '.git', 'baton', 'checkout.json'), 'utf8')).id}`;
    } catch {
      return null;
    }
  };
  const queueName = queueOf(repo.root);
  /** Waits until the worker has nothing queued or running, then restores the prepared delegation. */
  const resetPrepared = async () => {
    for (let tries = 0; tries < 500; tries += 1) {
      const [waiting, active] = await Promise.all([
        inspect.llen(`${workerPrefix}:${queueName}:wait`),
        inspect.llen(`${workerPrefix}:${queueName}:active`),
      ]);
      if (waiting === 0 && active === 0) break;
      await sleep(10);
    }
    fs.writeFileSync(repo.runFile, prepared);
  };
  const idleWaiting = async () => {
    const idleQueue = queueOf(idleRepo.root);
    return idleQueue ? inspect.llen(`${idlePrefix}:${idleQueue}:wait`) : 0;
  };

  let counter = 0;
  const uniqueId = (label) => `bench-${label}-${(counter += 1)}`;
  const caEnv = CA_BUNDLE ? { NODE_EXTRA_CA_CERTS: CA_BUNDLE } : null;
  const runtimes = {
    node: { command: process.execPath, extra: {}, launcher: true },
    bun: { command: BUN, extra: {}, launcher: false },
    ...(caEnv
      ? {
          'node+ca': { command: process.execPath, extra: caEnv, launcher: true },
          'bun+ca': { command: BUN, extra: caEnv, launcher: false },
        }
      : {}),
  };
  /** How a runtime starts a build's hook: Node through the installed launcher (bin/baton) where the build has one. */
  const hookOf = (bin, runtime) => {
    const launcher = path.join(path.dirname(bin), 'baton');
    return runtimes[runtime].launcher && fs.existsSync(launcher)
      ? { command: launcher, args: ['hook', 'claude-code'] }
      : { command: runtimes[runtime].command, args: [bin, 'hook', 'claude-code'] };
  };
  const fail = (what, run) => new Error(`${what}: exit ${run.code}: ${run.stdout}${run.stderr}`);
  const perRuntime = (value) => Object.fromEntries(Object.keys(runtimes).map((runtime) => [runtime, value()]));
  const floorBreakdown = perRuntime(() => []);
  const ioredisBreakdown = perRuntime(() => []);
  const waited = perRuntime(() => 0);

  const variants = [];
  for (const runtime of Object.keys(runtimes)) {
    const { command, extra: runtimeEnv } = runtimes[runtime];
    const rawWrite = (extra, breakdown) => async () => {
      const run = await timedRun(command, [path.join(PROJECT_ROOT, 'bench', 'raw-write.mjs'), ...extra], {
        env: { ...PLAIN_ENV, ...runtimeEnv, REDIS_SOCKET: redis.socket },
      });
      if (run.code !== 0) throw fail('raw write', run);
      breakdown[runtime].push(JSON.parse(run.stdout));
      return run;
    };
    const enqueueOnly = (hook, what, base, label) => async () => {
      const before = await idleWaiting();
      const run = await timedRun(hook.command, hook.args, {
        env: envFor(idlePrefix, runtimeEnv),
        input: payload(base, { agent_id: uniqueId(label) }, idleRepo.root),
        cwd: idleRepo.root,
      });
      if (run.code !== 0 || (await idleWaiting()) !== before + 1) throw fail(`${what}: expected exit 0 and one more queued job`, run);
      return run;
    };
    variants.push(
      {
        runtime,
        key: 'empty',
        name: 'empty start-up',
        run: () => timedRun(command, ['-e', '0'], { env: { ...PLAIN_ENV, ...runtimeEnv } }),
      },
      { runtime, key: 'floor', name: 'floor: start-up + node:net + one raw XADD (no client library)', run: rawWrite([], floorBreakdown) },
      { runtime, key: 'ioredis', name: 'reference: start-up + ioredis + one XADD', run: rawWrite(['--ioredis'], ioredisBreakdown) },
    );
    // The hook's variants, of this build and (--before) of the earlier one, keyed `before/…`.
    for (const [prefix, label, hook] of [
      ['', '', hookOf(build.bin, runtime)],
      ...(earlier ? [['before/', 'before: ', hookOf(earlier.bin, runtime)]] : []),
    ]) {
      variants.push(
        {
          runtime,
          key: `${prefix}start-enqueue`,
          name: `${label}hook SubagentStart, enqueue only`,
          run: enqueueOnly(hook, 'SubagentStart', startExample, 'sq'),
        },
        {
          runtime,
          key: `${prefix}stop-enqueue`,
          name: `${label}hook SubagentStop, enqueue only`,
          run: enqueueOnly(hook, 'SubagentStop', stopExample, 'tq'),
        },
        {
          runtime,
          key: `${prefix}pretool-worker`,
          name: `${label}${'hook PreToolUse spawn claim, with a worker'}`,
          run: async () => {
            await resetPrepared();
            const run = await timedRun(hook.command, hook.args, {
              env: envFor(workerPrefix, runtimeEnv),
              input: payload(preToolExample, { tool_use_id: uniqueId('tu') }),
              cwd: repo.root,
            });
            if (run.code !== 0) throw fail('PreToolUse with a prepared delegation: expected the spawn to be allowed', run);
            return run;
          },
        },
        {
          runtime,
          key: `${prefix}pretool-blocked`,
          name: `${label}${'hook PreToolUse spawn claim, no worker (blocked, claim withdrawn)'}`,
          run: async () => {
            const before = await idleWaiting();
            const run = await timedRun(hook.command, hook.args, {
              env: envFor(idlePrefix, runtimeEnv),
              input: payload(preToolExample, { tool_use_id: uniqueId('tb') }, idleRepo.root),
              cwd: idleRepo.root,
            });
            if (run.code !== 2 || !run.stderr.includes('withdrawn') || (await idleWaiting()) !== before)
              throw fail('PreToolUse with no worker: expected the spawn blocked and its claim withdrawn', run);
            return run;
          },
        },
        {
          runtime,
          key: `${prefix}start-worker`,
          name: `${label}${'hook SubagentStart, with a worker'}`,
          run: async () => {
            await resetPrepared();
            const run = await timedRun(hook.command, hook.args, {
              env: envFor(workerPrefix, runtimeEnv),
              input: payload(startExample, { agent_id: uniqueId('sa') }),
              cwd: repo.root,
            });
            if (run.code !== 0) throw fail('SubagentStart with a worker', run);
            if (prefix === '' && run.stdout.includes('"status":"running"')) waited[runtime] += 1;
            return run;
          },
        },
      );
    }
  }

  const samples = new Map(variants.map((variant) => [`${variant.runtime}/${variant.key}`, []]));
  for (let roundIndex = 0; roundIndex < WARMUP + ROUNDS; roundIndex += 1) {
    // Rotate the order every round so no variant always runs right after another.
    const offset = roundIndex % variants.length;
    const order = [...variants.slice(offset), ...variants.slice(0, offset)];
    for (const variant of order) {
      const run = await variant.run();
      if (roundIndex >= WARMUP) samples.get(`${variant.runtime}/${variant.key}`).push(run.ms);
    }
    process.stderr.write(`\rhook bench: round ${roundIndex + 1}/${WARMUP + ROUNDS}`);
  }
  process.stderr.write('\n');
  await worker.stop('SIGTERM');

  const results = {};
  for (const variant of variants) {
    results[`${variant.runtime}/${variant.key}`] = {
      runtime: variant.runtime,
      name: variant.name,
      ...summarize(samples.get(`${variant.runtime}/${variant.key}`)),
    };
  }
  const ratios = {};
  const minRatios = {};
  for (const runtime of Object.keys(runtimes)) {
    const floor = results[`${runtime}/floor`].p50;
    ratios[runtime] = Object.fromEntries([...GOAL_KEYS, ...INFO_KEYS].map((key) => [key, round(results[`${runtime}/${key}`].p50 / floor)]));
    // Noise on a shared machine only adds time: the fastest runs show the costs with the least of it.
    minRatios[runtime] = Object.fromEntries(
      [...GOAL_KEYS, ...INFO_KEYS].map((key) => [key, round(results[`${runtime}/${key}`].min / results[`${runtime}/floor`].min)]),
    );
    const breakdown = (entries) => ({
      loadP50: summarize(entries.slice(WARMUP).map((entry) => entry.loadMs)).p50,
      connectAndWriteP50: summarize(entries.slice(WARMUP).map((entry) => entry.connectWriteMs)).p50,
    });
    results[`${runtime}/floor`].breakdown = breakdown(floorBreakdown[runtime]);
    results[`${runtime}/ioredis`].breakdown = breakdown(ioredisBreakdown[runtime]);
  }
  // --before: each hook variant of this build against the same variant of the earlier build.
  const afterToBefore = earlier
    ? Object.fromEntries(
        Object.keys(runtimes).map((runtime) => [
          runtime,
          Object.fromEntries(
            HOOK_KEYS.map((key) => {
              const [now, then] = [results[`${runtime}/${key}`], results[`${runtime}/before/${key}`]];
              return [key, { p50: round(now.p50 / then.p50), min: round(now.min / then.min) }];
            }),
          ),
        ]),
      )
    : null;
  const machine = machineInfo();
  const command = `npm run build && node bench/hook.mjs${ROUNDS !== 25 ? ` --rounds ${ROUNDS}` : ''}${options.ca ? ` --ca ${options.ca}` : ''}${earlier ? ' --before DIR' : ''}`;
  const caCertificates = CA_BUNDLE ? (fs.readFileSync(CA_BUNDLE, 'utf8').match(/-----BEGIN CERTIFICATE-----/g) ?? []).length : 0;
  const verdict = (ratio, goal = GOAL_RATIO) => (ratio <= goal ? `${ratio}× ✅` : `${ratio}× ❌`);
  const goalMet = Object.fromEntries(
    Object.keys(runtimes).map((runtime) => [runtime, Math.max(...GOAL_KEYS.map((key) => ratios[runtime][key])) <= GOAL_RATIO]),
  );
  const workerGoalMet = Object.fromEntries(
    Object.keys(runtimes).map((runtime) => [runtime, ratios[runtime]['start-worker'] <= WORKER_GOAL_RATIO]),
  );
  const json = {
    benchmark: 'hook',
    goal: `hook wall time ≤ ${GOAL_RATIO}× floor (runtime start-up + node:net connect + one raw RESP write, no client library) for the events that only enqueue`,
    command,
    machine: { ...machine, redis: redis.version, bundle: build.bundleHash },
    rounds: ROUNDS,
    warmup: WARMUP,
    caBundle: CA_BUNDLE ? { file: CA_BUNDLE, certificates: caCertificates } : null,
    results,
    ratiosToFloorP50: ratios,
    ratiosToFloorMin: minRatios,
    startWithWorkerWaitedForResult: waited,
    goalMet,
    workerGoal: `SubagentStart with a worker ≤ ${WORKER_GOAL_RATIO}× floor (issue 29)`,
    workerGoalMet,
    ...(earlier ? { before: { build: options['before-label'] ?? 'an earlier build', bundle: earlier.bundleHash }, afterToBefore } : {}),
  };
  const rows = Object.values(results).map((entry) => [entry.runtime, entry.name, entry.p50, entry.p90, entry.min, entry.max]);
  const ratioRows = Object.keys(runtimes).map((runtime) => [
    runtime,
    results[`${runtime}/floor`].p50,
    verdict(ratios[runtime]['start-enqueue']),
    verdict(ratios[runtime]['stop-enqueue']),
    `${ratios[runtime]['pretool-worker']}×`,
    `${ratios[runtime]['pretool-blocked']}×`,
    verdict(ratios[runtime]['start-worker'], WORKER_GOAL_RATIO),
    `${ratios[runtime].ioredis}×`,
  ]);
  const breakdownLine = (runtime) =>
    `${runtime === 'node' ? 'Node' : 'Bun'}: node:net ${results[`${runtime}/floor`].breakdown.loadP50} ms + connect/XADD ${results[`${runtime}/floor`].breakdown.connectAndWriteP50} ms; ioredis ${results[`${runtime}/ioredis`].breakdown.loadP50} ms + connect/XADD ${results[`${runtime}/ioredis`].breakdown.connectAndWriteP50} ms`;
  const markdown = `# Hook wall time (spawn → exit)

Goals: for the events that only enqueue (SubagentStart, SubagentStop), \`baton hook\` within
${GOAL_RATIO}× the floor (issue 9, "Cost"); SubagentStart with a worker up within ${WORKER_GOAL_RATIO}× (issue 29). The floor = the runtime starting, connecting to Redis over \`node:net\` and writing
one command in RESP by hand, **without loading any Redis client library** (\`bench/raw-write.mjs\`),
measured side by side in the same run (${ROUNDS} rounds after ${WARMUP} warm-up rounds; every round runs
every variant once, in rotating order). Redis: private redis-server on a unix socket.

Reproduce: \`${command}\`

## Ratios to the floor (p50 / p50)

**Enqueue only** (issue 9's goal): no worker serves the repository, the hook reads the
payload, validates it, finds the repository, adds the job with BullMQ's own script over the raw
RESP client (\`src/queue/resp.ts\`) in one round trip, and exits. **SubagentStart with a worker** is issue 29's goal (below). The other columns are for
information: **PreToolUse with a worker** is the spawn claim (the hook enqueues the claim and
waits for the worker's answer, then loads the result schema to check it); **PreToolUse, no worker** is a
blocked spawn whose claim the hook withdraws (one more round trip, and the withdraw script loaded
from the main bundle, only on this path); **SubagentStart with a worker** enqueues while the worker
serves the repository (the worker then applies it beside the exiting hook); it waited for the
worker's result in ${waited.node}/${ROUNDS + WARMUP} Node and ${waited.bun}/${ROUNDS + WARMUP} Bun runs of this build (a hook
that only enqueues does not); **ioredis write** is the floor's job done through ioredis, i.e. what
loading a client library costs.

${
  CA_BUNDLE
    ? `Rows \`node+ca\` and \`bun+ca\`: every process of the row (floor included) started with
\`NODE_EXTRA_CA_CERTS=${CA_BUNDLE}\` (${caCertificates} certificates), as on a machine behind a TLS-intercepting
proxy; Node parses that bundle at every start. Rows \`node\` and \`bun\`: without it. On Node the hook
runs through \`bin/baton\`, the launcher npm installs as \`baton\`, which hands the bundle to
\`baton hook\` as \`BATON_NODE_EXTRA_CA_CERTS\` (read only for a TLS Redis) instead of letting Node parse it.

`
    : ''
}${table(['runtime', 'floor p50 (ms)', 'SubagentStart enqueue only', 'SubagentStop enqueue only', 'PreToolUse with a worker', 'PreToolUse, no worker (blocked)', 'SubagentStart with a worker', 'ioredis write'], ratioRows)}

The same as min / min (the fastest run of each variant; the goal is judged on p50):
${Object.keys(runtimes)
  .map((runtime) => `${runtime} ${GOAL_KEYS.map((key) => `${key} ${minRatios[runtime][key]}×`).join(', ')}`)
  .join('; ')}. Load average at the end of the
run: ${machine.loadAverage.join(', ')} (2 cores shared with other work: see the p90 column).

${
  afterToBefore
    ? `## This build against an earlier one (after / before)

The same hook variants of \`--before DIR\`, ${options['before-label'] ?? 'an earlier build'} (bundle ${earlier.bundleHash}), ran in the same rounds, in
the same rotation, against the same Redis and worker; below 1 is faster now.

${table(
  ['runtime', ...HOOK_KEYS.map((key) => `${key} p50`), ...GOAL_KEYS.map((key) => `${key} min`)],
  Object.keys(runtimes).map((runtime) => [
    runtime,
    ...HOOK_KEYS.map((key) => `${afterToBefore[runtime][key].p50}×`),
    ...GOAL_KEYS.map((key) => `${afterToBefore[runtime][key].min}×`),
  ]),
)}

`
    : ''
}## Wall times (ms)

${table(['runtime', 'variant', 'p50', 'p90', 'min', 'max'], rows)}

In-process breakdown (p50): ${breakdownLine('node')}. ${breakdownLine('bun')}.

Where a hook's time goes beyond the floor, and what keeps it small (src/cli/hook.ts,
src/queue/hookTransport.ts, scripts/build.mjs): \`baton hook\` loads its own bundle (\`dist/hook.mjs\`,
~140 KB: the hook, zod/mini, a SHA-256, the RESP client and BullMQ's add script as text) with no ioredis,
BullMQ or full zod — those are lazy imports from the main bundle, loaded only for a cluster or
sentinel Redis, a spool to drain or a result to check; stdin is read with read(2) rather than as a
stream (5 ms on Node, 13 ms on Bun); no crypto module is loaded on the common path (node:crypto
costs a fresh Node ~3 ms, Bun ~8 ms, Node's Web Crypto ~2 ms more): under Bun digests use Bun's
hasher, elsewhere the event id's SHA-256 is JavaScript (@noble/hashes), the add script's sha is
computed at build time, and on Node random ids come from /dev/urandom; one Redis round trip adds the job, registers the repository and looks for
a worker.

${machineMarkdown(machine, { redis: redis.version, bundle: build.bundleHash })}
`;
  writeResults('hook', json, markdown);
});
