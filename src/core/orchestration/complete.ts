import { failed } from '../results.ts';
import path from 'node:path';
import { ARTIFACT_INVALID_CODE, stageArtifactProblem } from '../stageArtifact.ts';
import { completeDelegationStage } from '../receipts.ts';
import type { DelegationRole, DelegationStage, OrchestrationResult } from '../types.ts';
import { pauseRun, reportRun, requireRun, save, standaloneNoop, withUpdates } from './steps.ts';
import type { OrchestrationContext } from './steps.ts';

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
  const outcome = completeDelegationStage(run.pendingDelegation, event);
  if (!outcome.ok) return pauseRun(ctx, task, run, outcome.code, outcome.message, true);
  if (event.content !== undefined) {
    // baton: the artifact handed over on stdin is written with the run update, or not at all.
    const problem = stageArtifactProblem(outcome.receipt, event.content);
    if (problem !== null) return failed(ARTIFACT_INVALID_CODE, problem, task.taskId);
    ctx.tx.stageFile(path.join(task.taskDir, outcome.receipt.artifact), event.content);
  }
  const updated = withUpdates(ctx, run, { pendingDelegation: outcome.receipt });
  save(ctx, task, updated);
  return reportRun(task.taskId, updated, true);
}

export function completeCommitStage(ctx: OrchestrationContext, taskRef: string, agent: string): OrchestrationResult {
  const opened = requireRun(ctx, taskRef, standaloneNoop);
  if (!opened.ok) return opened.result;
  const { task, run } = opened.value;
  const receipt = run.pendingDelegation;
  if (!receipt || receipt.stage !== 'commit') {
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
    !receipt
    || receipt.status !== 'activated'
    || receipt.stage !== event.stage
    || receipt.round !== event.round
    || receipt.artifact !== event.artifact
    || receipt.role !== event.role
  ) {
    return pauseRun(ctx, task, run, 'ORCHESTRATION_PROVENANCE_MISMATCH', 'active run does not have one matching activated delegation', true);
  }
  return reportRun(task.taskId, run, false);
}
