// `npm run bench`: builds baton, runs every benchmark one after another (each starts its own
// private redis-server), and writes bench/results/SUMMARY.md from their results.
//
//   npm run bench                  full runs (several minutes)
//   npm run bench -- --quick       smaller runs, for checking that everything works
//   npm run bench -- --no-build    measure the dist/ that is there
//   npm run bench -- --only hook,latency
//   npm run bench -- --only manyCheckouts --baseline DIR   (DIR: another build's bin/ + dist/, measured alongside)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT, RESULTS_DIR, flags, machineInfo, machineMarkdown, table } from './lib.mjs';

const options = flags();
const quick = options.quick === 'true';
const only = options.only ? String(options.only).split(',') : null;

const BENCHMARKS = [
  { name: 'hook', script: 'hook.mjs', args: quick ? ['--rounds', '6', '--warmup', '2'] : [] },
  { name: 'latency', script: 'latency.mjs', args: quick ? ['--events', '300', '--warmup', '30'] : [] },
  { name: 'throughput', script: 'throughput.mjs', args: quick ? ['--events', '20'] : [] },
  // Written by the fingerprint work (issue: fingerprints); run when present.
  { name: 'fingerprint', script: 'fingerprint.mjs', args: quick ? ['--sizes', '2000', '--reps', '3'] : [], optional: true },
  // One worker, N checkouts; `--baseline DIR` adds the build in DIR (e.g. one from before serving on demand) to the same run.
  {
    name: 'manyCheckouts',
    script: 'manyCheckouts.mjs',
    args: [
      ...(quick ? ['--sizes', '1,16', '--samples', '3', '--idle-seconds', '3'] : []),
      ...(options.baseline ? ['--baseline', String(options.baseline)] : []),
    ],
  },
  // One worker's reconciliation scan over N checkouts against reading their run files.
  { name: 'reconcileScan', script: 'reconcileScan.mjs', args: quick ? ['--checkouts', '64', '--rounds', '3'] : [] },
  // N linked worktrees × one worker (issue 42) against N independent repositories, same run.
  { name: 'worktrees', script: 'worktrees.mjs', args: quick ? ['--sizes', '1,4', '--rounds', '5'] : [] },
  // Needs Chromium (/usr/bin/chromium or $CHROMIUM).
  { name: 'runview', script: 'runview.mjs', args: quick ? ['--events', '150', '--blocks', '2', '--warmup', '10'] : [], optional: true },
];

