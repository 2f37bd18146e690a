import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeInterruptedWrites } from '../../src/base/atomicFile.ts';
import type { OrchestrationResult } from '../../src/core/types.ts';
import { EventJournal } from '../../src/workers/journal.ts';

// The journal changes made for the chaos suite and the throughput benchmark: interrupted atomic
// writes are cleaned up (test/chaos/interruptedWrite.test.ts is the end-to-end regression test),
// and `done` is marked in place, leaving a valid record and no temp file.

let root: string;
let workspace: string;
let journalDir: string;
let journal: EventJournal;
const runFile = () => path.join(workspace, 'active', 'TASK-20260101-000001', 'orchestration.json');
const result: OrchestrationResult = {
  status: 'running',
  changed: true,
  taskId: 'TASK-20260101-000001',
  run: null,
  next: null,
  error: null,
};

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-journal-faults-'));
  workspace = path.join(root, '.agents', 'workspace');
  fs.mkdirSync(path.dirname(runFile()), { recursive: true });
  journalDir = path.join(root, '.git', 'baton', 'journal');
  journal = new EventJournal(journalDir, workspace);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('marking an event done', () => {
  it('rewrites only the state token: the record stays valid JSON, in the same file, with no temp file', async () => {
    let inode = 0;
    await journal.apply('c-1', async () => {
      return { result, writes: [{ path: runFile(), content: 'one\n' }] };
    });
    const file = path.join(journalDir, 'c-1.json');
    inode = fs.statSync(file).ino;
    const record = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(record).toMatchObject({ v: 1, eventId: 'c-1', state: 'done', result });
    expect(fs.readdirSync(journalDir)).toEqual(['c-1.json']);
    // A redelivery reads it as done and returns the first result without touching anything.
    expect(
      await journal.apply('c-1', async () => {
        throw new Error('must not recompute');
      }),
    ).toEqual({ result, replayed: true });
    expect(fs.statSync(file).ino).toBe(inode);
  });

  it('finishes a pending record written by someone else (any key order or spacing)', async () => {
    for (const [eventId, text] of [
      ['c-2', (w: unknown) => JSON.stringify({ state: 'pending', v: 1, eventId: 'c-2', recordedAt: 'x', result, writes: w })],
      ['c-3', (w: unknown) => JSON.stringify({ v: 1, eventId: 'c-3', state: 'pending', recordedAt: 'x', result, writes: w }, null, 2)],
    ] as const) {
      fs.writeFileSync(path.join(journalDir, `${eventId}.json`), text([{ path: runFile(), content: `${eventId}\n`, beforeSha256: null }]));
      fs.rmSync(runFile(), { force: true });
      await journal.apply(eventId, async () => {
        throw new Error('must not recompute');
      });
      expect(fs.readFileSync(runFile(), 'utf8')).toBe(`${eventId}\n`);
      expect(JSON.parse(fs.readFileSync(path.join(journalDir, `${eventId}.json`), 'utf8')).state).toBe('done');
    }
  });
});

describe('interrupted atomic writes', () => {
  it('removeInterruptedWrites removes only the temp files writeFileAtomic makes for that file', () => {
    const dir = path.dirname(runFile());
    const ours = [`orchestration.json.${randomUUID()}.tmp`, `orchestration.json.${randomUUID()}.tmp`];
    const others = [
      'orchestration.json',
      'orchestration.json.bak',
      'orchestration.json.123.4567.tmp',
      `task.md.${randomUUID()}.tmp`,
      `orchestration.jsonx.${randomUUID()}.tmp`,
    ];
    for (const name of [...ours, ...others]) fs.writeFileSync(path.join(dir, name), 'x');
    expect(removeInterruptedWrites(runFile()).sort()).toEqual([...ours].sort());
    expect(fs.readdirSync(dir).sort()).toEqual([...others].sort());
  });

  it('prune removes temp files of interrupted record writes once they are a minute old, and only then', () => {
    const fresh = path.join(journalDir, `c-4.json.${randomUUID()}.tmp`);
    const stale = path.join(journalDir, `c-5.json.${randomUUID()}.tmp`);
    fs.writeFileSync(fresh, '{');
    fs.writeFileSync(stale, '{');
    const old = new Date(Date.now() - 5 * 60_000);
    fs.utimesSync(stale, old, old);
    journal.prune(7 * 24 * 3600 * 1000);
    expect(fs.existsSync(fresh)).toBe(true);
    expect(fs.existsSync(stale)).toBe(false);
  });
});
