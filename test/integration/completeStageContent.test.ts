import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { OrchestrationRun } from '../../src/core/types.ts';
import { TASK_ID, approvedReview } from '../support/fixtures.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { jsonOf, runBaton } from '../support/processes.ts';
import { completeStageFlags } from '../support/engineEvents.ts';
import { useWorkerHarness } from '../support/workerHarness.ts';

// `complete-stage --content -`: a subagent that may not write its artifact
// (Claude Code refuses a subagent's Write of analysis.md; Codex's sandbox keeps .agents/ read-only)
// hands the text to baton. The worker checks it, writes it and completes the stage in one journaled
// event; a refused artifact writes nothing and leaves the delegation as it was. And an advance
// before the subagent's SubagentStop says what to do.

const harness = useWorkerHarness('file');
let repo: GitRepo;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  ({ repo, env } = await harness.serve('content', { env: { BATON_HOOK_BUDGET_MS: '8000' } }));
}, 60_000);

const task = async (args: string[], input?: string) => {
  const run = await runBaton(['task', TASK_ID, ...args, '--timeout', '20000'], {
    env,
    cwd: repo.root,
    ...(input !== undefined ? { input } : {}),
  });
  return { ...run, json: jsonOf(run) };
};
const hook = (phase: 'SubagentStart' | 'SubagentStop', role: string, childId: string) =>
  // BATON_HOOK_VERBOSE=1: the hook waits for its event's result, so the run file can be read right after.
  runBaton(['hook', 'claude-code'], {
    env: { ...env, BATON_HOOK_VERBOSE: '1' },
    cwd: repo.root,
    input: nativePayload('claude-code', phase, role, childId, repo.root),
  });
const run = () => JSON.parse(fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8')) as OrchestrationRun;
const complete = (stage: string, artifact: string, input: string, extra: string[] = []) =>
  task([...completeStageFlags({ stage, artifact, agent: 'claude' }), '--content', '-', ...extra], input);

describe('baton task complete-stage --content -', () => {
  it('refuses --content with any value but - and on other intents, as usage errors', async () => {
    const value = await task([...completeStageFlags({ agent: 'claude' }), '--content', 'analysis.md']);
    expect(value.code).toBe(2);
    expect(value.json.error).toEqual({
      code: 'ORCHESTRATION_PAYLOAD_INVALID',
      message: "--content must be '-': the artifact's content is read from standard input",
    });
    const other = await task(['advance', '--content', '-']);
    expect(other.code).toBe(2);
    expect(other.json.error.message).toBe("option '--content' is only accepted by complete-stage");
  });

  it('writes the analysis from stdin, completes the stage, and the run goes on to the review', async () => {
    expect((await task(['begin-or-resume'])).json.status).toBe('running');
    expect((await task(['route'])).json.next).toMatchObject({ stage: 'analysis', round: 1, artifact: 'analysis.md', role: 'executor' });
    expect((await task(['prepare', '--client', 'claude-code'])).json.status).toBe('running');
    expect((await hook('SubagentStart', 'executor', 'child-a')).code).toBe(0);

    // Refused: empty content. Nothing written, the delegation still activated, the run not paused.
    const empty = await complete('analysis', 'analysis.md', '  \n');
    expect(empty.code).toBe(1);
    expect(empty.json.error).toEqual({ code: 'ORCHESTRATION_ARTIFACT_INVALID', message: 'the content for analysis.md is empty' });
    expect(fs.existsSync(path.join(repo.taskDir, 'analysis.md'))).toBe(false);
    expect(run()).toMatchObject({ status: 'running', pause: null, pendingDelegation: { status: 'activated' } });

    const analysis = '# Analysis\n\nThe retry budget is unbounded; cap it at 3.\n';
    const completed = await complete('analysis', 'analysis.md', analysis);
    expect(completed.code, completed.stderr).toBe(0);
    expect(completed.json).toMatchObject({
      status: 'running',
      changed: true,
      run: { pendingDelegation: { status: 'stage-completed', agent: 'claude' } },
    });
    expect(fs.readFileSync(path.join(repo.taskDir, 'analysis.md'), 'utf8')).toBe(analysis);
    // Written through the worker's journal, like the run file (exactly once on a redelivery).
    const journalDir = path.join(repo.root, '.git', 'baton', 'journal');
    const records = fs.readdirSync(journalDir).map((name) => JSON.parse(fs.readFileSync(path.join(journalDir, name), 'utf8')));
    const record = records.find((entry) => entry.writes?.some((write: { path: string }) => write.path.endsWith('analysis.md')));
    expect(record?.writes.map((write: { path: string }) => path.basename(write.path))).toEqual(['analysis.md', 'orchestration.json']);

    // Advancing before the SubagentStop: a recoverable pause that says what to do.
    const early = await task(['advance']);
    expect(early.json.status).toBe('paused');
    expect(early.json.run.pause.code).toBe('DELEGATION_STATE_INVALID');
    expect(early.json.run.pause.message).toContain(
      'is stage-completed, expected sealed; its subagent has not finished: wait for the subagent to return',
    );
    expect(early.json.run.pause.message).toContain(
      `check with 'baton task ${TASK_ID} status' until run.pendingDelegation.status is 'sealed', then advance again`,
    );
    expect(early.json.run.pause.message).toContain(`'baton task ${TASK_ID} abort --reason`);
    // …and doing what it says works: the late stop seals, advance resumes the run.
    expect((await hook('SubagentStop', 'executor', 'child-a')).code).toBe(0);
    expect(run().pendingDelegation?.status).toBe('sealed');
    const advanced = await task(['advance']);
    expect(advanced.json).toMatchObject({ status: 'running', run: { pause: null, pendingDelegation: null, stepCount: 1 } });
    expect((await task(['route'])).json.next).toMatchObject({ stage: 'review-analysis', artifact: 'review-analysis.md', role: 'reviewer' });
  }, 90_000);

  it('checks a review for its Review Summary before writing it; the reviewer write gate accepts the file baton wrote', async () => {
    expect((await task(['prepare', '--client', 'claude-code'])).json.status).toBe('running');
    expect((await hook('SubagentStart', 'reviewer', 'child-r')).code).toBe(0);
    const noSummary = await complete('review-analysis', 'review-analysis.md', '# Review\n\nLooks fine.\n');
    expect(noSummary.code).toBe(1);
    expect(noSummary.json.error.code).toBe('ORCHESTRATION_ARTIFACT_INVALID');
    expect(noSummary.json.error.message).toMatch(/^review-analysis\.md has no valid Review Summary \(/);
    expect(fs.existsSync(path.join(repo.taskDir, 'review-analysis.md'))).toBe(false);

    const review = approvedReview('analysis.md');
    const done = await complete('review-analysis', 'review-analysis.md', review);
    expect(done.json.status, JSON.stringify(done.json)).toBe('running');
    expect(fs.readFileSync(path.join(repo.taskDir, 'review-analysis.md'), 'utf8')).toBe(review);
    expect((await hook('SubagentStop', 'reviewer', 'child-r')).code).toBe(0);
    expect(run().pendingDelegation?.status).toBe('sealed');
    expect(run().pendingDelegation?.changedPaths).toContain(`.agents/workspace/active/${TASK_ID}/review-analysis.md`);
    expect((await task(['advance'])).json.status).toBe('running');
    expect((await task(['route'])).json.next).toMatchObject({ stage: 'plan' });
  }, 90_000);
});
