import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { approvedReview, engineHarness, fakeFingerprinter, readRun, reviewWithVerdict, tempRepo, writeTask } from '../support/fixtures.ts';
import type { Fixture } from '../support/fixtures.ts';
import { filterRuns, listRuns, nodeRunFiles, taskDirectories, taskTitle } from '../../src/runs/runList.ts';
import type { RunFiles, RunRow } from '../../src/runs/runList.ts';
import { parseRunLog, runLogEntryFor } from '../../src/runs/runLog.ts';
import type { RunLogEntry } from '../../src/runs/runLog.ts';
import { describeRun } from '../../src/runs/runView.ts';
import { applyEventNow } from '../../src/core/engine.ts';
import type { LifecycleEvent } from '../../src/core/events.ts';

// The run view's pure parts: the listing through its file seam, filters, titles, the stage
// pipeline, the receipt timeline linked to jobs, and the commands a paused run offers (the commands
// themselves: test/core/nextSteps.test.ts).

let repo: Fixture;
afterEach(() => repo?.cleanup());

const TASK = 'TASK-20260101-000001';
let clock = 0;
const at = () => new Date(Date.UTC(2026, 0, 1, 0, 0, clock++)).toISOString();

/** analysis done (consumed), its review sealed with `verdict`; every step logged as a job. */
async function runThroughReview(verdict: 'Approved' | 'Changes Requested'): Promise<{ dir: string; log: RunLogEntry[] }> {
  repo = tempRepo();
  const dir = writeTask(repo, TASK);
  let changed: string[] = [];
  let tree = 0;
  const ids = ['run-1', 'rcpt-analysis', 'rcpt-review'];
  const fingerprinter = fakeFingerprinter({ capture: () => `tree-${(tree += 1)}`, diff: () => changed });
  // a clock that moves one second per reading, so durations are real
  const harness = {
    apply: (event: LifecycleEvent) => applyEventNow(event, { repoRoot: repo.root, fingerprinter, now: at, newId: () => ids.shift()! }),
  };
  const log: RunLogEntry[] = [];
  let job = 0;
  const step = async (event: LifecycleEvent) => {
    const result = await harness.apply(event);
    const entry = runLogEntryFor(
      { jobId: `job-${(job += 1)}`, queue: 'baton-q', intent: event.intent, source: 'cli', enqueuedAt: at(), appliedAt: at() },
      result,
    );
    if (entry) log.push(entry);
    return result;
  };
  await step({ intent: 'begin-or-resume', taskRef: TASK });
  for (const [stage, artifact, role] of [
    ['analysis', 'analysis.md', 'executor'],
    ['review-analysis', 'review-analysis.md', 'reviewer'],
  ] as const) {
    await step({ intent: 'prepare', taskRef: TASK, client: 'claude-code' });
    await step({
      intent: 'hook-start',
      taskRef: TASK,
      nativeAgent: `agent-infra-lifecycle-${role}`,
      childId: `child-${stage}`,
      parentId: 'parent',
      spawnMode: 'fresh',
      actualModel: 'claude-opus-4',
    });
    fs.writeFileSync(
      path.join(dir, artifact),
      role === 'reviewer'
        ? verdict === 'Approved'
          ? approvedReview('analysis.md')
          : reviewWithVerdict('analysis.md', verdict)
        : '# Analysis\n',
    );
    changed = [`.agents/workspace/active/${TASK}/${artifact}`];
    await step({ intent: 'complete-stage', taskRef: TASK, stage, round: 1, artifact, agent: 'claude' });
    await step({ intent: 'hook-stop', taskRef: TASK, childId: `child-${stage}`, exitCode: 0 });
    if (stage === 'analysis') await step({ intent: 'advance', taskRef: TASK });
  }
  return { dir, log };
}

