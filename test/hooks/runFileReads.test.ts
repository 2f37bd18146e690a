import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { batonDir, spoolDir } from '../../src/base/batonDir.ts';
import { RUN_FILE_NAME, runFilePath } from '../../src/core/taskLayout.ts';
import { nativePayload } from '../../src/demo/driver.ts';
import { handleHook } from '../../src/hooks/handle.ts';
import { spooledFiles } from '../../src/queue/spool.ts';
import { processJobData, servedRepository } from '../../src/workers/processor.ts';
import { TASK_ID, TASK_ID_2, engineHarness, fakeFingerprinter, readRun, tempRepo, writeTask } from '../support/fixtures.ts';
import type { Fixture } from '../support/fixtures.ts';

// One native hook event reads each active run file once on each side: the hook, for the delegation
// the event targets (part of its id), and the worker, for the journal's duplicate check and for
// applying the event, through one run transaction
// (docs/architecture.md "One hook event through the files").
// Counted at the file system: every read of an orchestration.json while the event passes.

const TASK_ID_3 = 'TASK-20260101-000003';
let fixture: Fixture;
const savedEnv = { ...process.env };

beforeEach(() => {
  fixture = tempRepo();
  // No Redis for the hook: the event is spooled, and the worker's side takes it from the spool.
  delete process.env.REDIS_URL;
  delete process.env.BATON_PREFIX;
});

afterEach(() => {
  vi.restoreAllMocks();
  process.env = { ...savedEnv };
  fixture.cleanup();
});

/** Counts the reads of every run file while `work` runs: run file → number of reads. */
async function runFileReads(work: () => Promise<unknown>): Promise<Map<string, number>> {
  const reads = new Map<string, number>();
  const readFileSync = fs.readFileSync;
  const spy = vi.spyOn(fs, 'readFileSync').mockImplementation(((file: fs.PathOrFileDescriptor, options?: unknown) => {
    if (typeof file === 'string' && path.basename(file) === RUN_FILE_NAME) reads.set(file, (reads.get(file) ?? 0) + 1);
    return readFileSync(file, options as never);
  }) as typeof fs.readFileSync);
  try {
    await work();
  } finally {
    spy.mockRestore();
  }
  return reads;
}

describe('one hook event', () => {
  it('reads each active run file once in the hook and once in the worker', async () => {
    const engine = engineHarness(fixture);
    for (const taskId of [TASK_ID, TASK_ID_2, TASK_ID_3]) {
      writeTask(fixture, taskId);
      expect((await engine.apply({ intent: 'begin-or-resume', taskRef: taskId })).status).toBe('running');
    }
    expect((await engine.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' })).changed).toBe(true);
    const runFiles = [TASK_ID, TASK_ID_2, TASK_ID_3].map((taskId) => runFilePath(fixture.taskDir(taskId))).sort();
    const once = new Map(runFiles.map((file) => [file, 1]));

    const payload = nativePayload('claude-code', 'SubagentStart', 'executor', 'child-1', fixture.root);
    const request = { client: 'claude-code', repo: fixture.root, budgetMs: 2_000, verbose: false, cwd: fixture.root };
    let hookExit = -1;
    const hookReads = await runFileReads(async () => {
      hookExit = (await handleHook(request, async () => Buffer.from(payload))).exitCode;
    });
    expect(hookExit).toBe(0);
    expect(hookReads).toEqual(once);

    const [spooled] = spooledFiles(fixture.root);
    const envelope = JSON.parse(fs.readFileSync(path.join(spoolDir(fixture.root), spooled!), 'utf8'));
    const repository = servedRepository(envelope.repo.id, fixture.root, fakeFingerprinter(), batonDir(fixture.root));
    let status = '';
    const workerReads = await runFileReads(async () => {
      status = (await processJobData(repository, envelope)).result.status;
    });
    expect(status).toBe('running');
    expect(readRun(fixture.taskDir(TASK_ID)).pendingDelegation?.status).toBe('activated');
    expect(workerReads).toEqual(once);
  });
});
