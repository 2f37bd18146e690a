import { hasReviewAfterArtifact, looseArtifactName, looseHighestRound } from './artifacts.ts';
import { latestReviewVerdict } from './reviewSummary.ts';
import { latestReviewUnbound } from './reviewBinding.ts';
import type { UnboundReview } from './reviewBinding.ts';
import type { ReviewFamily, ReviewedFamily } from './artifacts.ts';
import type { NextAction, OrchestrationNext } from './types.ts';

// The routing decision table of docs/lifecycle.md §7.3: the next lifecycle action follows purely from
// the artifact files in the task directory (task.md fields are not read).

type WorkStage = Readonly<{
  family: ReviewedFamily;
  reviewFamily: ReviewFamily;
  action: NextAction;
  reviewAction: NextAction;
}>;

const WORK_STAGES: readonly WorkStage[] = [
  { family: 'analysis', reviewFamily: 'review-analysis', action: 'analyze-task', reviewAction: 'review-analysis' },
  { family: 'plan', reviewFamily: 'review-plan', action: 'plan-task', reviewAction: 'review-plan' },
  { family: 'code', reviewFamily: 'review-code', action: 'code-task', reviewAction: 'review-code' },
];

function executorStep(stage: WorkStage, round: number): OrchestrationNext {
  return { action: stage.action, role: 'executor', stage: stage.family, round, artifact: looseArtifactName(stage.family, round) };
}

function reviewerStep(stage: WorkStage, round: number): OrchestrationNext {
  return {
    action: stage.reviewAction,
    role: 'reviewer',
    stage: stage.reviewFamily,
    round,
    artifact: looseArtifactName(stage.reviewFamily, round),
  };
}

/**
 * The next action, or why no action can be determined (ORCHESTRATION_ROUTE_UNKNOWN). `unbound`: the
 * next action is another review because the latest review, written after the latest artifact, does
 * not name it (baton says so: docs/lifecycle.md §3.4).
 */
export type RouteDecision = { ok: true; next: OrchestrationNext; unbound?: UnboundReview } | { ok: false; message: string };

function nextRound(family: string, highest: number): RouteDecision | number {
  const round = highest + 1;
  return Number.isSafeInteger(round) ? round : { ok: false, message: `the next ${family} round after ${highest} is out of range` };
}

/**
 * First matching row wins. Where 0.9.2 threw (the latest review round's file cannot be read) or would
 * name an absurd round, the decision is a failure with the reason, never another rework round.
 */
export function routeFromArtifacts(taskDir: string): RouteDecision {
  for (const stage of WORK_STAGES) {
    const highest = looseHighestRound(taskDir, stage.family);
    if (highest === 0) return { ok: true, next: executorStep(stage, 1) };
    if (!hasReviewAfterArtifact(taskDir, stage.family, stage.reviewFamily)) {
      const round = nextRound(stage.reviewFamily, looseHighestRound(taskDir, stage.reviewFamily));
      if (typeof round !== 'number') return round;
      const unbound = round > 1 ? latestReviewUnbound(taskDir, stage.reviewFamily) : null;
      return { ok: true, next: reviewerStep(stage, round), ...(unbound ? { unbound } : {}) };
    }
    const verdict = latestReviewVerdict(taskDir, stage.reviewFamily);
    if (!verdict.ok) return verdict;
    if (!verdict.approved) {
      const round = nextRound(stage.family, highest);
      return typeof round === 'number' ? { ok: true, next: executorStep(stage, round) } : round;
    }
  }
  return { ok: true, next: { action: 'commit', role: 'executor', stage: 'commit', round: 1, artifact: 'commit' } };
}
