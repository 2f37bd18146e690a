import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LifecycleEvent } from '../../src/core/events.ts';
import { stopCostOf } from '../../src/workers/stageCost.ts';
import { EXAMPLE_USAGE_DIR } from '../support/fixturePaths.ts';

// The worker's reading of the record a stop names: whatever is wrong with it is a note on the
// receipt, never an error (docs/run-view.md "What a stage cost").

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-cost-'));
  dirs.push(dir);
  return dir;
}

function stop(
  usageRecord: string | undefined,
  usageFormat: 'claude-code-transcript' | 'copilot-events' = 'claude-code-transcript',
  childId = 'c1',
): LifecycleEvent {
  return {
    intent: 'hook-stop',
    taskRef: 'auto',
    client: 'claude-code',
    nativeAgent: 'agent-infra-lifecycle-executor',
    childId,
    ...(usageRecord === undefined ? {} : { usageRecord, usageFormat }),
  };
}

describe('stopCostOf', () => {
  it('reads the named record: the figures of the child', async () => {
    const cost = await stopCostOf(stop(path.join(EXAMPLE_USAGE_DIR, 'claude-code-2.1.337', 'subagent-transcript.jsonl')));
    expect(cost).toMatchObject({ read: true, requests: 2, tokens: { input: 201, output: 41 } });
  });

  it('is undefined for an event that is no stop, or a stop naming no record (the engine notes that)', async () => {
    expect(await stopCostOf({ intent: 'advance', taskRef: '01' })).toBeUndefined();
    expect(await stopCostOf(stop(undefined))).toBeUndefined();
  });

  it('notes a record it will not or cannot read, and counts nothing', async () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, 'dir.jsonl'));
    fs.writeFileSync(path.join(dir, 'secret.txt'), 'x');
    const cases: Array<[string, string]> = [
      ['relative/agent.jsonl', 'not an absolute path to a .jsonl record'],
      [path.join(dir, 'secret.txt'), 'not an absolute path to a .jsonl record'],
      [path.join(dir, 'gone.jsonl'), 'no such file on the worker’s machine'],
      [path.join(dir, 'dir.jsonl'), 'not a file'],
    ];
    for (const [file, note] of cases) {
      expect(await stopCostOf(stop(file)), file).toMatchObject({ read: false, note, file, requests: 0, models: [], wallMs: null });
    }
  });

  it('waits for a record the client writes after the stop (copilot-events: the child’s subagent.completed)', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'events.jsonl');
    const child = '4e5a8d08-49bb-4140-99c9-72f18144d45e';
    const lines = fs
      .readFileSync(path.join(EXAMPLE_USAGE_DIR, 'copilot-cli-1.0.102', 'events.jsonl'), 'utf8')
      .trim()
      .split('\n');
    const end = lines.findIndex((line) => line.includes('"subagent.completed"'));
    // Not there yet at the stop; the part before the child's last usage record, then the rest.
    const lastUsage = lines.findLastIndex((line, index) => index < end && line.includes('"session.usage_record"'));
    setTimeout(() => fs.writeFileSync(file, `${lines.slice(0, lastUsage).join('\n')}\n`), 60);
    setTimeout(() => fs.appendFileSync(file, `${lines.slice(lastUsage).join('\n')}\n`), 150);
    const cost = await stopCostOf(stop(file, 'copilot-events', child));
    expect(cost).toMatchObject({ read: true, note: null, requests: 2, tokens: { input: 201, output: 41, cacheRead: 14 } });
  });
});