if (options.build !== 'false' && options['no-build'] !== 'true') {
  const build = spawnSync('npm', ['run', 'build'], { cwd: PROJECT_ROOT, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const runs = [];
for (const benchmark of BENCHMARKS) {
  if (only && !only.includes(benchmark.name)) continue;
  const script = path.join(PROJECT_ROOT, 'bench', benchmark.script);
  if (!fs.existsSync(script)) {
    if (!benchmark.optional) throw new Error(`bench/${benchmark.script} is missing`);
    runs.push({ name: benchmark.name, status: 'absent' });
    continue;
  }
  process.stdout.write(`\n== ${benchmark.name}: node bench/${benchmark.script} ${benchmark.args.join(' ')}\n`);
  const started = Date.now();
  const child = spawnSync(process.execPath, [script, ...benchmark.args], { cwd: PROJECT_ROOT, stdio: 'inherit' });
  runs.push({
    name: benchmark.name,
    status: child.status === 0 ? 'ok' : `failed (exit ${child.status ?? child.signal})`,
    seconds: Math.round((Date.now() - started) / 1000),
  });
}

// ---------------------------------------------------------------------------------------------
// SUMMARY.md from the result files (also those of earlier runs, marked with their date).

const read = (name) => {
  try {
    return JSON.parse(fs.readFileSync(path.join(RESULTS_DIR, `${name}.json`), 'utf8'));
  } catch {
    return null;
  }
};
const mark = (met) => (met === true ? '✅' : met === false ? '❌' : '—');
const rows = [];
const hook = read('hook');
if (hook) {
  for (const runtime of ['node', 'bun']) {
    const ratios = hook.ratiosToFloorP50[runtime];
    // With --before: this build's enqueue-only hooks against the earlier build's, same run (p50).
    const versus = hook.afterToBefore?.[runtime];
    rows.push([
      `Hook wall time, ${runtime === 'node' ? 'Node' : 'Bun'}`,
      `≤ 1.5× floor (${hook.results[`${runtime}/floor`].p50} ms: start-up + raw RESP write, no client library)`,
      `enqueue only: ${ratios['start-enqueue']}× (SubagentStart), ${ratios['stop-enqueue']}× (SubagentStop); PreToolUse with a worker: ${ratios['pretool-worker']}×${
        versus
          ? `; against ${hook.before.build}: ${versus['start-enqueue'].p50}× (SubagentStart), ${versus['stop-enqueue'].p50}× (SubagentStop)`
          : ''
      }`,
      mark(hook.goalMet[runtime]),
      'hook.md',
      hook.machine.date,
    ]);
  }
}
const latency = read('latency');
if (latency) {
  for (const phase of latency.phases) {
    rows.push([
      `Enqueue → applied, ${phase.runtime} worker`,
      'p50 ≤ 5 ms, p99 ≤ 25 ms',
      `p50 ${phase.latencyMs.p50} ms, p99 ${phase.latencyMs.p99} ms (${phase.events} events)`,
      mark(latency.goalMet[phase.runtime]),
      'latency.md',
      latency.machine.date,
    ]);
  }
}
const throughput = read('throughput');
if (throughput) {
  // With --before the scenarios ran several times with both builds: one row per scenario, this
  // build's median, and how it compares.
  const measured = throughput.afterToBefore
    ? throughput.afterToBefore.map((entry) => ({
        ...entry,
        repos: throughput.scenarios[0].repos,
        eventsPerSecond: entry.after,
        versus: `; median of ${throughput.before.rounds}, against ${throughput.before.build}: ${entry.ratio}× (${entry.before} events/s)`,
      }))
    : throughput.scenarios;
  for (const scenario of measured) {
    const ceiling = throughput.fileSystemCeiling?.[scenario.filesystem]?.atomicWritesPerSecond;
    rows.push([
      `Throughput, ${scenario.repos} repos, ${scenario.processes} ${scenario.runtime} process${scenario.processes > 1 ? 'es' : ''}, ${scenario.filesystem}`,
      scenario.processes === 1 ? '≥ 1,000 events/s' : 'scaling',
      `${scenario.eventsPerSecond} events/s${ceiling ? ` (FS ceiling ${ceiling} atomic writes/s)` : ''}${scenario.versus ?? ''}`,
      scenario.processes === 1 ? mark(scenario.eventsPerSecond >= 1000) : '—',
      'throughput.md',
      throughput.machine.date,
    ]);
  }
}
const fingerprint = read('fingerprint');
if (fingerprint) {
  const goals = fingerprint.goals ?? {};
  for (const result of fingerprint.results ?? []) {
    // docs/architecture.md sets the goal at 20,000 files; smaller repositories are reported only.
    const goalApplies = result.files >= 20_000;
    const met =
      goalApplies && typeof goals.cold === 'number' && typeof goals.warm === 'number'
        ? result.coldRatio <= goals.cold && result.warmRatio <= goals.warm
        : undefined;
    rows.push([
      `Fingerprint, ${result.files} files`,
      goalApplies ? `cold ≤ ${goals.cold ?? '?'}× git, warm ≤ ${goals.warm ?? '?'}× git` : '(reported; the goal is for 20k files)',
      `cold ${Math.round(result.coldRatio * 100) / 100}× (${Math.round(result.coldMs)} ms vs git ${Math.round(result.gitMs)} ms${typeof result.beforeColdRatio === 'number' ? `; before: ${Math.round(result.beforeColdRatio * 100) / 100}×` : ''}), warm ${Math.round(result.warmRatio * 100) / 100}×`,
      mark(met),
      'fingerprint.md',
      fingerprint.date ?? fingerprint.machine?.date ?? '',
    ]);
  }
}
const many = read('manyCheckouts');
if (many) {
  const largest = Math.max(...many.results.map((result) => result.checkouts));
  const smallest = Math.min(...many.results.map((result) => result.checkouts));
  for (const build of many.builds) {
    const at = (size) => many.results.find((result) => result.build === build.label && result.checkouts === size);
    const [first, last] = [at(smallest), at(largest)];
    if (!first || !last) continue;
    const goals = many.goalMet[build.label] ?? {};
    rows.push([
      `One worker, ${smallest} → ${largest} checkouts (${build.label})`,
      'connections and idle commands/s ≤ 2× N = 1 (≤ 5 busy), RSS ≤ 150 MB, idle round trip ≤ 1.3× busy',
      `connections (INFO clients) ${first.idle.infoClients} → ${last.idle.infoClients} idle, ${first.busyInfoClients} → ${last.busyInfoClients} busy (the worker's own: ${first.idle.connections} → ${last.idle.connections}, ${first.busyConnections} → ${last.busyConnections}); idle commands/s ${first.idle.commandsPerSecond} → ${last.idle.commandsPerSecond}; RSS ${last.idle.rssMb} MB; round trip idle/busy ${last.idleOverBusy.cli}× (command), ${last.idleOverBusy.inProcess}× (in process)`,
      mark(Object.values(goals).every(Boolean)),
      'manyCheckouts.md',
      many.machine.date,
    ]);
  }
}
const scan = read('reconcileScan');
if (scan) {
  const [floor, worker] = scan.rows;
  rows.push([
    `Reconciliation scan over ${scan.checkouts} checkouts`,
    'near the floor of reading the run files; < 1% of a core at the default period',
    `${worker.medianCpuMs} ms CPU per scan (${scan.ratioToFloor}× the floor's ${floor.medianCpuMs} ms), ${scan.coreShareAtDefaultGraces}% of a core every 30 s`,
    mark(scan.ratioToFloor <= 1.5 && scan.coreShareAtDefaultGraces < 1),
    'reconcileScan.md',
    scan.machine.date,
  ]);
}
const worktrees = read('worktrees');
if (worktrees) {
  const largest = Math.max(...worktrees.results.map((result) => result.checkouts));
  const at = (layout) => worktrees.results.find((result) => result.layout === layout && result.checkouts === largest);
  const [wt, base] = [at('worktrees'), at('independent')];
  const ratio = worktrees.ratios.find((entry) => entry.checkouts === largest);
  const own = (connections) => connections.count - connections.spares;
  rows.push([
    `${largest} worktrees × one worker (\`--repo MAIN\`), all busy at once`,
    'an idle worktree costs no connection; enqueue → applied as N independent repositories (ratio ≈ 1)',
    `connections idle ${own(wt.idleConnections)} (baseline ${own(base.idleConnections)}), busy ${own(wt.busyConnections)} (${own(base.busyConnections)}), spares apart; p50 ${wt.enqueueToAppliedMs.p50} ms (${ratio.p50}×), p99 ${wt.enqueueToAppliedMs.p99} ms (${ratio.p99}×)`,
    '—',
    'worktrees.md',
    worktrees.machine.date,
  ]);
}
const runview = read('runview');
if (runview) {
  for (const phase of runview.phases.filter((entry) => entry.condition !== 'baseline')) {
    rows.push([
      `Run view: enqueue → applied, ${phase.condition}`,
      'no noticeable cost (ratio to baseline ≈ 1)',
      `p50 ${phase.latencyMs.p50} ms (${phase.ratioToBaseline.p50}×), p99 ${phase.latencyMs.p99} ms (${phase.ratioToBaseline.p99}×)`,
      '—',
      'runview.md',
      runview.machine.date,
    ]);
  }
}
const chaos = read('chaos');
if (chaos)
  rows.push([
    'Chaos and fuzzing (`npm run chaos`)',
    'no failure',
    `${chaos.passed}/${chaos.total} tests passed, ${chaos.rounds} kill -9 rounds, ${chaos.fuzzRuns} runs per property`,
    mark(chaos.failed === 0),
    'chaos.md',
    chaos.date,
  ]);

const machine = machineInfo();
const summary = `# Benchmark and chaos summary

Measured by \`npm run bench\` (bench/run.mjs${quick ? ', --quick' : ''}); chaos by \`npm run chaos\`. Each row links the
detailed result with its exact command; timings are compared with baselines measured side by side
in the same run, never asserted in tests. Rows from earlier runs keep their own date.

${table(
  ['what', 'goal', 'measured', 'goal met', 'details', 'measured at'],
  rows.map((row) => [row[0], row[1], row[2], row[3], `[${row[4]}](${row[4]})`, row[5]]),
)}

This run: ${runs.map((run) => `${run.name} ${run.status}${run.seconds !== undefined ? ` (${run.seconds} s)` : ''}`).join(', ')}.

${machineMarkdown(machine)}
`;
fs.mkdirSync(RESULTS_DIR, { recursive: true });
fs.writeFileSync(path.join(RESULTS_DIR, 'SUMMARY.md'), summary);
process.stdout.write(`\nwrote bench/results/SUMMARY.md\n`);
if (runs.some((run) => run.status.startsWith('failed'))) process.exitCode = 1;
