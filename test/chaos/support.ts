import fs from 'node:fs';
import path from 'node:path';
import { Queue } from 'bullmq';
import type { ConnectionOptions } from 'bullmq';
import { applyEventNow } from '../../src/core/engine.ts';
import type { LifecycleEvent } from '../../src/core/events.ts';
import { createFingerprinter } from '../../src/fingerprint/index.ts';
import { parseRunText } from '../../src/core/runStore.ts';
import type { DelegationReceipt, OrchestrationResult, OrchestrationRun } from '../../src/core/types.ts';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { queueNameFor } from '../../src/queue/keys.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { TASK_ID, approvedReview } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';

// Shared pieces of the chaos tests: a deterministic stream of lifecycle events, the outcome of the
// same stream applied without faults, projections that ignore what legitimately differs between
// two runs (ids, clocks, fingerprints of trees that contain those), and a watcher that reads the
// run file continuously while the stream is applied.

export const ROUNDS = Number(process.env.CHAOS_ROUNDS ?? 0) || 0;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Cycles of a lifecycle on one task, without stage work between events (so the whole stream can be
 * enqueued at once): prepare → SubagentStart → complete-stage → SubagentStop → advance → pause →
 * resume, alternating with prepare → SubagentStart → abort → resume.
 */
export function lifecycleStream(cycles: number): LifecycleEvent[] {
  const events: LifecycleEvent[] = [{ intent: 'begin-or-resume', taskRef: TASK_ID, maxSteps: 100 }];
  for (let cycle = 1; cycle <= cycles; cycle += 1) {
    const childId = `child-${cycle}`;
    const agent = 'agent-infra-lifecycle-executor';
    events.push(
      { intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' },
      {
        intent: 'hook-start',
        taskRef: 'auto',
        client: 'claude-code',
        nativeAgent: agent,
        childId,
        parentId: 'parent-session',
        spawnMode: 'fresh',
      },
    );
    if (cycle % 2 === 1) {
      events.push(
        { intent: 'complete-stage', taskRef: TASK_ID, stage: 'analysis', round: 1, artifact: 'analysis.md', agent: 'claude' },
        { intent: 'hook-stop', taskRef: 'auto', client: 'claude-code', nativeAgent: agent, childId },
        { intent: 'advance', taskRef: TASK_ID },
        { intent: 'pause', taskRef: TASK_ID, code: `CHAOS_${cycle}`, message: `pause ${cycle}`, recoverable: true },
        { intent: 'begin-or-resume', taskRef: TASK_ID },
      );
    } else {
      events.push({ intent: 'abort', taskRef: TASK_ID, reason: `abort ${cycle}` }, { intent: 'begin-or-resume', taskRef: TASK_ID });
    }
  }
  return events;
}

function projectReceipt(receipt: DelegationReceipt | null | undefined) {
  if (!receipt) return null;
  const { role, stage, round, artifact, client, childId, parentId, spawnMode, agent, status, changedPaths } = receipt;
  return { role, stage, round, artifact, client, childId, parentId, spawnMode, agent, status, changedPaths: [...changedPaths].sort() };
}

/** What must be equal between a run with faults and one without. */
export function projectRun(run: OrchestrationRun | null | undefined) {
  if (!run) return null;
  return {
    status: run.status,
    nextStage: run.nextStage,
    stepCount: run.stepCount,
    maxSteps: run.maxSteps,
    pause: run.pause,
    pendingDelegation: projectReceipt(run.pendingDelegation),
    receipts: run.receipts.map(projectReceipt),
    commitAuthorization: { issued: run.commitAuthorization.issuedAt !== null, consumed: run.commitAuthorization.consumedAt !== null },
  };
}

export function projectResult(result: OrchestrationResult | null | undefined) {
  if (!result) return null;
  return { status: result.status, changed: result.changed, error: result.error?.code ?? null, run: projectRun(result.run) };
}

/** The stream applied in process, one event after another, on a fresh repository: the reference. */
export async function referenceOutcome(events: readonly LifecycleEvent[]) {
  const repo = gitRepoWithTask();
  try {
    const fingerprinter = createFingerprinter();
    const results = [];
    for (const event of events) results.push(projectResult(await applyEventNow(event, { repoRoot: repo.root, fingerprinter })));
    const run = JSON.parse(fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8')) as OrchestrationRun;
    return { results, run: projectRun(run) };
  } finally {
    repo.cleanup();
  }
}

export function queueFor(redisUrl: string, prefix: string, root: string): Queue {
  // ioredis' option type and BullMQ's differ only in typing.
  return new Queue(queueNameFor(repoIdentity(root).id), {
    connection: redisOptionsFromUrl(redisUrl) as ConnectionOptions,
    prefix,
    skipVersionCheck: true,
  });
}

/**
 * Reads `file` on every change the kernel reports in its directory (inotify: a rename onto it, and
 * each write to it, so an in-place write would be read half done), every 20 ms besides (should
 * events be dropped), and once more when stopped (so a file that exists by then has been read at
 * least once, however busy the machine was); every read must be missing (before the first write) or
 * a valid run. Returns what it saw. (Polling every millisecond instead cost ~9 s of CPU per run of
 * the chaos file and read no more of the writes.)
 */
export function watchRunFile(file: string) {
  let stopped = false;
  const invalid: string[] = [];
  let reads = 0;
  let changes = 0;
  const readOnce = () => {
    let text: string | null = null;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') invalid.push(String(error));
    }
    if (text !== null) {
      reads += 1;
      const read = parseRunText(text, file);
      if (read.kind !== 'ok') invalid.push(`${read.kind === 'invalid' ? read.message : 'missing'}: ${JSON.stringify(text.slice(0, 200))}`);
    }
  };
  const name = path.basename(file);
  const watcher = fs.watch(path.dirname(file), (_event, changed) => {
    if (stopped || changed !== name) return;
    changes += 1;
    readOnce();
  });
  const loop = (async () => {
    while (!stopped) {
      readOnce();
      await sleep(20);
    }
  })();
  let final: Promise<{ reads: number; changes: number; invalid: string[] }> | null = null;
  return {
    /** Changes seen so far. */
    changes: () => changes,
    stop() {
      final ??= (async () => {
        stopped = true;
        watcher.close();
        await loop;
        readOnce();
        return { reads, changes, invalid };
      })();
      return final;
    },
  };
}

/** Leftover temp files of atomic writes (a kill between write and rename) in a directory. */
export function leftoverTempFiles(dir: string): string[] {
  try {
    return fs.readdirSync(dir).filter((name) => name.endsWith('.tmp'));
  } catch {
    return [];
  }
}

export type StageNext = { role: string; stage: string; round: number; artifact: string };

/** The work a delegated subagent does for a stage (what the lifecycle driver of the tests does). */
export function doStageWork(root: string, taskDir: string, next: StageNext): void {
  const inputOf: Record<string, string> = { 'review-analysis': 'analysis', 'review-plan': 'plan', 'review-code': 'code' };
  const input = inputOf[next.stage];
  if (input) {
    fs.writeFileSync(path.join(taskDir, next.artifact), approvedReview(`${input}.md`, 0));
  } else if (next.stage === 'commit') {
    fs.writeFileSync(path.join(root, 'CHANGELOG.md'), '- retry budget\n');
  } else {
    fs.writeFileSync(path.join(taskDir, next.artifact), `# ${next.stage}\n\nDone.\n`);
    if (next.stage === 'code') fs.writeFileSync(path.join(root, 'src', 'retry.ts'), 'export const retries = 3;\n');
  }
}
