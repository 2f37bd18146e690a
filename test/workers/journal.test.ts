import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventJournal } from '../../src/workers/journal.ts';
import type { EngineOutcome } from '../../src/core/engine.ts';
import type { OrchestrationResult } from '../../src/core/types.ts';

// EventJournal.apply: effectively-once application of an event's run-file writes.

let root: string;
let workspace: string;
let journal: EventJournal;
const runFile = () => path.join(workspace, 'active', 'TASK-20260101-000001', 'orchestration.json');

const result = (status: 'running' | 'paused'): OrchestrationResult => ({
  status,
  changed: true,
  taskId: 'TASK-20260101-000001',
  run: null,
  next: null,
  error: null,
});
const outcome = (content: string, status: 'running' | 'paused' = 'running'): EngineOutcome => ({
  result: result(status),
  writes: [{ path: runFile(), content }],
});

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-journal-'));
  workspace = path.join(root, '.agents', 'workspace');
  fs.mkdirSync(path.dirname(runFile()), { recursive: true });
  journal = new EventJournal(path.join(root, '.git', 'baton', 'journal'), workspace);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

function recordFile(eventId: string) {
  return path.join(root, '.git', 'baton', 'journal', `${eventId}.json`);
}

describe('EventJournal.apply', () => {
  /** How often the journal computed an outcome (it must not, for a duplicate). */
  let computed = 0;
  const counted = (compute: () => EngineOutcome) => async () => {
    computed += 1;
    return compute();
  };
  beforeEach(() => {
    computed = 0;
  });

  it('applies once; a second delivery returns the first result without computing again', async () => {
    const first = await journal.apply(
      'c-1',
      counted(() => outcome('one\n')),
    );
    expect(first).toEqual({ result: result('running'), replayed: false });
    expect(fs.readFileSync(runFile(), 'utf8')).toBe('one\n');
    fs.writeFileSync(runFile(), 'later\n');
    const second = await journal.apply(
      'c-1',
      counted(() => outcome('two\n', 'paused')),
    );
    expect(second).toEqual({ result: result('running'), replayed: true });
    expect(computed).toBe(1);
    expect(fs.readFileSync(runFile(), 'utf8')).toBe('later\n');
  });

  it('a native event is a duplicate only while it targets the same receipt; another target is applied as a new event, once', async () => {
    const first = await journal.apply(
      'h-1',
      counted(() => outcome('one\n')),
      'hook-start',
      'receipt-1',
    );
    expect(first.replayed).toBe(false);
    expect(JSON.parse(fs.readFileSync(recordFile('h-1'), 'utf8')).target).toBe('receipt-1');
    expect(
      (
        await journal.apply(
          'h-1',
          counted(() => outcome('x\n')),
          'hook-start',
          'receipt-1',
        )
      ).replayed,
    ).toBe(true);
    expect(computed).toBe(1);
    const other = await journal.apply(
      'h-1',
      counted(() => outcome('two\n', 'paused')),
      'hook-start',
      'receipt-2',
    );
    expect(other).toEqual({ result: result('paused'), replayed: false });
    expect(fs.readFileSync(runFile(), 'utf8')).toBe('two\n');
    const again = await journal.apply(
      'h-1',
      counted(() => outcome('three\n')),
      'hook-start',
      'receipt-2',
    );
    expect(again).toEqual({ result: result('paused'), replayed: true });
    expect(computed).toBe(2);
    expect(
      fs
        .readdirSync(path.dirname(recordFile('h-1')))
        .filter((name) => name.startsWith('h-1.'))
        .sort(),
    ).toEqual([expect.stringMatching(/^h-1\.[0-9a-f]{16}\.json$/), 'h-1.json']);
  });

  it('records events that write nothing, too', async () => {
    await journal.apply('c-2', async () => ({ result: result('running'), writes: [] }));
    expect(JSON.parse(fs.readFileSync(recordFile('c-2'), 'utf8')).state).toBe('done');
  });

  it('finishes a record left pending by a crash before the write', async () => {
    fs.writeFileSync(runFile(), 'old\n');
    const before = (await import('node:crypto')).createHash('sha256').update('old\n').digest('hex');
    fs.mkdirSync(path.dirname(recordFile('c-3')), { recursive: true });
    fs.writeFileSync(
      recordFile('c-3'),
      JSON.stringify({
        v: 1,
        eventId: 'c-3',
        state: 'pending',
        recordedAt: 'x',
        result: result('paused'),
        writes: [{ path: runFile(), content: 'new\n', beforeSha256: before }],
      }),
    );
    const replay = await journal.apply('c-3', async () => {
      throw new Error('must not recompute');
    });
    expect(replay).toEqual({ result: result('paused'), replayed: true });
    expect(fs.readFileSync(runFile(), 'utf8')).toBe('new\n');
    expect(JSON.parse(fs.readFileSync(recordFile('c-3'), 'utf8')).state).toBe('done');
  });

  it('leaves a file already holding the new content alone (crash after the write)', async () => {
    fs.writeFileSync(runFile(), 'new\n');
    const inode = fs.statSync(runFile()).ino;
    fs.mkdirSync(path.dirname(recordFile('c-4')), { recursive: true });
    fs.writeFileSync(
      recordFile('c-4'),
      JSON.stringify({
        v: 1,
        eventId: 'c-4',
        state: 'pending',
        recordedAt: 'x',
        result: result('running'),
        writes: [{ path: runFile(), content: 'new\n', beforeSha256: null }],
      }),
    );
    await journal.apply('c-4', async () => {
      throw new Error('must not recompute');
    });
    expect(fs.statSync(runFile()).ino).toBe(inode);
  });

  it('does not overwrite state that moved on since, and says so', async () => {
    fs.writeFileSync(runFile(), 'moved on\n');
    fs.mkdirSync(path.dirname(recordFile('c-5')), { recursive: true });
    fs.writeFileSync(
      recordFile('c-5'),
      JSON.stringify({
        v: 1,
        eventId: 'c-5',
        state: 'pending',
        recordedAt: 'x',
        result: result('running'),
        writes: [{ path: runFile(), content: 'new\n', beforeSha256: 'f'.repeat(64) }],
      }),
    );
    const replay = await journal.apply('c-5', async () => {
      throw new Error('must not recompute');
    });
    expect(replay.result.warnings?.[0]).toContain('run state has changed since');
    expect(fs.readFileSync(runFile(), 'utf8')).toBe('moved on\n');
  });

  it('refuses to write outside the workspace, even from a tampered record', async () => {
    await expect(
      journal.apply('c-6', async () => ({ result: result('running'), writes: [{ path: path.join(root, 'evil.txt'), content: 'x' }] })),
    ).rejects.toThrow(/outside/);
    expect(fs.existsSync(path.join(root, 'evil.txt'))).toBe(false);
    fs.writeFileSync(
      recordFile('c-7'),
      JSON.stringify({
        v: 1,
        eventId: 'c-7',
        state: 'pending',
        recordedAt: 'x',
        result: result('running'),
        writes: [{ path: '/tmp/evil-baton.txt', content: 'x', beforeSha256: null }],
      }),
    );
    await expect(journal.apply('c-7', async () => outcome('y'))).rejects.toThrow(/outside/);
    expect(fs.existsSync('/tmp/evil-baton.txt')).toBe(false);
  });

  it('a corrupt record is an error naming the file, not a silent re-apply', async () => {
    fs.writeFileSync(recordFile('c-8'), '{nope');
    await expect(journal.apply('c-8', async () => outcome('z'))).rejects.toThrow(/journal record .* is corrupt/);
  });

  it('prune removes records older than the window', async () => {
    await journal.apply('c-9', async () => outcome('a'));
    await journal.apply('c-10', async () => outcome('b'));
    const old = new Date(Date.now() - 10 * 24 * 3600 * 1000);
    fs.utimesSync(recordFile('c-9'), old, old);
    expect(journal.prune(7 * 24 * 3600 * 1000)).toBe(1);
    expect(fs.existsSync(recordFile('c-9'))).toBe(false);
    expect(fs.existsSync(recordFile('c-10'))).toBe(true);
  });
});
