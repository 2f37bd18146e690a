// Wraps a hook command to record what a real client sends and what the hook answers: runs
// `<command…>` with the client's stdin, passes its stdout, stderr and exit status through
// unchanged, and appends { event, payload, stdout, stderr, code } as one JSON line to
// <dir>/payloads.jsonl. Usage: node recordHook.mjs <dir> <event> -- <command> [args…]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const [dir, event, separator, command, ...args] = process.argv.slice(2);
if (separator !== '--' || !command) {
  process.stderr.write('usage: recordHook.mjs <dir> <event> -- <command> [args…]\n');
  process.exit(1);
}
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = Buffer.concat(chunks);
const started = Date.now();
const run = spawnSync(command, args, { input, env: process.env, maxBuffer: 16 * 1024 * 1024 });
let payload;
try {
  payload = JSON.parse(input.toString('utf8') || '{}');
} catch {
  payload = { unparsed: input.toString('utf8') };
}
const stdout = run.stdout?.toString('utf8') ?? '';
const stderr = run.stderr?.toString('utf8') ?? '';
const code = run.status ?? 1;
fs.mkdirSync(dir, { recursive: true });
fs.appendFileSync(
  path.join(dir, 'payloads.jsonl'),
  `${JSON.stringify({ event, at: started, ms: Date.now() - started, payload, stdout, stderr, code })}\n`,
);
process.stdout.write(stdout);
process.stderr.write(stderr);
process.exit(code);
