// What reconciliation costs a worker (docs/architecture.md "Reconciliation"): every scan period it
// reads the pending delegations of every checkout it serves. Measured in one process, interleaved
// in rounds, on N checkouts with one run each (a quarter of them with a pending delegation, none
// due): the worker's scan (`dueReconcileJobs` per checkout, as the worker calls it) against the
// floor of reading and parsing every run file with nothing else.
//
//   node bench/reconcileScan.mjs [--checkouts 1024] [--rounds 9]
import fs from 'node:fs';
import path from 'node:path';
import {
  TASK_ID,
  flags,
  importSource,
  machineInfo,
  machineMarkdown,
  main,
  makeRepo,
  onCleanup,
  runningRun,
  tempDir,
  writeResults,
} from './lib.mjs';

const options = flags();
const CHECKOUTS = Number(options.checkouts ?? 1024);
const ROUNDS = Number(options.rounds ?? 9);

function pendingReceipt(taskId, createdAt) {
  return {
    taskId,
    runId: `bench-${taskId}`,
    role: 'executor',
    stage: 'analysis',
    round: 1,
    artifact: 'analysis.md',
    client: 'claude-code',
    requestedModel: null,
    beforeFingerprint: 'tree',
    id: `receipt-${Math.random().toString(36).slice(2)}`,
    actualModel: null,
    modelFallbackReason: null,
    parentId: 'p',
    childId: 'c',
    spawnMode: 'fresh',
    agent: null,
    status: 'activated',
    afterFingerprint: null,
    changedPaths: [],
    createdAt,
    activatedAt: createdAt,
    sealedAt: null,
    consumedAt: null,
  };
}

await main(async () => {
  const { dueReconcileJobs, DEFAULT_GRACES } = await importSource('src/workers/reconciler.ts');
  const parent = tempDir('reconcile-scan');
  onCleanup(() => fs.rmSync(parent, { recursive: true, force: true }));
  const checkouts = [];
  const now = new Date().toISOString();
  for (let index = 0; index < CHECKOUTS; index += 1) {
    const repo = makeRepo({ label: `c${index}`, parent });
    const run = runningRun(TASK_ID);
    if (index % 4 === 0) run.pendingDelegation = pendingReceipt(TASK_ID, now);
    fs.writeFileSync(repo.runFile, `${JSON.stringify(run, null, 2)}\n`);
    checkouts.push({ id: index.toString(16).padStart(16, '0'), root: repo.root, runFile: repo.runFile });
  }
  const activeDir = (root) => path.join(root, '.agents', 'workspace', 'active');
  const variants = {
    'floor: list active tasks, read and JSON.parse each run file': () => {
      let pending = 0;
      for (const checkout of checkouts) {
        for (const name of fs.readdirSync(activeDir(checkout.root))) {
          const run = JSON.parse(fs.readFileSync(path.join(activeDir(checkout.root), name, 'orchestration.json'), 'utf8'));
          if (run.pendingDelegation) pending += 1;
        }
      }
      return pending;
    },
    'worker scan: dueReconcileJobs on every checkout': () => {
      let due = 0;
      const nowMs = Date.now();
      for (const checkout of checkouts) due += dueReconcileJobs(checkout, DEFAULT_GRACES, nowMs).envelopes.length;
      return due;
    },
  };
  for (const variant of Object.values(variants)) variant(); // warm the page cache and the JIT
  const samples = Object.fromEntries(Object.keys(variants).map((name) => [name, { wall: [], cpu: [] }]));
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [name, variant] of Object.entries(variants)) {
      const cpu = process.cpuUsage();
      const started = process.hrtime.bigint();
      variant();
      samples[name].wall.push(Number(process.hrtime.bigint() - started) / 1e6);
      const used = process.cpuUsage(cpu);
      samples[name].cpu.push((used.user + used.system) / 1000);
    }
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const rows = Object.entries(samples).map(([name, { wall, cpu }]) => ({
    name,
    medianWallMs: Number(median(wall).toFixed(1)),
    medianCpuMs: Number(median(cpu).toFixed(1)),
  }));
  const [floor, scan] = rows;
  const ratio = Number((scan.medianCpuMs / floor.medianCpuMs).toFixed(2));
  const intervalMs = 30_000; // the scan period with the default graces (a quarter of 5 min, at most 30 s)
  const share = Number(((scan.medianCpuMs / intervalMs) * 100).toFixed(2));
  const machine = machineInfo();
  writeResults(
    'reconcileScan',
    { machine, checkouts: CHECKOUTS, rounds: ROUNDS, rows, ratioToFloor: ratio, coreShareAtDefaultGraces: share },
    [
      '# Reconciliation scan: cost per period',
      '',
      `\`node bench/reconcileScan.mjs --checkouts ${CHECKOUTS} --rounds ${ROUNDS}\`: ${CHECKOUTS} checkouts, one run each, a quarter with a pending delegation (none due); median over ${ROUNDS} interleaved rounds.`,
      '',
      '| Pass over every checkout | wall ms | CPU ms |',
      '|---|---|---|',
      ...rows.map((row) => `| ${row.name} | ${row.medianWallMs} | ${row.medianCpuMs} |`),
      '',
      `The worker's scan costs **${ratio}×** the floor of reading the run files; with the default graces it runs every 30 s, **${share}%** of one core at ${CHECKOUTS} checkouts.`,
      '',
      machineMarkdown(machine),
    ].join('\n'),
  );
  process.stdout.write(`${JSON.stringify({ rows, ratio, share })}\n`);
});
