import { failed } from '../results.ts';
import fs from 'node:fs';
import path from 'node:path';
import { isReviewFamily } from '../artifacts.ts';
import { REVIEW_INPUT_MISMATCH_CODE, reviewInputMismatchMessage, unboundReview } from '../reviewBinding.ts';
import { ARTIFACT_INVALID_CODE, stageArtifactProblem } from '../stageArtifact.ts';
import { completeDelegationStage } from '../receipts.ts';
import { STALLED_PAUSE_CODE } from '../reconciliation.ts';
import type { DelegationReceipt, DelegationRole, DelegationStage, OrchestrationResult } from '../types.ts';
import { pauseRun, reportRun, requireRun, save, standaloneNoop, withUpdates } from './steps.ts';
import type { OrchestrationContext } from './steps.ts';
import { separationPauseStands } from './modelPolicy.ts';

// Stage completion and provenance: complete-stage (with the artifact handed over), stage-completed
// for the commit stage, validate-stage.

export function completeStage(
  ctx: OrchestrationContext,
  taskRef: string,
  event: { stage: string; round: number; artifact: string; agent: string; content?: string },
): OrchestrationResult {
  const opened = requireRun(ctx, taskRef, standaloneNoop);
  if (!opened.ok) return opened.result;
  const { task, run } = opened.value;
  if (!run.pendingDelegation) return failed('ORCHESTRATION_DELEGATION_MISSING', 'active run has no pending delegation', task.taskId);
  // Later profile: the hand-over of a child refused for its model leaves that refusal in place (modelPolicy.ts).
  const refused = separationPauseStands(run);
  if (refused) return failed(refused.code, refused.message, task.taskId);
  const outcome = completeDelegationStage(run.pendingDelegation, event, { now: ctx.now });
  if (!outcome.ok) return pauseRun(ctx, task, run, outcome.code, outcome.message, true);
  if (event.content !== undefined) {
    // baton: the artifact handed over on stdin is written with the run update, or not at all.
    const problem = stageArtifactProblem(outcome.receipt, event.content);
    if (problem !== null) return failed(ARTIFACT_INVALID_CODE, problem, task.taskId);
  }
  const mismatch = reviewInputMismatch(task.taskDir, outcome.receipt, event.content);
  if (mismatch !== null) return failed(REVIEW_INPUT_MISMATCH_CODE, mismatch, task.taskId);
  if (event.content !== undefined) {
    ctx.tx.stageFile(path.join(task.taskDir, outcome.receipt.artifact), event.content);
  }
  // baton: the stalled pause (docs/architecture.md "Reconciliation") said this child had not completed
  // its stage; now it has, so the pause is lifted rather than left to mislead the child and the page.
  const stalled =
    run.status === 'paused' &&
    run.pause?.code === STALLED_PAUSE_CODE &&
    run.pendingDelegation.reconciliations?.some((mark) => mark.kind === 'stalled');
  const updated = withUpdates(
    ctx,
    run,
    stalled ? { pendingDelegation: outcome.receipt, status: 'running', pause: null } : { pendingDelegation: outcome.receipt },
  );
  if (stalled)
    ctx.warnings.push(
      `the stage is completed, so the pause ${STALLED_PAUSE_CODE} is lifted; the stop seals the delegation and advance goes on`,
    );
  save(ctx, task, updated);
  return reportRun(task.taskId, updated, true);
}

/**
 * baton: a review that would not count (docs/lifecycle.md §3.4: its Review Input does not name the
 * latest artifact) is refused while the reviewer can still fix it; 0.9.2 accepted it and routing
 * asked for another review round without a word. The text is the one handed over, else the file the
 * reviewer wrote (none yet: nothing to check). Null when the review binds.
 */
function reviewInputMismatch(taskDir: string, receipt: DelegationReceipt, handedOver: string | undefined): string | null {
  const reviewFamily = receipt.stage;
  if (receipt.role !== 'reviewer' || !isReviewFamily(reviewFamily)) return null;
  let content = handedOver;
  if (content === undefined) {
    try {
      content = fs.readFileSync(path.join(taskDir, receipt.artifact), 'utf8');
    } catch {
      return null;
    }
  }
  const unbound = unboundReview(taskDir, reviewFamily, { name: receipt.artifact, content });
  return unbound === null ? null : reviewInputMismatchMessage(unbound);
}

export function completeCommitStage(ctx: OrchestrationContext, taskRef: string, agent: string): OrchestrationResult {
  const opened = requireRun(ctx, taskRef, standaloneNoop);
  if (!opened.ok) return opened.result;
  const { task, run } = opened.value;
  const receipt = run.pendingDelegation;
  if (receipt?.stage !== 'commit') {
    return failed('ORCHESTRATION_DELEGATION_MISSING', 'active run has no pending commit delegation', task.taskId);
  }
  return completeStage(ctx, taskRef, { stage: receipt.stage, round: receipt.round, artifact: receipt.artifact, agent });
}

export function validateStage(
  ctx: OrchestrationContext,
  taskRef: string,
  event: { stage: DelegationStage; round: number; artifact: string; role: DelegationRole },
): OrchestrationResult {
  const opened = requireRun(ctx, taskRef, standaloneNoop);
  if (!opened.ok) return opened.result;
  const { task, run } = opened.value;
  const receipt = run.pendingDelegation;
  if (
    receipt?.status !== 'activated' ||
    receipt.stage !== event.stage ||
    receipt.round !== event.round ||
    receipt.artifact !== event.artifact ||
    receipt.role !== event.role
  ) {
    return pauseRun(
      ctx,
      task,
      run,
      'ORCHESTRATION_PROVENANCE_MISMATCH',
      'active run does not have one matching activated delegation',
      true,
    );
  }
  return reportRun(task.taskId, run, false);
}
