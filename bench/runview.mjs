// Benchmark: what the run view costs the worker. Enqueue → applied latency (same method as
// bench/latency.mjs: in-process RepositoryQueueClient, a real `baton worker --dashboard` process,
// alternately `pause` and `begin-or-resume` of one task) under three conditions, measured in the
// same run against the same worker, in interleaved blocks so that drift hits every condition:
//   baseline   nobody looks at the dashboard;
//   run-stream the run page's server-sent events read without a browser (the dashboard's own cost);
//   run-page   headless Chromium shows /runs/<repo>/<task> (server-sent events: the dashboard,
//              inside the worker process, re-renders the page after every event);
//   runs-list  headless Chromium shows /runs (re-listed every poll).
// Ratios are against the baseline of this run. Chromium shares the machine's cores with the worker,
// so the figures include the browser's own cost.
//
//   npm run build && node bench/runview.mjs [--events 1200] [--blocks 4] [--warmup 30]
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import {
  PROJECT_ROOT,
  TASK_ID,
  flags,
  importSource,
  machineInfo,
  machineMarkdown,
  main,
  makeRepo,
  onCleanup,
  round,
  runningRun,
  startRedis,
  startWorker,
  summarize,
  table,
  writeResults,
  writeRun,
} from './lib.mjs';

const options = flags();
const EVENTS = Number(options.events ?? 1200);
const BLOCKS = Number(options.blocks ?? 4);
const WARMUP = Number(options.warmup ?? 30);
const CONDITIONS = ['baseline', 'run-stream', 'run-page', 'runs-list'];
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/**
 * Like lib.mjs's snapshotBuild, but inside the project (node_modules/.cache): the dashboard loads
 * bull-board's UI files from node_modules at run time, which a copy in /tmp cannot find.
 */
