#!/usr/bin/env node
// Keeps the pinned agent clients honest (run by hand, not in CI: it asks the package registry).
// baton pins the newest and the oldest supported version of each agent client as dev dependencies
// (docs/clients.md): the newest under its own name, the oldest under an alias `<name>-oldest`. This
// compares them with what the registry serves and says what to update:
//   node scripts/check-client-pins.mjs          # exit 1 when a newer client is out or a pin is gone
//   node scripts/check-client-pins.mjs --json   # the same as JSON
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const dev = pkg.devDependencies ?? {};

/**
 * The agent clients baton pins: registry name → the alias of its oldest pin; null where the newest
 * pin is also the oldest supported (Copilot CLI: 1.0.102 is the first release whose subagentStart
 * names the child, docs/clients.md), so a newer release is pinned beside it as `<name>-oldest`.
 */
const CLIENTS = [
  { id: 'claude-code', name: '@anthropic-ai/claude-code', oldestAlias: 'claude-code-oldest' },
  { id: 'codex', name: '@openai/codex', oldestAlias: 'codex-oldest' },
  { id: 'copilot-cli', name: '@github/copilot', oldestAlias: null, futureOldestAlias: 'copilot-oldest' },
];

function pinnedVersion(spec, name) {
  if (!spec) return null;
  const alias = `npm:${name}@`;
  return spec.startsWith(alias) ? spec.slice(alias.length) : spec;
}

function parts(version) {
  return version
    .split('-')[0]
    .split('.')
    .map((part) => Number.parseInt(part, 10) || 0);
}

function compare(a, b) {
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const diff = (x[i] ?? 0) - (y[i] ?? 0);
    if (diff !== 0) return Math.sign(diff);
  }
  return 0;
}

/** What the registry says of one package, through npm's own client (its registry, auth and proxy settings). */
function registry(name) {
  const out = execFileSync('npm', ['view', name, 'dist-tags', 'versions', 'time', '--json'], { cwd: root, encoding: 'utf8' });
  const data = JSON.parse(out);
  return { latest: data['dist-tags']?.latest ?? null, versions: data.versions ?? [], time: data.time ?? {} };
}

const rows = [];
for (const client of CLIENTS) {
  const newest = pinnedVersion(dev[client.name], client.name);
  const oldest = client.oldestAlias ? pinnedVersion(dev[client.oldestAlias], client.name) : newest;
  const served = registry(client.name);
  const advice = [];
  if (!newest) advice.push(`pin ${client.name} as a dev dependency`);
  else if (served.latest && compare(served.latest, newest) > 0) {
    const newer = served.versions.filter((v) => !v.includes('-') && compare(v, newest) > 0);
    advice.push(
      `newer ${client.name}: ${served.latest} (released ${served.time[served.latest] ?? '?'}; ${newer.length} release(s) after the pin): ` +
        `npm install --save-dev --save-exact ${client.name}@${served.latest}, then run test/agents and update docs/clients.md`,
    );
    if (!client.oldestAlias)
      advice.push(
        `the pin ${newest} is also the oldest supported: keep it as ${client.futureOldestAlias} (npm install --save-dev --save-exact ${client.futureOldestAlias}@npm:${client.name}@${newest})`,
      );
  }
  if (!oldest) advice.push(`pin the oldest supported ${client.name} as ${client.oldestAlias}`);
  else if (client.oldestAlias && !served.versions.includes(oldest))
    advice.push(`the oldest pin ${client.name}@${oldest} is no longer served: pick another`);
  if (newest && !served.versions.includes(newest)) advice.push(`the newest pin ${client.name}@${newest} is not served by the registry`);
  rows.push({ client: client.id, package: client.name, newestPinned: newest, oldestPinned: oldest, registryLatest: served.latest, advice });
}

if (process.argv.includes('--json')) {
  process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
} else {
  for (const row of rows) {
    const state = row.advice.length === 0 ? 'up to date' : 'to update';
    console.log(
      `${row.client} (${row.package}): newest pinned ${row.newestPinned ?? '-'}, oldest pinned ${row.oldestPinned ?? '-'}, registry latest ${row.registryLatest ?? '-'}: ${state}`,
    );
    for (const line of row.advice) console.log(`  - ${line}`);
  }
}
process.exitCode = rows.some((row) => row.advice.length > 0) ? 1 : 0;
