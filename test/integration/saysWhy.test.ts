import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { OrchestrationRun } from '../../src/core/types.ts';
import { TASK_ID } from '../support/fixtures.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { HOOK_WAITS_FOR_RESULT, jsonOf, runBaton } from '../support/processes.ts';
import { useWorkerHarness } from '../support/workerHarness.ts';
import { URL_PATTERN } from '../support/services.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';

// What a user of the built `baton` is told when the lifecycle does something they did not expect:
// a review naming the wrong **Review Input** is refused at complete-stage, and when one that does
// not count gets there anyway, route and `baton runs` say why the next step is review round 2; a mistyped complete-stage pauses with the values
// expected and given; begin-or-resume says why it leaves the run paused; a pause message that a late SubagentStop made untrue is marked as out of date.

const harness = useWorkerHarness('file');
let repo: GitRepo;
let env: NodeJS.ProcessEnv;
let dashboard: string;

beforeAll(async () => {
  const served = await harness.serve('why', { env: HOOK_WAITS_FOR_RESULT, workerArgs: ['--dashboard', '--port', '0'] });
  ({ repo, env } = served);
  dashboard = URL_PATTERN.exec(served.worker.output())![1]!;
}, 60_000);

const task = async (args: string[], input?: string) => {
  const run = await runBaton(['task', '01', ...args, '--timeout', '20000'], {
    env,
    cwd: repo.root,
    ...(input !== undefined ? { input } : {}),
  });
  return { ...run, json: jsonOf(run) };
};
const hook = async (phase: 'SubagentStart' | 'SubagentStop', role: string, childId: string) =>
  expect(
    (await runBaton(['hook', 'claude-code'], { env, cwd: repo.root, input: nativePayload('claude-code', phase, role, childId, repo.root) }))
      .code,
  ).toBe(0);
