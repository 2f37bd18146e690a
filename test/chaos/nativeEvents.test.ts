import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { OrchestrationRun } from '../../src/core/types.ts';
import { TASK_ID } from '../support/fixtures.ts';
import { completeStageArgs } from '../support/runSteps.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { preToolUsePayload } from '../support/hookPayloads.ts';
import { HOOK_WAITS_FOR_RESULT, jsonOf, runBaton } from '../support/processes.ts';
import { useWorkerHarness } from '../support/workerHarness.ts';
import type { CliRun } from '../support/processes.ts';
import { doStageWork } from './support.ts';
import type { StageNext } from './support.ts';

// Duplicate and missing native events (docs/architecture.md "Queue semantics", docs/lifecycle.md §13 host
// caveats: SubagentStop is not always fired, hooks can be delivered twice). Through the real CLI,
// hooks, queue and worker: a duplicate is applied once and answered with the first result; a stop
// that never comes leaves a clear recoverable pause that `abort` and `begin-or-resume` get out
// of, after which the task runs to completion.

const harness = useWorkerHarness();
let repo: GitRepo;
let env: NodeJS.ProcessEnv;

async function setUp(label: string) {
  ({ repo, env } = await harness.serve(label, { env: { BATON_HOOK_BUDGET_MS: '8000' } }));
}

const task = async (...args: string[]) => jsonOf(await runBaton(['task', TASK_ID, ...args, '--timeout', '20000'], { env, cwd: repo.root }));
// The hook waits for its event's result and prints it on stderr; stdout stays empty, as both
// clients require (docs/hooks.md).
const hook = (
  phase: 'SubagentStart' | 'SubagentStop',
  role: string,
  childId: string,
  client: 'claude-code' | 'codex' = 'claude-code',
): Promise<CliRun> =>
  runBaton(['hook', client], {
    env: { ...env, ...HOOK_WAITS_FOR_RESULT },
    cwd: repo.root,
    input: nativePayload(client, phase, role, childId, repo.root),
  });
/** The orchestration result a verbose hook printed on stderr. */
const resultOf = (run: CliRun) => {
  expect(run.stdout).toBe('');
  return JSON.parse(/^baton: (\{.*\})$/m.exec(run.stderr)?.[1] ?? 'null');
};
const runText = () => fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8');
const run = () => JSON.parse(runText()) as OrchestrationRun;
const journalRecords = () => fs.readdirSync(path.join(repo.root, '.git', 'baton', 'journal')).filter((name) => name.startsWith('h-'));

/** Drives the remaining stages to a completed run, with fresh child ids. */
async function driveToCompletion(childPrefix: string): Promise<string[]> {
  const steps: string[] = [];
  for (let step = 1; step <= 10; step += 1) {
    const routed = await task('route');
    expect(routed.status, JSON.stringify(routed)).toBe('running');
    const next = routed.next as StageNext;
    expect((await task('prepare', '--client', 'claude-code')).status).toBe('running');
    const childId = `${childPrefix}-${step}`;
    const started = await hook('SubagentStart', next.role, childId);
    expect(started.code, started.stderr).toBe(0);
    doStageWork(repo.root, repo.taskDir, next);
    const completed = next.stage === 'commit' ? await task('stage-completed', '--agent', 'claude') : await task(...completeStageArgs(next));
    expect(completed.status, JSON.stringify(completed)).toBe('running');
    const stopped = await hook('SubagentStop', next.role, childId);
    expect(stopped.code, stopped.stderr).toBe(0);
    const advanced = await task('advance');
    steps.push(`${next.stage}:${advanced.status}`);
    if (advanced.status === 'completed') return steps;
    expect(advanced.status, JSON.stringify(advanced)).toBe('running');
  }
  throw new Error(`did not complete: ${steps.join(', ')}`);
}

