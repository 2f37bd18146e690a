import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listRuns } from '../../src/runs/runList.ts';
import { latestReviewUnbound, unboundReview } from '../../src/core/reviewBinding.ts';
import { runFilePath } from '../../src/core/taskLayout.ts';
import { TASK_ID, engineHarness, failedResult, readRun, reviewWithVerdict, useTaskPerTest, writeArtifact } from '../support/fixtures.ts';
import type { Fixture } from '../support/fixtures.ts';
import { completeStage, nativeStart, nativeStop } from '../support/engineEvents.ts';

// A review that does not name the latest artifact on its **Review Input** line does not count
// (docs/lifecycle.md §3.4). 0.9.2 accepted it and routing asked for another review round; baton
// refuses it at complete-stage (ORCHESTRATION_REVIEW_INPUT_MISMATCH) while the reviewer can fix it,
// and route's result and the run listing still say why when such a review got there another way.

let fixture: Fixture;
let dir: string;
useTaskPerTest((made) => ({ fixture, dir } = made));

/** An approved review with this Review Input block (or none). */
function approved(inputLine: string | null): string {
  return `# Review\n\n${inputLine ?? ''}\n\n## Review Summary\n\n- **Overall Verdict**: Approved\n- **Findings (AI-actionable)**: 0 blockers, 0 majors, 0 minors / **Manual validation**: 0\n`;
}

describe('unboundReview', () => {
  it('says why a review written after the latest artifact does not bind it', () => {
    writeArtifact(dir, 'analysis.md', '# Analysis\n', 60);
    expect(unboundReview(dir, 'review-analysis', { name: 'review-analysis.md', content: approved(null) })).toEqual({
      review: 'review-analysis.md',
      input: 'analysis.md',
      given: null,
      reason: 'it has no "**Review Input**:" line',
    });
    expect(
      unboundReview(dir, 'review-analysis', { name: 'review-analysis.md', content: approved('- **Review Input**: `plan.md`') })?.reason,
    ).toBe('its "**Review Input**:" line names no analysis artifact');
    writeArtifact(dir, 'analysis-r2.md', '# Analysis, again\n', 30);
    expect(
      unboundReview(dir, 'review-analysis', { name: 'review-analysis-r2.md', content: approved('- **Review Input**: `analysis.md`') }),
    ).toEqual({
      review: 'review-analysis-r2.md',
      input: 'analysis-r2.md',
      given: 'analysis.md',
      reason: 'its "**Review Input**:" line names analysis.md instead',
    });
    expect(
      unboundReview(dir, 'review-analysis', { name: 'review-analysis-r2.md', content: approved('- **Review Input**: `analysis-r2.md`') }),
    ).toBeNull();
  });

  it('says nothing when a rework round came after the review (the normal way to a new review round)', () => {
    writeArtifact(dir, 'analysis.md', '# Analysis\n', 60);
    writeArtifact(dir, 'review-analysis.md', reviewWithVerdict('analysis.md', 'Changes Requested'), 50);
    writeArtifact(dir, 'analysis-r2.md', '# Analysis, reworked\n', 40);
    expect(latestReviewUnbound(dir, 'review-analysis')).toBeNull();
    // The same review, written after the rework, names the wrong round: that is the review's fault.
    writeArtifact(dir, 'review-analysis.md', reviewWithVerdict('analysis.md', 'Approved'), 30);
    expect(latestReviewUnbound(dir, 'review-analysis')?.reason).toBe('its "**Review Input**:" line names analysis.md instead');
  });
});