describe('describeRun', () => {
  it('lays out the seven stages with rounds, verdicts, models and changed files', async () => {
    const { dir, log } = await runThroughReview('Changes Requested');
    const run = readRun(dir);
    const view = describeRun({ run, taskDir: dir, log, taskRef: TASK, readText: nodeRunFiles.readText });
    expect(view.stages.map((stage) => `${stage.stage}:${stage.state}`)).toEqual([
      'analysis:done',
      'review-analysis:current',
      'plan:upcoming',
      'review-plan:upcoming',
      'code:upcoming',
      'review-code:upcoming',
      'commit:upcoming',
    ]);
    const [analysis] = view.stages[0]!.rounds;
    expect(analysis).toMatchObject({
      receiptId: 'rcpt-analysis',
      round: 1,
      role: 'executor',
      status: 'consumed',
      client: 'claude-code',
      agent: 'claude',
      actualModel: 'claude-opus-4',
      verdict: null,
    });
    expect(analysis!.changedPaths).toEqual([`.agents/workspace/active/${TASK}/analysis.md`]);
    expect(analysis!.durationMs).toBe(Date.parse(readRun(dir).receipts[0]!.sealedAt!) - Date.parse(readRun(dir).receipts[0]!.activatedAt!));
    expect(analysis!.durationMs).toBeGreaterThan(0);
    expect(view.stages[1]!.rounds[0]).toMatchObject({ status: 'sealed', verdict: 'Changes Requested', role: 'reviewer' });
    expect(view.commit).toEqual({ state: 'not issued', issuedAt: null, consumedAt: null });
  });

  it('orders the receipt timeline and links each step to the job that made it', async () => {
    const { dir, log } = await runThroughReview('Approved');
    const run = readRun(dir);
    const view = describeRun({ run, taskDir: dir, log, taskRef: '01', readText: nodeRunFiles.readText });
    expect(view.timeline.map((step) => `${step.receiptId}:${step.status}:${step.job?.intent}`)).toEqual([
      'rcpt-analysis:prepared:prepare',
      'rcpt-analysis:activated:hook-start',
      'rcpt-analysis:stage-completed:complete-stage',
      'rcpt-analysis:sealed:hook-stop',
      'rcpt-analysis:consumed:advance',
      'rcpt-review:prepared:prepare',
      'rcpt-review:activated:hook-start',
      'rcpt-review:stage-completed:complete-stage',
      'rcpt-review:sealed:hook-stop',
    ]);
    const prepared = view.timeline[0]!;
    expect(prepared.fingerprint).toBe(run.receipts[0]!.beforeFingerprint);
    expect(view.timeline[3]!.fingerprint).toBe(run.receipts[0]!.afterFingerprint);
    expect(view.timeline[1]).toMatchObject({ childId: 'child-analysis', parentId: 'parent', at: run.receipts[0]!.activatedAt });
    // stage-completed has no time of its own in the receipt: the job's
    expect(view.timeline[2]!.at).toBe(log.find((entry) => entry.intent === 'complete-stage')!.appliedAt);
    expect(view.stages[1]!.rounds[0]!.verdict).toBe('Approved');
  });

  it('an aborted delegation ends its receipt on the timeline with the abort job', async () => {
    const { dir, log } = await runThroughReview('Approved');
    const harness = engineHarness(repo);
    const result = await harness.apply({ intent: 'abort', taskRef: TASK, reason: 'reviewer crashed' });
    const entry = runLogEntryFor(
      { jobId: 'job-abort', queue: 'baton-q', intent: 'abort', source: 'cli', enqueuedAt: at(), appliedAt: at() },
      result,
    )!;
    expect(entry.receipt).toEqual({ id: 'rcpt-review', status: 'aborted' });
    const view = describeRun({
      run: readRun(dir),
      taskDir: dir,
      log: parseRunLog(`${[...log, entry].map((line) => JSON.stringify(line)).join('\n')}\n{"torn`),
      taskRef: '01',
      readText: nodeRunFiles.readText,
    });
    expect(view.timeline.filter((step) => step.receiptId === 'rcpt-review').map((step) => step.status)).toEqual([
      'prepared',
      'activated',
      'stage-completed',
      'sealed',
      'aborted',
    ]);
    expect(view.timeline.at(-1)!.job).toEqual({ id: 'job-abort', queue: 'baton-q', intent: 'abort' });
    expect(view.commands).toEqual({ waiting: null, resume: 'baton task 01 begin-or-resume', abort: null, note: null });
  });
});

