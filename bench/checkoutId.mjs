// What the checkout id costs the hook (docs/teams.md "Cost"): the hook used to name the queue after
// sha256(realpath); now it reads <gitdir>/baton/checkout.json (repoIdentity). Both are measured in
// one process, interleaved in rounds, on a real checkout whose id already exists (the hook's case).
//
//   node bench/checkoutId.mjs [--calls 20000] [--rounds 7]
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { flags, importSource, machineInfo, machineMarkdown, main, writeResults } from './lib.mjs';

const options = flags();
const CALLS = Number(options.calls ?? 20_000);
const ROUNDS = Number(options.rounds ?? 7);

await main(async () => {
  const { repoIdentity } = await importSource('src/queue/checkoutId.ts');
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-bench-checkout-')));
  try {
    fs.mkdirSync(path.join(root, '.git'));
    repoIdentity(root); // the id exists from now on, as for every hook after the first command
    const variants = {
      'path hash (before: realpath + sha256)': () => createHash('sha256').update(fs.realpathSync.native(root)).digest('hex').slice(0, 16),
      'checkout id (now: realpath + read checkout.json + hostname)': () => repoIdentity(root).id,
    };
    const samples = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [name, variant] of Object.entries(variants)) {
        const started = process.hrtime.bigint();
        for (let call = 0; call < CALLS; call += 1) variant();
        samples[name].push(Number(process.hrtime.bigint() - started) / CALLS / 1000);
      }
    }
    const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    const rows = Object.entries(samples).map(([name, values]) => ({ name, medianMicroseconds: Number(median(values).toFixed(2)) }));
    const [before, now] = rows;
    const extra = Number((now.medianMicroseconds - before.medianMicroseconds).toFixed(2));
    const machine = machineInfo();
    writeResults(
      'checkoutId',
      { machine, calls: CALLS, rounds: ROUNDS, rows, extraMicrosecondsPerHook: extra },
      [
        '# Checkout id: cost per hook',
        '',
        `\`node bench/checkoutId.mjs --calls ${CALLS} --rounds ${ROUNDS}\`: median over ${ROUNDS} rounds of ${CALLS} calls each.`,
        '',
        '| Identity | µs per call |',
        '|---|---|',
        ...rows.map((row) => `| ${row.name} | ${row.medianMicroseconds} |`),
        '',
        `The checkout id costs the hook **${extra} µs** more per event (a hook process takes tens of milliseconds to start).`,
        '',
        machineMarkdown(machine),
      ].join('\n'),
    );
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