describe('duplicate native events', () => {
  it('a Codex SubagentStart delivered twice (at once, and again later) is applied once and answered with the first result', async () => {
    await setUp('dup-start');
    await task('begin-or-resume');
    await task('prepare', '--client', 'codex');
    // Two deliveries of the same payload (same turn_id) at the same moment.
    const [first, second] = await Promise.all([
      hook('SubagentStart', 'executor', 'child-1', 'codex'),
      hook('SubagentStart', 'executor', 'child-1', 'codex'),
    ]);
    expect(first.code, first.stderr).toBe(0);
    expect(second.code, second.stderr).toBe(0);
    expect(resultOf(second)).toEqual(resultOf(first));
    expect(run().pendingDelegation).toMatchObject({ status: 'activated', childId: 'child-1' });
    expect(journalRecords()).toHaveLength(1);
    // The run moves on; a third, late delivery changes nothing and still returns the first result.
    fs.writeFileSync(path.join(repo.taskDir, 'analysis.md'), '# Analysis\n');
    expect(
      (await task('complete-stage', '--stage', 'analysis', '--round', '1', '--artifact', 'analysis.md', '--agent', 'codex')).status,
    ).toBe('running');
    const moved = runText();
    const late = await hook('SubagentStart', 'executor', 'child-1', 'codex');
    expect(late.code, late.stderr).toBe(0);
    expect(resultOf(late)).toEqual(resultOf(first));
    expect(runText()).toBe(moved);
    // SubagentStop twice: sealed once, the same answer twice.
    const [stopA, stopB] = await Promise.all([
      hook('SubagentStop', 'executor', 'child-1', 'codex'),
      hook('SubagentStop', 'executor', 'child-1', 'codex'),
    ]);
    expect(stopA.code, stopA.stderr).toBe(0);
    expect(resultOf(stopB)).toEqual(resultOf(stopA));
    expect(run().pendingDelegation).toMatchObject({ status: 'sealed', childId: 'child-1' });
    expect((await task('advance')).status).toBe('running');
    expect(run()).toMatchObject({ stepCount: 1, pendingDelegation: null });
    expect(run().receipts.map((receipt) => `${receipt.stage}:${receipt.status}:${receipt.childId}`)).toEqual(['analysis:consumed:child-1']);
    expect(journalRecords()).toHaveLength(2);
  }, 90_000);

  it('Claude Code sends no turn id: a repeated SubagentStart or SubagentStop is a new turn of the same child, and harmless', async () => {
    await setUp('dup-claude');
    await task('begin-or-resume');
    await task('prepare', '--client', 'claude-code');
    const [first, second] = await Promise.all([hook('SubagentStart', 'executor', 'child-1'), hook('SubagentStart', 'executor', 'child-1')]);
    const results = [resultOf(first), resultOf(second)];
    expect(results.map((result) => result.changed).sort()).toEqual([false, true]);
    expect(results.find((result) => !result.changed).warnings[0]).toMatch(
      /^child child-1 started another turn of delegation \S+ \(activated\)$/,
    );
    expect(run().pendingDelegation).toMatchObject({ status: 'activated', childId: 'child-1' });
    fs.writeFileSync(path.join(repo.taskDir, 'analysis.md'), '# Analysis\n');
    expect(
      (await task('complete-stage', '--stage', 'analysis', '--round', '1', '--artifact', 'analysis.md', '--agent', 'claude')).status,
    ).toBe('running');
    const sealed = resultOf(await hook('SubagentStop', 'executor', 'child-1'));
    expect(sealed.run.pendingDelegation.status).toBe('sealed');
    const again = resultOf(await hook('SubagentStop', 'executor', 'child-1'));
    expect(again).toMatchObject({ status: 'running', changed: false });
    expect(again.warnings[0]).toMatch(/^child child-1 ended another turn of sealed delegation \S+ without changes$/);
    expect(run().pendingDelegation).toEqual(sealed.run.pendingDelegation);
    expect((await task('advance')).status).toBe('running');
  }, 90_000);
});

