// What tracing costs the hook (docs/architecture.md "Traces"): CPU time (user + system, from
// /usr/bin/time, which a loaded machine stretches far less than wall time) and wall time of
// `baton hook claude-code` SubagentStop that only enqueues (no worker), for an earlier build with
// tracing off, this build with tracing off, and this build with OTEL_EXPORTER_OTLP_ENDPOINT set
// (a local OTLP receiver that answers at once), interleaved in rotating order. Goal: with tracing
// off, no slower than the build before.
//
//   npm run build && node bench/hookTracing.mjs --before DIR [--before-label TEXT] [--runs 40]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import {
  PROJECT_ROOT,
  flags,
  machineInfo,
  machineMarkdown,
  main,
  makeRepo,
  round,
  startRedis,
  summarize,
  table,
  writeResults,
} from './lib.mjs';

const options = flags();
const RUNS = Number(options.runs ?? 40);
const WARMUP = 3;
if (!options.before) throw new Error('--before DIR (an earlier build: a DIR holding bin/ and dist/) is required');

/** One hook run under /usr/bin/time: exit code, CPU ms, wall ms. */
function timedHook(bin, env, cwd, input) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('/usr/bin/time', ['-f', '%U %S', process.execPath, bin, 'hook', 'claude-code'], {
      env,
      cwd,
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const [user, system] = stderr.trim().split('\n').at(-1).split(' ').map(Number);
      resolve({ code, cpu: (user + system) * 1000, wall: performance.now() - started, stderr });
    });
    child.stdin.end(input);
  });
}

await main(async () => {
  const redis = await startRedis();
  const repo = makeRepo({ label: 'hook-tracing', git: true });
  const stop = JSON.parse(
    fs.readFileSync(path.join(PROJECT_ROOT, 'test', 'fixtures', 'hooks', 'claude-code', 'SubagentStop.json'), 'utf8'),
  );
  const input = JSON.stringify({ ...stop, cwd: repo.root });
  let spans = 0;
  const receiver = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      spans += 1;
      response.end('{}');
    });
  });
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const env = { ...process.env, REDIS_URL: redis.url, BATON_PREFIX: `bench-tracing-${process.pid}` };
  for (const key of Object.keys(env)) if (key.startsWith('OTEL_')) delete env[key];
  const label = options['before-label'] ?? path.basename(path.resolve(options.before));
  const variants = [
    { key: 'before-off', name: `before (${label}), tracing off`, bin: path.join(path.resolve(options.before), 'bin', 'baton.mjs'), env },
    { key: 'after-off', name: 'this build, tracing off', bin: path.join(PROJECT_ROOT, 'bin', 'baton.mjs'), env },
    {
      key: 'after-on',
      name: 'this build, OTEL_EXPORTER_OTLP_ENDPOINT set',
      bin: path.join(PROJECT_ROOT, 'bin', 'baton.mjs'),
      env: { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.address().port}` },
    },
  ];
  const samples = Object.fromEntries(variants.map((variant) => [variant.key, { cpu: [], wall: [] }]));
  for (let index = 0; index < RUNS + WARMUP; index += 1) {
    process.stderr.write(`hook tracing bench: round ${index + 1}/${RUNS + WARMUP}\r`);
    for (let offset = 0; offset < variants.length; offset += 1) {
      const variant = variants[(index + offset) % variants.length];
      const run = await timedHook(variant.bin, variant.env, repo.root, input);
      if (run.code !== 0) throw new Error(`${variant.name}: exit ${run.code}: ${run.stderr}`);
      if (index >= WARMUP) {
        samples[variant.key].cpu.push(run.cpu);
        samples[variant.key].wall.push(run.wall);
      }
    }
  }
  receiver.close();
  const stats = Object.fromEntries(
    variants.map(({ key }) => [key, { cpu: summarize(samples[key].cpu), wall: summarize(samples[key].wall) }]),
  );
  const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const cpuMean = Object.fromEntries(variants.map(({ key }) => [key, mean(samples[key].cpu)]));
  const rows = variants.map(({ key, name }) => [
    name,
    String(round(cpuMean[key], 1)),
    String(round(stats[key].cpu.p50, 1)),
    String(round(stats[key].wall.p50, 1)),
    String(round(stats[key].wall.p90, 1)),
    String(round(stats[key].wall.min, 1)),
  ]);
  const info = machineInfo();
  const markdown = `# What tracing costs the hook

\`baton hook claude-code\` SubagentStop, enqueue only (no worker), ${RUNS} runs of each variant after
${WARMUP} warm-up rounds, interleaved in rotating order; CPU is user + system time of the process
(/usr/bin/time, 10 ms resolution per run, so the mean is the figure to read). The OTLP receiver is
local and answers at once (it received ${spans} spans: every traced run, warm-up included).

Reproduce: \`npm run build && node bench/hookTracing.mjs --before DIR --runs ${RUNS}\`

${table(['variant', 'CPU mean (ms)', 'CPU p50 (ms)', 'wall p50 (ms)', 'wall p90 (ms)', 'wall min (ms)'], rows)}

Tracing off against the build before: CPU ${round(cpuMean['after-off'] / cpuMean['before-off'], 2)}×, wall p50
${round(stats['after-off'].wall.p50 / stats['before-off'].wall.p50, 2)}×. Tracing on against off: CPU
+${round(cpuMean['after-on'] - cpuMean['after-off'], 1)} ms.

${machineMarkdown(info)}`;
  writeResults('hookTracing', { runs: RUNS, before: label, spans, cpuMean, stats, machine: info }, markdown);
});