describe('a review that does not count, through the engine', () => {
  async function reviewerActivated() {
    writeArtifact(dir, 'analysis.md', '# Analysis\n', 60);
    const h = engineHarness(fixture, { ids: ['run-1', 'rcpt-1'] });
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    const prepared = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    expect(prepared.next).toMatchObject({ stage: 'review-analysis', round: 1 });
    expect(prepared.warnings).toBeUndefined();
    await h.apply(nativeStart({ role: 'reviewer', childId: 'c-1', parentId: 'p-1' }));
    return h;
  }

  const completeReview = (h: Awaited<ReturnType<typeof reviewerActivated>>, content?: string) =>
    h.apply({
      ...completeStage({ stage: 'review-analysis', artifact: 'review-analysis.md', agent: 'claude' }),
      ...(content === undefined ? {} : { content }),
    });
  const stopReviewer = (h: Awaited<ReturnType<typeof reviewerActivated>>) => h.apply(nativeStop({ role: 'reviewer', childId: 'c-1' }));

  it('complete-stage --content naming task.md is refused with ORCHESTRATION_REVIEW_INPUT_MISMATCH; nothing changes; fixed, it completes', async () => {
    const h = await reviewerActivated();
    const before = fs.readFileSync(runFilePath(dir), 'utf8');
    const refused = await completeReview(h, approved('- **Review Input**: `task.md`'));
    expect(refused).toEqual(
      failedResult(
        'ORCHESTRATION_REVIEW_INPUT_MISMATCH',
        'review-analysis.md: expected Review Input analysis.md (the latest artifact under review), given task.md ' +
          '(its "**Review Input**:" line names no analysis artifact). Put "- **Review Input**: `analysis.md`" in the review and ' +
          'run complete-stage again; baton wrote nothing, and the run and its delegation are unchanged',
        TASK_ID,
      ),
    );
    expect(fs.readFileSync(runFilePath(dir), 'utf8')).toBe(before);
    expect(readRun(dir).pendingDelegation).toMatchObject({ stage: 'review-analysis', round: 1, status: 'activated' });
    expect(fs.existsSync(path.join(dir, 'review-analysis.md'))).toBe(false);

    // The reviewer is still running: it fixes the line and completes the same round.
    const completed = await completeReview(h, approved('- **Review Input**: `analysis.md`'));
    expect(completed).toMatchObject({
      status: 'running',
      changed: true,
      error: null,
      run: { pendingDelegation: { status: 'stage-completed' } },
    });
    expect(completed.warnings).toBeUndefined();
    await stopReviewer(h);
    await h.apply({ intent: 'advance', taskRef: TASK_ID });
    const routed = await h.apply({ intent: 'route', taskRef: TASK_ID });
    expect(routed.next).toMatchObject({ stage: 'plan', round: 1 });
    expect(routed.warnings).toBeUndefined();
    expect((await listRuns(fixture.root))[0]).toMatchObject({ stage: 'plan', note: null });
  });

  it('a review without a Review Input line, or naming an older round, is refused and says what was given', async () => {
    const h = await reviewerActivated();
    expect((await completeReview(h, approved(null))).error).toEqual({
      code: 'ORCHESTRATION_REVIEW_INPUT_MISMATCH',
      message: expect.stringMatching(
        /^review-analysis\.md: expected Review Input analysis\.md \(the latest artifact under review\), given none \(it has no "\*\*Review Input\*\*:" line\)\. /,
      ),
    });
    writeArtifact(dir, 'analysis-r2.md', '# Analysis, again\n');
    expect((await completeReview(h, approved('- **Review Input**: `analysis.md`'))).error?.message).toMatch(
      /^review-analysis\.md: expected Review Input analysis-r2\.md \(the latest artifact under review\), given analysis\.md \(its "\*\*Review Input\*\*:" line names analysis\.md instead\)\. Put "- \*\*Review Input\*\*: `analysis-r2\.md`"/,
    );
    expect(readRun(dir).pendingDelegation).toMatchObject({ status: 'activated' });
  });

  it('complete-stage without --content reads the review the reviewer wrote, and refuses it the same way', async () => {
    const h = await reviewerActivated();
    writeArtifact(dir, 'review-analysis.md', approved('- **Review Input**: `plan.md`'));
    const refused = await completeReview(h);
    expect(refused.error?.code).toBe('ORCHESTRATION_REVIEW_INPUT_MISMATCH');
    expect(refused.error?.message).toMatch(
      /^review-analysis\.md: expected Review Input analysis\.md \(the latest artifact under review\), given plan\.md /,
    );
    writeArtifact(dir, 'review-analysis.md', approved('- **Review Input**: `analysis.md`'));
    expect(await completeReview(h)).toMatchObject({ status: 'running', error: null });
  });

  it('a review that does not count and reached the task anyway (rewritten after complete-stage): route, prepare and the listing give the reason next to round 2', async () => {
    const h = await reviewerActivated();
    expect((await completeReview(h, approved('- **Review Input**: `analysis.md`'))).error).toBeNull();
    // The reviewer rewrites its file after complete-stage, without the line.
    writeArtifact(dir, 'review-analysis.md', approved(null));
    await stopReviewer(h);
    expect((await h.apply({ intent: 'advance', taskRef: TASK_ID })).status).toBe('running');

    const reason = 'review-analysis.md does not count as the review of analysis.md: it has no "**Review Input**:" line';
    const routed = await h.apply({ intent: 'route', taskRef: TASK_ID });
    expect(routed).toMatchObject({
      status: 'running',
      error: null,
      next: { stage: 'review-analysis', round: 2, artifact: 'review-analysis-r2.md' },
    });
    expect(routed.warnings).toEqual([reason]);
    const [row] = await listRuns(fixture.root);
    expect(row).toMatchObject({ stage: 'review-analysis', round: 2, note: reason });

    // Prepared, the round-2 delegation still says why it exists.
    const prepared = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    expect(prepared.warnings).toEqual([reason]);
    expect((await listRuns(fixture.root))[0]).toMatchObject({ stage: 'review-analysis', round: 2, pending: { round: 2 }, note: reason });
  });
});
