// Refreshes test/support/fileDurations.json, the durations the test sequencer
// (test/support/longestFirst.ts) orders files by on a checkout that has no vitest cache yet (a fresh
// clone, CI): from a JSON report of a whole run,
//   npx vitest run --reporter=default --reporter=json --outputFile=timing.json
//   node scripts/fileDurations.mjs timing.json
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const report = process.argv[2];
if (!report) {
  process.stderr.write('usage: node scripts/fileDurations.mjs <vitest JSON report>\n');
  process.exit(2);
}
const { testResults } = JSON.parse(readFileSync(report, 'utf8'));
const durations = Object.fromEntries(
  testResults
    .map((file) => [path.relative(root, file.name).split(path.sep).join('/'), Math.round((file.endTime - file.startTime) / 100) / 10])
    .sort(([a], [b]) => (a < b ? -1 : 1)),
);
writeFileSync(path.join(root, 'test/support/fileDurations.json'), `${JSON.stringify(durations, null, 2)}\n`);
process.stdout.write(`test/support/fileDurations.json: ${Object.keys(durations).length} files\n`);