describe('missing native events', () => {
  it('a SubagentStop that never comes: a clear recoverable pause; abort + begin-or-resume get the run going to completion', async () => {
    await setUp('no-stop');
    expect((await task('begin-or-resume')).status).toBe('running');
    expect((await task('prepare', '--client', 'claude-code')).status).toBe('running');
    expect((await hook('SubagentStart', 'executor', 'lost-child')).code).toBe(0);
    fs.writeFileSync(path.join(repo.taskDir, 'analysis.md'), '# Analysis\n\nDone.\n');
    expect(
      (await task('complete-stage', '--stage', 'analysis', '--round', '1', '--artifact', 'analysis.md', '--agent', 'claude')).status,
    ).toBe('running');
    // No SubagentStop. The orchestrator advances anyway: a recoverable pause that says why.
    const advanced = await task('advance');
    expect(advanced).toMatchObject({ status: 'paused', changed: true });
    expect(advanced.run.pause).toEqual({
      code: 'DELEGATION_STATE_INVALID',
      message: expect.stringContaining('is stage-completed, expected sealed'),
      recoverable: true,
    });
    // Stuck as 0.9.2 was: resuming does nothing while the delegation is pending, spawning is blocked.
    expect(await task('begin-or-resume')).toMatchObject({ status: 'paused', changed: false });
    expect((await task('prepare', '--client', 'claude-code')).error.code).toBe('ORCHESTRATION_RUN_NOT_RUNNING');
    const spawn = await runBaton(['hook', 'claude-code'], {
      env,
      cwd: repo.root,
      input: preToolUsePayload(repo.root, { tool_name: 'Task', tool_input: { subagent_type: 'agent-infra-lifecycle-reviewer' } }),
    });
    expect(spawn.code).toBe(2);
    expect(spawn.stderr).toContain(`baton task ${TASK_ID} abort`);
    // The way out: abort (the receipt joins the history as aborted), then begin-or-resume.
    const aborted = await task('abort', '--reason', 'SubagentStop never arrived');
    expect(aborted).toMatchObject({ status: 'paused', changed: true });
    expect(aborted.run.pause).toEqual({
      code: 'ORCHESTRATION_DELEGATION_ABORTED',
      message: 'SubagentStop never arrived',
      recoverable: true,
    });
    expect(aborted.run.pendingDelegation).toBeNull();
    // The lost stop finally arrives: nothing to seal, a non-blocking error, nothing changes.
    const before = runText();
    const lateStop = await hook('SubagentStop', 'executor', 'lost-child');
    expect(lateStop.code).toBe(1);
    expect(lateStop.stderr).toContain('ORCHESTRATION_DELEGATION_MISSING');
    expect(runText()).toBe(before);
    expect(await task('begin-or-resume')).toMatchObject({ status: 'running', changed: true });
    // The analysis exists, so the run continues with its review, through to the commit.
    const steps = await driveToCompletion('fresh');
    expect(steps).toEqual([
      'review-analysis:running',
      'plan:running',
      'review-plan:running',
      'code:running',
      'review-code:running',
      'commit:completed',
    ]);
    const final = run();
    expect(final).toMatchObject({ status: 'completed', pendingDelegation: null, pause: null });
    expect(final.receipts.map((receipt) => `${receipt.stage}:${receipt.status}`)).toEqual([
      'analysis:aborted',
      'review-analysis:consumed',
      'plan:consumed',
      'review-plan:consumed',
      'code:consumed',
      'review-code:consumed',
      'commit:consumed',
    ]);
  }, 180_000);

  it('a stale SubagentStop of an aborted child arriving during the next delegation is ignored; the delegation completes', async () => {
    await setUp('stale-stop');
    await task('begin-or-resume');
    await task('prepare', '--client', 'claude-code');
    expect((await hook('SubagentStart', 'executor', 'old-child')).code).toBe(0);
    await task('abort', '--reason', 'child hung');
    expect((await task('begin-or-resume')).status).toBe('running');
    expect((await task('prepare', '--client', 'claude-code')).status).toBe('running');
    expect((await hook('SubagentStart', 'executor', 'new-child')).code).toBe(0);
    // The old child's stop is delivered now, while the new delegation is active: it changes nothing.
    const before = run();
    const stale = await hook('SubagentStop', 'executor', 'old-child');
    expect(stale.code).toBe(0);
    const staleResult = resultOf(stale);
    expect(staleResult).toMatchObject({ status: 'running', changed: false });
    expect(staleResult.warnings).toEqual(['ignored the stop of child old-child: its delegation was aborted']);
    expect(run()).toEqual(before);
    fs.writeFileSync(path.join(repo.taskDir, 'analysis.md'), '# Analysis\n');
    expect(
      (await task('complete-stage', '--stage', 'analysis', '--round', '1', '--artifact', 'analysis.md', '--agent', 'claude')).status,
    ).toBe('running');
    expect((await hook('SubagentStop', 'executor', 'new-child')).code).toBe(0);
    expect(run().pendingDelegation).toMatchObject({ status: 'sealed', childId: 'new-child' });
    expect(await task('advance')).toMatchObject({ status: 'running', changed: true });
    expect(run()).toMatchObject({ status: 'running', pause: null, stepCount: 1 });
  }, 90_000);

  it('a SubagentStart that never comes: completing the stage pauses recoverably; abort + begin-or-resume recover', async () => {
    await setUp('no-start');
    await task('begin-or-resume');
    await task('prepare', '--client', 'claude-code');
    fs.writeFileSync(path.join(repo.taskDir, 'analysis.md'), '# Analysis\n');
    const completed = await task('complete-stage', '--stage', 'analysis', '--round', '1', '--artifact', 'analysis.md', '--agent', 'claude');
    expect(completed.run.pause).toEqual({
      code: 'DELEGATION_STATE_INVALID',
      message: expect.stringContaining('is prepared, expected activated'),
      recoverable: true,
    });
    expect((await task('abort')).status).toBe('paused');
    expect(await task('begin-or-resume')).toMatchObject({ status: 'running', changed: true });
    expect((await task('prepare', '--client', 'claude-code')).next.stage).toBe('review-analysis');
  }, 60_000);
});
