import { hasReviewAfterArtifact, looseArtifactName, looseHighestRound } from './artifacts.ts';
import { latestReviewApproved } from './reviewSummary.ts';
import type { NextAction, OrchestrationNext } from './types.ts';

// The routing decision table of docs/lifecycle.md §7.3: the next lifecycle action follows purely from
// the artifact files in the task directory (task.md fields are not read).

type WorkStage = Readonly<{
  family: 'analysis' | 'plan' | 'code';
  reviewFamily: 'review-analysis' | 'review-plan' | 'review-code';
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
  return { action: stage.reviewAction, role: 'reviewer', stage: stage.reviewFamily, round, artifact: looseArtifactName(stage.reviewFamily, round) };
}

/** First matching row wins; `null` is the (unreachable in 0.9.2) "no unique action" case. */
export function routeFromArtifacts(taskDir: string): OrchestrationNext | null {
  for (const stage of WORK_STAGES) {
    const round = looseHighestRound(taskDir, stage.family);
    if (round === 0) return executorStep(stage, 1);
    if (!hasReviewAfterArtifact(taskDir, stage.family, stage.reviewFamily)) {
      return reviewerStep(stage, looseHighestRound(taskDir, stage.reviewFamily) + 1);
    }
    if (!latestReviewApproved(taskDir, stage.reviewFamily)) return executorStep(stage, round + 1);
  }
  return { action: 'commit', role: 'executor', stage: 'commit', round: 1, artifact: 'commit' };
}
