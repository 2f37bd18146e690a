// A hook command that records the payload a real client sends (for test/fixtures/hooks/<client>-<version>/
// and for assertions): appends stdin as one JSON line to <dir>/payloads.jsonl and prints nothing.
import fs from 'node:fs';
import path from 'node:path';

const dir = process.argv[2];
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const text = Buffer.concat(chunks).toString('utf8').trim();
fs.mkdirSync(dir, { recursive: true });
fs.appendFileSync(path.join(dir, 'payloads.jsonl'), `${JSON.stringify({ argv: process.argv.slice(3), at: Date.now(), payload: JSON.parse(text || '{}') })}\n`);
