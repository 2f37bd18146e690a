import { LATER_PROFILE } from '../profile.ts';
import { abortDelegation } from '../receipts.ts';
import { failed } from '../results.ts';
import type { OrchestrationResult } from '../types.ts';
import { RECOVERY_INCOMPLETE_CODE } from './lifecycleRecovery.ts';
import { reportRun, requirePending, save, withUpdates } from './steps.ts';
import type { OrchestrationContext } from './steps.ts';

// `recover-started`, the later profile's recovery of a delegation whose child was started (agent-infra
// #993, #994; its codes and messages). It acts only on positive evidence that the child ended: its stop,
// recorded on the receipt when it came before the stage completion (lifecycleRecovery.ts). A child that
// went quiet, or that the client reported gone without a stop (a TaskStop), is not that evidence: the
// recovery is refused and changes nothing (upstream fails closed the same way). A recovered delegation
// becomes `aborted` in the history and the run goes on (running, no pause, no pending delegation), so
// `route` and `prepare` give the stage to a fresh child. Under agent-infra-0.9.2 `abort` is the way out.

const UNSAFE = 'recovery requires one matching activated pending delegation';

export function recoverStarted(ctx: OrchestrationContext, taskRef: string): OrchestrationResult {
  if (!ctx.rules.recoveryFromEvidence) {
    return failed(
      'BATON_INTENT_NOT_IN_PROFILE',
      `recover-started belongs to profile ${LATER_PROFILE}; this repository's profile is ${ctx.rules.name}, where baton task ${taskRef} abort --reason "…" gives a delegation up`,
    );
  }
  const opened = requirePending(ctx, taskRef);
  if (!opened.ok) return opened.result;
  const { task, run, receipt } = opened.value;
  if (receipt.status === 'prepared') {
    return failed(
      'ORCHESTRATION_RECOVERY_UNSAFE',
      `${UNSAFE}: delegation ${receipt.id} was never activated (baton task ${task.taskId} recover-prepared releases it)`,
      task.taskId,
    );
  }
  if (receipt.status === 'sealed') {
    return failed(
      'ORCHESTRATION_RECOVERY_UNSAFE',
      `${UNSAFE}: delegation ${receipt.id} is sealed, its child completed and stopped (baton task ${task.taskId} advance accepts it)`,
      task.taskId,
    );
  }
  if (!receipt.childStoppedAt) {
    const completed = receipt.status === 'stage-completed';
    return failed(
      'RECOVERY_STOP_EVIDENCE_MISSING',
      `matching lifecycle stop evidence is missing: child ${receipt.childId} of delegation ${receipt.id} ${completed ? 'completed its stage but ' : ''}has not stopped, ` +
        `and profile ${ctx.rules.name} recovers nothing from quiet. ${completed ? 'Its stop seals the delegation' : 'Its stop is the evidence recover-started needs'}; ` +
        `if that subagent is gone, baton task ${task.taskId} abort --reason "…"`,
      task.taskId,
    );
  }
  if (run.status === 'paused' && run.pause?.code !== RECOVERY_INCOMPLETE_CODE) {
    return failed(
      'ORCHESTRATION_RECOVERY_UNSAFE',
      `activated recovery cannot replace an unrelated orchestration pause (${run.pause?.code ?? 'no code'}): resolve it, or baton task ${task.taskId} abort --reason "…"`,
      task.taskId,
    );
  }
  const aborted = abortDelegation(receipt, { now: ctx.now });
  if (!aborted.ok) return failed(aborted.code, aborted.message, task.taskId);
  const recovered = withUpdates(ctx, run, {
    status: 'running',
    pause: null,
    nextStage: null,
    pendingDelegation: null,
    receipts: Object.freeze([...run.receipts, aborted.receipt]),
  });
  save(ctx, task, recovered);
  ctx.warnings.push(
    `delegation ${receipt.id} was recovered from the stop of child ${receipt.childId} at ${receipt.childStoppedAt} (it never completed its stage): route and prepare again`,
  );
  return reportRun(task.taskId, recovered, true);
}