describe('listRuns through its file seam', () => {
  it('reads task directories and titles from any RunFiles, and filters by status and id', async () => {
    const root = '/virtual/repo';
    const run = {
      schemaVersion: 1,
      taskId: TASK,
      runId: 'r',
      status: 'paused',
      nextStage: null,
      stepCount: 3,
      maxSteps: 24,
      baseline: '',
      pendingDelegation: null,
      receipts: [],
      pause: { code: 'P', message: 'held', recoverable: true },
      commitAuthorization: { issuedAt: null, consumedAt: null },
      createdAt: 'x',
      updatedAt: 'y',
    };
    const files: Record<string, string> = {
      [`${root}/.agents/workspace/blocked/${TASK}/orchestration.json`]: JSON.stringify(run),
      [`${root}/.agents/workspace/blocked/${TASK}/task.md`]: '---\nid: x\ntitle: "Fix the flaky upload"\n---\n# Heading\n',
      [`${root}/.agents/workspace/active/.short-ids.json`]: JSON.stringify({ version: 1, ids: { '07': TASK } }),
    };
    const seam: RunFiles = {
      subdirs: (dir) => (dir === `${root}/.agents/workspace/blocked` ? [TASK] : []),
      readText: (file) => files[file] ?? null,
    };
    const rows = await listRuns(root, seam);
    expect(rows).toEqual([
      expect.objectContaining({
        taskId: TASK,
        shortId: '07',
        title: 'Fix the flaky upload',
        state: 'blocked',
        status: 'paused',
        steps: { done: 3, max: 24 },
      }),
    ]);
    expect(filterRuns(rows, { search: '#7' })).toHaveLength(1);
    expect(filterRuns(rows, { search: '7' })).toHaveLength(1);
    expect(filterRuns(rows, { search: 'task-2026' })).toHaveLength(1);
    expect(filterRuns(rows, { status: 'running' })).toHaveLength(0);
    expect(filterRuns<RunRow>(rows, { status: 'paused', search: '#8' })).toHaveLength(0);
    expect(taskTitle('---\nid: x\n---\n\n# Only a heading\n')).toBe('Only a heading');
    expect(taskTitle(null)).toBeNull();

    // The short ids come from task lookup's registry reader, through the same seam: a registry it
    // refuses (no `version`, as upstream's schema requires) gives the listing no short ids.
    files[`${root}/.agents/workspace/active/.short-ids.json`] = JSON.stringify({ ids: { '07': TASK } });
    expect(await listRuns(root, seam)).toEqual([expect.objectContaining({ taskId: TASK, shortId: null })]);
  });

  it('walks the archive oldest day first, through the same seam as task lookup', async () => {
    const root = '/virtual/repo';
    const archive = `${root}/.agents/workspace/archive`;
    const tree: Record<string, string[]> = {
      [archive]: ['2025', '2026', 'notes'],
      [`${archive}/2025`]: ['12'],
      [`${archive}/2025/12`]: ['31'],
      [`${archive}/2025/12/31`]: ['TASK-20251201-000001'],
      [`${archive}/2026`]: ['01'],
      [`${archive}/2026/01`]: ['02', '10'],
      [`${archive}/2026/01/02`]: ['TASK-20260101-000002'],
      [`${archive}/2026/01/10`]: ['TASK-20260101-000003'],
      [`${archive}/notes`]: ['TASK-20260101-000009'],
    };
    const seam: RunFiles = { subdirs: (dir) => tree[dir] ?? [], readText: () => null };
    expect(taskDirectories(root, seam).map(({ state, dir }) => `${state} ${dir.slice(archive.length + 1)}`)).toEqual([
      'archive 2025/12/31/TASK-20251201-000001',
      'archive 2026/01/02/TASK-20260101-000002',
      'archive 2026/01/10/TASK-20260101-000003',
    ]);
  });
});