const runFile = () => JSON.parse(fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8')) as OrchestrationRun;
const runsRow = async () => {
  const listed = await runBaton(['runs', '--json', '--repo', repo.root], { env });
  expect(listed.code, listed.stderr).toBe(0);
  return JSON.parse(listed.stdout).runs[0];
};
const runPage = async () => (await fetch(new URL(`/runs/${repoIdentity(repo.root).id}/${TASK_ID}`, dashboard))).text();
const runsTable = async () => (await runBaton(['runs', '--repo', repo.root], { env })).stdout;

/** An approved review with a valid summary and no **Review Input** line: the trap. */
const REVIEW_WITHOUT_INPUT =
  '# Review\n\n## Review Summary\n\n- **Overall Verdict**: Approved\n- **Findings (AI-actionable)**: 0 blockers, 0 majors, 0 minors / **Manual validation**: 0\n';
/** The same review naming the task file instead of the artifact under review. */
const REVIEW_OF_TASK_MD = REVIEW_WITHOUT_INPUT.replace('# Review\n', '# Review\n\n- **Review Input**: `task.md`\n');

describe('baton says why', () => {
  it('a mistyped complete-stage pauses with the values; begin-or-resume says why the run stays paused', async () => {
    expect((await task(['begin-or-resume'])).json.status).toBe('running');
    expect((await task(['prepare', '--client', 'claude-code'])).json.next).toMatchObject({ stage: 'analysis', round: 1 });
    // The run page of a prepared delegation says what happens next, not only how to abort it.
    const prepared = await runPage();
    expect(prepared).toContain(
      '<p data-waiting>Next: spawn agent-infra-lifecycle-executor for analysis r1 (a fresh subagent, in the foreground); waiting for its SubagentStart.</p>',
    );
    // Its clock, with the worker's recorded graces (the defaults here; docs/architecture.md "Reconciliation").
    expect(prepared).toMatch(/<div data-clock><span>clock<\/span>waiting for SubagentStart since \d+ s; given up by baton at 5 min<\/div>/);
    expect((await runsRow()).clock).toMatch(/^waiting for SubagentStart since \d+ s; given up by baton at 5 min$/);
    await hook('SubagentStart', 'executor', 'child-a');
    const typo = await task(
      ['complete-stage', '--stage', 'plan', '--round', '1', '--artifact', 'analysis.md', '--agent', 'claude', '--content', '-'],
      '# Analysis\n',
    );
    expect(typo.json.status).toBe('paused');
    expect(typo.json.run.pause).toEqual({
      code: 'DELEGATION_STAGE_MISMATCH',
      message:
        'stage completion identity does not match the active delegation ' +
        '(expected --stage analysis --round 1 --artifact analysis.md; given --stage plan --round 1 --artifact analysis.md)',
      recoverable: true,
    });

    const resumed = await task(['begin-or-resume']);
    expect(resumed.json).toMatchObject({ status: 'paused', changed: false, error: null });
    const receipt = runFile().pendingDelegation!;
    expect(resumed.json.warnings).toEqual([
      expect.stringMatching(
        /^the run is paused \(DELEGATION_STAGE_MISMATCH: stage completion identity does not match the active delegation \(expected --stage analysis/,
      ),
    ]);
    expect(resumed.json.warnings[0]).toContain(
      `begin-or-resume does not resume it while delegation ${receipt.id} is pending (activated: agent-infra-lifecycle-executor (child child-a) works on analysis r1; waiting for its complete-stage)`,
    );
    expect(resumed.json.warnings[0]).toContain(
      `To go on without that delegation: baton task 01 abort --reason 'give up delegation ${receipt.id}', then baton task 01 begin-or-resume`,
    );

    // The right values complete the stage; an advance before the stop pauses; the stop then seals.
    expect(
      (
        await task(
          ['complete-stage', '--stage', 'analysis', '--round', '1', '--artifact', 'analysis.md', '--agent', 'claude', '--content', '-'],
          '# Analysis\n\nCap retries at 3.\n',
        )
      ).json.run.pendingDelegation.status,
    ).toBe('stage-completed');
    const early = await task(['advance']);
    expect(early.json.run.pause.message).toMatch(/^delegation \S+ is stage-completed, expected sealed;/);
    expect((await runsRow()).pause.outdated).toBeNull();
    await hook('SubagentStop', 'executor', 'child-a');
    expect(runFile().pendingDelegation?.status).toBe('sealed');

    // The pause message still says stage-completed: baton runs marks it out of date.
    const row = await runsRow();
    expect(row.pause).toMatchObject({
      code: 'DELEGATION_STATE_INVALID',
      outdated: `out of date: delegation ${receipt.id} is sealed now, so advance goes on`,
    });
    expect(await runsTable()).toContain(`is stage-completed, expected sealed;`);
    expect(await runsTable()).toContain(`[out of date: delegation ${receipt.id} is sealed now, so advance goes on]`);
    expect((await task(['begin-or-resume'])).json.warnings[0]).toContain(
      `[out of date: delegation ${receipt.id} is sealed now, so advance goes on]`,
    );
    expect(await runPage()).toContain(
      `<strong class="outdated" data-outdated>(out of date: delegation ${receipt.id} is sealed now, so advance goes on)</strong>`,
    );
    expect((await task(['advance'])).json).toMatchObject({ status: 'running', run: { pause: null, stepCount: 1 } });
  }, 120_000);

  it('a review naming task.md as its Review Input is refused (exit 1) and nothing changes; a review that got there anyway: route and baton runs say why round 2 comes', async () => {
    expect((await task(['prepare', '--client', 'claude-code'])).json.next).toMatchObject({ stage: 'review-analysis', round: 1 });
    await hook('SubagentStart', 'reviewer', 'child-r');
    const completeReview = (content: string) =>
      task(
        [
          'complete-stage',
          '--stage',
          'review-analysis',
          '--round',
          '1',
          '--artifact',
          'review-analysis.md',
          '--agent',
          'claude',
          '--content',
          '-',
        ],
        content,
      );
    const before = fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8');
    const refused = await completeReview(REVIEW_OF_TASK_MD);
    expect(refused.code, refused.stdout).toBe(1);
    expect(refused.json).toEqual({
      status: 'failed',
      changed: false,
      taskId: TASK_ID,
      run: null,
      next: null,
      error: {
        code: 'ORCHESTRATION_REVIEW_INPUT_MISMATCH',
        message:
          'review-analysis.md: expected Review Input analysis.md (the latest artifact under review), given task.md ' +
          '(its "**Review Input**:" line names no analysis artifact). Put "- **Review Input**: `analysis.md`" in the review and ' +
          'run complete-stage again; baton wrote nothing, and the run and its delegation are unchanged',
      },
    });
    expect(fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8')).toBe(before);
    expect(runFile().pendingDelegation).toMatchObject({ stage: 'review-analysis', round: 1, status: 'activated' });
    expect(fs.existsSync(path.join(repo.taskDir, 'review-analysis.md'))).toBe(false);
    expect((await task(['route'])).json.next).toMatchObject({ stage: 'review-analysis', round: 1 });

    // The reviewer fixes the line: the same round completes.
    const completed = await completeReview(REVIEW_WITHOUT_INPUT.replace('# Review\n', '# Review\n\n- **Review Input**: `analysis.md`\n'));
    expect(completed.code, completed.stdout).toBe(0);
    expect(completed.json).toMatchObject({ status: 'running', error: null, run: { pendingDelegation: { status: 'stage-completed' } } });
    // It then rewrites its file without the line, after complete-stage: the review does not count.
    fs.writeFileSync(path.join(repo.taskDir, 'review-analysis.md'), REVIEW_WITHOUT_INPUT);
    await hook('SubagentStop', 'reviewer', 'child-r');
    expect((await task(['advance'])).json.status).toBe('running');

    const why = 'review-analysis.md does not count as the review of analysis.md: it has no "**Review Input**:" line';
    const routed = await task(['route']);
    expect(routed.json).toMatchObject({
      status: 'running',
      next: { stage: 'review-analysis', round: 2, artifact: 'review-analysis-r2.md' },
      warnings: [why],
    });
    expect(await runsRow()).toMatchObject({ stage: 'review-analysis', round: 2, note: why, pause: null });
    const table = await runsTable();
    expect(table.split('\n').find((line) => line.startsWith(TASK_ID))).toMatch(
      new RegExp(`review-analysis\\s+2\\s+.*${why.replace(/[.*()]/g, '\\$&')}$`),
    );

    // The dashboard: the runs list and the run page give the reason next to round 2 (HTML-escaped).
    const escaped = why.replace(/"/g, '&quot;');
    const page = await runPage();
    expect(page).toMatch(
      new RegExp(`<span>stage</span>review-analysis round 2 <span class="note" data-note>— ${escaped.replace(/[.*()]/g, '\\$&')}</span>`),
    );
    expect(page).toContain(`<div class="note" data-note>${escaped}</div>`);
    expect(page).toContain('verdict: Approved');
    const api = (await (await fetch(new URL('/api/runs', dashboard))).json()) as { repositories: { runs: { note: string | null }[] }[] };
    expect(api.repositories[0]!.runs[0]!.note).toBe(why);
    expect(await (await fetch(new URL('/runs', dashboard))).text()).toContain(`<span class="note" data-note>${escaped}</span>`);
  }, 120_000);
});
