import { describe, expect, it } from 'vitest';
import { listRuns } from '../../src/runs/runList.ts';
import { latestReviewUnbound, unboundReview } from '../../src/core/reviewBinding.ts';
import { TASK_ID, engineHarness, reviewWithVerdict, useTaskPerTest, writeArtifact } from '../support/fixtures.ts';
import type { Fixture } from '../support/fixtures.ts';

// A review that does not name the latest artifact on its **Review Input** line is accepted (0.9.2)
// but does not count (docs/lifecycle.md §3.4): routing asks for another review round. baton says
// why: complete-stage warns, route's result and the run listing carry the reason.

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
    await h.apply({
      intent: 'hook-start',
      taskRef: 'auto',
      client: 'claude-code',
      nativeAgent: 'agent-infra-lifecycle-reviewer',
      childId: 'c-1',
      parentId: 'p-1',
      spawnMode: 'fresh',
    });
    return h;
  }

  it('complete-stage --content accepts it with a warning; route, prepare and the listing give the reason next to round 2', async () => {
    const h = await reviewerActivated();
    const completed = await h.apply({
      intent: 'complete-stage',
      taskRef: TASK_ID,
      stage: 'review-analysis',
      round: 1,
      artifact: 'review-analysis.md',
      agent: 'claude',
      content: approved(null),
    });
    expect(completed).toMatchObject({
      status: 'running',
      changed: true,
      error: null,
      run: { pendingDelegation: { status: 'stage-completed' } },
    });
    expect(completed.warnings).toEqual([
      'review-analysis.md will not count as the review of analysis.md: it has no "**Review Input**:" line; ' +
        'route will ask for another review (review-analysis-r2.md). A review counts when it names what it reviewed: "- **Review Input**: `analysis.md`"',
    ]);
    await h.apply({
      intent: 'hook-stop',
      taskRef: 'auto',
      client: 'claude-code',
      nativeAgent: 'agent-infra-lifecycle-reviewer',
      childId: 'c-1',
    });
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

  it('a review that names its input: no warning, no note', async () => {
    const h = await reviewerActivated();
    const completed = await h.apply({
      intent: 'complete-stage',
      taskRef: TASK_ID,
      stage: 'review-analysis',
      round: 1,
      artifact: 'review-analysis.md',
      agent: 'claude',
      content: approved('- **Review Input**: `analysis.md`'),
    });
    expect(completed.warnings).toBeUndefined();
    await h.apply({
      intent: 'hook-stop',
      taskRef: 'auto',
      client: 'claude-code',
      nativeAgent: 'agent-infra-lifecycle-reviewer',
      childId: 'c-1',
    });
    await h.apply({ intent: 'advance', taskRef: TASK_ID });
    const routed = await h.apply({ intent: 'route', taskRef: TASK_ID });
    expect(routed.next).toMatchObject({ stage: 'plan', round: 1 });
    expect(routed.warnings).toBeUndefined();
    expect((await listRuns(fixture.root))[0]).toMatchObject({ stage: 'plan', note: null });
  });

  it('complete-stage without --content reads the review the reviewer wrote', async () => {
    const h = await reviewerActivated();
    writeArtifact(dir, 'review-analysis.md', approved('- **Review Input**: `plan.md`'));
    const completed = await h.apply({
      intent: 'complete-stage',
      taskRef: TASK_ID,
      stage: 'review-analysis',
      round: 1,
      artifact: 'review-analysis.md',
      agent: 'claude',
    });
    expect(completed.warnings?.[0]).toMatch(
      /^review-analysis\.md will not count as the review of analysis\.md: its "\*\*Review Input\*\*:" line names no analysis artifact;/,
    );
  });
});
