// The watcher test/chaos/killWorker.test.ts relies on to say "the run file was valid at every read":
// it must see a run file that is written in place, half done, even when the file is whole again
// by the time it is stopped.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyEventNow } from '../../src/core/engine.ts';
import { createFingerprinter } from '../../src/fingerprint/index.ts';
import { TASK_ID } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { watchRunFile } from './support.ts';

let repo: GitRepo | null = null;
afterEach(() => {
  repo?.cleanup();
  repo = null;
});

/** The run file of a fresh task after begin-or-resume, and its text. */
async function startedRunFile(): Promise<{ file: string; whole: string }> {
  repo = gitRepoWithTask();
  await applyEventNow({ intent: 'begin-or-resume', taskRef: TASK_ID }, { repoRoot: repo.root, fingerprinter: createFingerprinter() });
  const file = path.join(repo.taskDir, 'orchestration.json');
  return { file, whole: fs.readFileSync(file, 'utf8') };
}

describe('watchRunFile', () => {
  it('reports a run file written in place half done, though it is whole when stopped', async () => {
    const { file, whole } = await startedRunFile();
    const watcher = watchRunFile(file);
    // Not an atomic rename: truncate, write half, (seen), write the rest.
    const fd = fs.openSync(file, 'w');
    fs.writeSync(fd, whole.slice(0, whole.length / 2));
    await expect.poll(watcher.changes, { timeout: 10_000, interval: 5 }).toBeGreaterThanOrEqual(1);
    fs.writeSync(fd, whole.slice(whole.length / 2));
    fs.closeSync(fd);
    const seen = await watcher.stop();
    expect(seen.invalid.length).toBeGreaterThan(0);
    expect(seen.invalid[0]).toContain('is not valid JSON');
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(JSON.parse(whole));
  });

  it('reports nothing while the file is only replaced whole (write to a temp file, then rename)', async () => {
    const { file, whole } = await startedRunFile();
    const watcher = watchRunFile(file);
    for (let index = 0; index < 20; index += 1) {
      fs.writeFileSync(`${file}.tmp`, whole);
      fs.renameSync(`${file}.tmp`, file);
    }
    await expect.poll(watcher.changes, { timeout: 10_000, interval: 5 }).toBeGreaterThanOrEqual(1);
    const seen = await watcher.stop();
    expect(seen.invalid).toEqual([]);
    expect(seen.reads).toBeGreaterThan(1);
  });
});
