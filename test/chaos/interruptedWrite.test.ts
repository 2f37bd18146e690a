import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { applyEvent } from '../../src/core/engine.ts';
import type { LifecycleEvent } from '../../src/core/events.ts';
import { createFingerprinter } from '../../src/fingerprint/index.ts';
import type { OrchestrationRun } from '../../src/core/types.ts';
import { envelopeFor } from '../../src/queue/envelope.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { JOB_OPTIONS } from '../../src/queue/keys.ts';
import { TASK_ID, approvedReview } from '../support/fixtures.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { HOOK_WAITS_FOR_RESULT, jsonOf, runBaton } from '../support/processes.ts';
import { useWorkerHarness } from '../support/workerHarness.ts';
import { leftoverTempFiles, queueFor } from './support.ts';
import { completeStage } from '../support/engineEvents.ts';

// Regression test for a failure the kill -9 chaos rounds found: a worker killed between writing a
// run file's temp file and renaming it over orchestration.json left the temp file in the task
// directory. The task workspace is force-included in fingerprints, so the stray file showed up as
// a path the active delegation changed; for a reviewer that is a forbidden write, and the seal
// paused the run with DELEGATION_REVIEWER_WRITE_FORBIDDEN although the reviewer did nothing wrong.
// Now the redelivery of the interrupted event (journal record still pending) removes the debris.

const redisUrl = inject('redisUrl');
const harness = useWorkerHarness();

describe('a worker killed in the middle of an atomic run-file write', () => {
  it('leaves no stray temp file behind once the event is redelivered, so a reviewer can still seal', async () => {
    const { repo, env } = await harness.serve('interrupted');
    const task = async (...args: string[]) => jsonOf(await runBaton(['task', TASK_ID, ...args], { env, cwd: repo.root }));
    const hook = async (phase: 'SubagentStart' | 'SubagentStop', role: string, childId: string) => {
      // Wait for the result and print it on stderr (stdout stays empty).
      const run = await runBaton(['hook', 'claude-code'], {
        env: { ...env, ...HOOK_WAITS_FOR_RESULT },
        cwd: repo.root,
        input: nativePayload('claude-code', phase, role, childId, repo.root),
      });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe('');
      return JSON.parse(/^baton: (\{.*\})$/m.exec(run.stderr)?.[1] ?? 'null');
    };
    // The analysis stage, then a reviewer delegation that has done its work.
    await task('begin-or-resume');
    await task('prepare', '--client', 'claude-code');
    await hook('SubagentStart', 'executor', 'child-1');
    fs.writeFileSync(path.join(repo.taskDir, 'analysis.md'), '# Analysis\n');
    await task('complete-stage', '--stage', 'analysis', '--round', '1', '--artifact', 'analysis.md', '--agent', 'claude');
    await hook('SubagentStop', 'executor', 'child-1');
    await task('advance');
    expect((await task('prepare', '--client', 'claude-code')).next.stage).toBe('review-analysis');
    await hook('SubagentStart', 'reviewer', 'child-2');
    fs.writeFileSync(path.join(repo.taskDir, 'review-analysis.md'), approvedReview('analysis.md'));

    // The worker applying complete-stage is killed after journaling the event and writing the new
    // run file's temp file, before the rename: exactly what such a kill leaves on disk.
    const runFile = path.join(repo.taskDir, 'orchestration.json');
    const event: LifecycleEvent = completeStage({ stage: 'review-analysis', artifact: 'review-analysis.md', agent: 'claude' });
    const outcome = await applyEvent(event, { repoRoot: repo.root, fingerprinter: createFingerprinter() });
    expect(outcome.writes.map((write) => write.path)).toEqual([runFile]);
    const eventId = `c-interrupted-${randomUUID()}`;
    const journal = path.join(repo.root, '.git', 'baton', 'journal');
    const before = fs.readFileSync(runFile, 'utf8');
    fs.writeFileSync(
      path.join(journal, `${eventId}.json`),
      `${JSON.stringify({
        v: 1,
        eventId,
        state: 'pending',
        recordedAt: new Date().toISOString(),
        result: outcome.result,
        writes: [{ path: runFile, content: outcome.writes[0]!.content, beforeSha256: createHash('sha256').update(before).digest('hex') }],
      })}\n`,
    );
    const stray = `${runFile}.${randomUUID()}.tmp`;
    fs.writeFileSync(stray, outcome.writes[0]!.content);

    // BullMQ hands the job to the next worker: the redelivery finishes the event...
    const queue = queueFor(redisUrl, String(env.BATON_PREFIX), repo.root);
    try {
      const job = await queue.add(event.intent, envelopeFor(event, repoIdentity(repo.root), 'cli', eventId), {
        ...JOB_OPTIONS,
        jobId: eventId,
      });
      await expect.poll(async () => (await queue.getJob(eventId))?.finishedOn, { timeout: 60_000, interval: 50 }).toBeTruthy();
      const done = await queue.getJob(job.id!);
      expect(done?.returnvalue).toMatchObject({ status: 'running', changed: true });
    } finally {
      await queue.close();
    }
    expect(JSON.parse(fs.readFileSync(runFile, 'utf8')).pendingDelegation.status).toBe('stage-completed');
    // ...and clears the debris, so the reviewer's stop sees only the reviewer's own writes.
    expect(leftoverTempFiles(repo.taskDir)).toEqual([]);
    const sealed = await hook('SubagentStop', 'reviewer', 'child-2');
    expect(sealed.run.pause).toBeNull();
    expect(sealed.status).toBe('running');
    const receipt = (JSON.parse(fs.readFileSync(runFile, 'utf8')) as OrchestrationRun).pendingDelegation!;
    expect(receipt.status).toBe('sealed');
    expect(receipt.changedPaths.every((changed) => !changed.endsWith('.tmp'))).toBe(true);
  }, 90_000);
});