function snapshotInsideProject() {
  const dir = path.join(PROJECT_ROOT, 'node_modules', '.cache', `baton-bench-runview-${process.pid}`);
  fs.rmSync(dir, { recursive: true, force: true });
  onCleanup(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.cpSync(path.join(PROJECT_ROOT, 'bin'), path.join(dir, 'bin'), { recursive: true });
  fs.cpSync(path.join(PROJECT_ROOT, 'dist'), path.join(dir, 'dist'), { recursive: true });
  const hash = createHash('sha256');
  for (const name of fs.readdirSync(path.join(dir, 'dist'), { recursive: true }).map(String).sort()) {
    if (name.endsWith('.mjs')) hash.update(name).update(fs.readFileSync(path.join(dir, 'dist', name)));
  }
  return { bin: path.join(dir, 'bin', 'baton.mjs'), bundleHash: hash.digest('hex').slice(0, 12) };
}

await main(async () => {
  if (!fs.existsSync(CHROMIUM))
    throw new Error(`the run view benchmark needs Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM)`);
  const build = snapshotInsideProject();
  const redis = await startRedis();
  const { RepositoryQueueClient } = await importSource('src/queue/client.ts');
  const { envelopeFor } = await importSource('src/queue/envelope.ts');
  const { randomEventId } = await importSource('src/queue/eventIds.ts');
  const { repoIdentity } = await importSource('src/queue/checkoutId.ts');
  const { chromium } = await import('playwright-core');

  const repo = makeRepo({ label: 'runview', git: true });
  writeRun(repo.runFile, runningRun());
  const prefix = `bench-runview-${process.pid}`;
  const env = { ...process.env, REDIS_URL: redis.url, BATON_PREFIX: prefix };
  const worker = await startWorker(build.bin, ['--repo', repo.root, '--dashboard', '--port', '0'], { env });
  const url = /dashboard:? +(http:\/\/[^\s/]+\/)/.exec(worker.output())?.[1];
  if (!url) throw new Error(`no dashboard URL in the worker's output:\n${worker.output()}`);
  const identity = repoIdentity(repo.root);
  const client = await RepositoryQueueClient.connect({ redisUrl: redis.url, prefix }, identity, 2_000);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });

  let sequence = 0;
  async function applyOne() {
    const index = sequence++;
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
    if (outcome.kind !== 'completed' || outcome.value.status !== expected)
      throw new Error(`event ${index}: expected ${expected}, got ${JSON.stringify(outcome)}`);
    return elapsed;
  }

  /** Opens the page and counts the live updates it receives. */
  async function watch(pathname) {
    const page = await browser.newPage();
    await page.goto(new URL(pathname, url).toString(), { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('body[data-live="connected"]', { timeout: 10_000 });
    await page.evaluate(() => {
      globalThis.__updates = 0;
      new MutationObserver(() => (globalThis.__updates += 1)).observe(document.body, {
        attributes: true,
        attributeFilter: ['data-updated'],
      });
    });
    return {
      async close() {
        const updates = await page.evaluate(() => globalThis.__updates);
        await page.close();
        return updates;
      },
    };
  }

  /** The run page's event stream read without a browser: the dashboard's own cost, no Chromium. */
  async function stream(pathname) {
    const controller = new AbortController();
    const response = await fetch(new URL(pathname, url), { signal: controller.signal });
    if (!response.ok || !response.body) throw new Error(`GET ${pathname}: ${response.status}`);
    let updates = 0;
    let ready;
    const connected = new Promise((resolve) => (ready = resolve));
    const reading = (async () => {
      const decoder = new TextDecoder();
      let text = '';
      try {
        for await (const chunk of response.body) {
          text += decoder.decode(chunk, { stream: true });
          if (text.includes('event: ready')) ready();
          updates += text.split('event: update').length - 1;
          text = text.slice(text.lastIndexOf('\n\n') + 1);
        }
      } catch {
        // aborted
      }
    })();
    await connected;
    return {
      async close() {
        controller.abort();
        await reading;
        return updates;
      },
    };
  }

  const samples = Object.fromEntries(CONDITIONS.map((condition) => [condition, []]));
  const updates = Object.fromEntries(CONDITIONS.map((condition) => [condition, 0]));
  const perBlock = Math.ceil(EVENTS / BLOCKS);
  try {
    for (let block = 0; block < BLOCKS; block += 1) {
      // Rotate the order of conditions from block to block.
      const order = CONDITIONS.map((_, index) => CONDITIONS[(index + block) % CONDITIONS.length]);
      for (const condition of order) {
        const runPath = `/runs/${identity.id}/${TASK_ID}`;
        const watcher =
          condition === 'run-page'
            ? await watch(runPath)
            : condition === 'runs-list'
              ? await watch('/runs')
              : condition === 'run-stream'
                ? await stream(`${runPath}/events`)
                : null;
        for (let index = 0; index < WARMUP; index += 1) await applyOne();
        for (let index = 0; index < perBlock; index += 1) samples[condition].push(await applyOne());
        if (watcher) updates[condition] += await watcher.close();
        process.stderr.write(`runview bench: block ${block + 1}/${BLOCKS} ${condition} done\n`);
      }
    }
  } finally {
    await browser.close();
    await client.close();
    await worker.stop('SIGTERM');
  }

  const summaries = Object.fromEntries(CONDITIONS.map((condition) => [condition, summarize(samples[condition])]));
  const base = summaries.baseline;
  const ratio = (summary, key) => round(summary[key] / base[key], 3);
  const phases = CONDITIONS.map((condition) => ({
    condition,
    events: samples[condition].length,
    pageUpdates: updates[condition],
    latencyMs: summaries[condition],
    ratioToBaseline: {
      p50: ratio(summaries[condition], 'p50'),
      mean: ratio(summaries[condition], 'mean'),
      p90: ratio(summaries[condition], 'p90'),
      p99: ratio(summaries[condition], 'p99'),
    },
  }));
  const machine = machineInfo();
  const command = `npm run build && node bench/runview.mjs${EVENTS !== 1200 ? ` --events ${EVENTS}` : ''}${BLOCKS !== 4 ? ` --blocks ${BLOCKS}` : ''}`;
  const json = {
    benchmark: 'runview',
    question: 'does a browser watching the run view slow the worker down? enqueue → applied latency with and without it',
    command,
    machine: { ...machine, redis: redis.version, bundle: build.bundleHash, chromium: browser.version?.() ?? 'unknown' },
    blocks: BLOCKS,
    warmupPerBlock: WARMUP,
    phases,
  };
  const rows = phases.map((phase) => [
    phase.condition,
    phase.events,
    phase.pageUpdates,
    phase.latencyMs.p50,
    phase.latencyMs.mean,
    phase.latencyMs.p90,
    phase.latencyMs.p99,
    phase.latencyMs.max,
    `${phase.ratioToBaseline.p50} / ${phase.ratioToBaseline.p90} / ${phase.ratioToBaseline.p99}`,
  ]);
  const markdown = `# Run view: enqueue → applied latency with and without a browser watching

Does the run view cost the worker anything? ${EVENTS} events per condition (after ${WARMUP} warm-up
events per block), one at a time, alternately \`pause\` and \`begin-or-resume\` of one task, each
applied by a real \`baton worker --dashboard\` process (the dashboard, and so the run view's
server-sent events, run inside the worker process). The caller is in process and uses
\`RepositoryQueueClient\` as \`baton task\` does. Conditions run in ${BLOCKS} interleaved blocks
(order rotated per block) against the same worker and Redis:

- **baseline**: nobody watches;
- **run-stream**: a client in the benchmark process reads the run page's event stream (what the
  page's \`EventSource\` receives), with no browser: the dashboard's own cost;
- **run-page**: headless Chromium shows the task's run page, which follows every change
  (the page-updates column counts the re-rendered pages the browser received);
- **runs-list**: headless Chromium shows \`/runs\`.

Chromium runs on the same ${machine.cores} cores as the worker and Redis, so its own cost is included.

Reproduce: \`${command}\`

## Latency (ms) and ratio to the baseline of this run

${table(['condition', 'events', 'page updates', 'p50', 'mean', 'p90', 'p99', 'max', 'ratio p50 / p90 / p99'], rows)}

${machineMarkdown(machine, { redis: redis.version, bundle: build.bundleHash })}
`;
  writeResults('runview', json, markdown);
});
