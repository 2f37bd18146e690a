import path from 'node:path';
import { LATER_PROFILE } from '../profile.ts';
import { abortDelegation } from '../receipts.ts';
import { failed } from '../results.ts';
import { runFilePath } from '../taskLayout.ts';
import type { OrchestrationResult } from '../types.ts';
import { errorMessage, reportRun, requirePending, save, withUpdates } from './steps.ts';
import type { OrchestrationContext } from './steps.ts';

// `recover-prepared`, the later profile's release of a delegation no child ever activated (agent-infra
// #854, #870, #993; its codes and messages). The orchestrator runs it when the child it spawned did
// not start within the activation deadline (activationDeadline.ts): the receipt becomes `aborted` and
// joins the history, and the run goes on (running, no pause, no pending delegation), so `route` and
// `prepare` can try again at once instead of waiting for the worker's --spawn-grace. It is refused
// while the deadline runs, for a receipt a child activated (only evidence that it ended recovers that:
// lifecycleRecovery.ts), and when the workspace changed since the receipt was prepared (someone did
// work that no receipt measured). Under agent-infra-0.9.2 there is no deadline, and `abort` is the way out.

export async function recoverPrepared(ctx: OrchestrationContext, taskRef: string): Promise<OrchestrationResult> {
  if (ctx.rules.activationDeadlineMs === null) {
    return failed(
      'BATON_INTENT_NOT_IN_PROFILE',
      `recover-prepared belongs to profile ${LATER_PROFILE}; this repository's profile is ${ctx.rules.name}, where baton task ${taskRef} abort --reason "…" gives a delegation up`,
    );
  }
  const opened = requirePending(ctx, taskRef);
  if (!opened.ok) return opened.result;
  const { task, run, receipt } = opened.value;
  if (receipt.status !== 'prepared') {
    return failed(
      'ORCHESTRATION_PREPARED_RECOVERY_UNSAFE',
      `only a never-activated prepared receipt can recover: delegation ${receipt.id} is ${receipt.status}`,
      task.taskId,
    );
  }
  const deadline = receipt.activationDeadlineAt;
  if (deadline && Date.parse(ctx.now()) <= Date.parse(deadline)) {
    return failed(
      'ORCHESTRATION_PREPARED_RECOVERY_EARLY',
      `prepared receipt activation deadline has not elapsed: delegation ${receipt.id} may still start until ${deadline}`,
      task.taskId,
    );
  }
  let changed: string[];
  try {
    const now = await ctx.fingerprinter.capture(ctx.repoRoot);
    // The run file itself changed (the spawn claim, the deadline): not work anybody did.
    const own = path.relative(ctx.repoRoot, runFilePath(task.taskDir)).split(path.sep).join('/');
    changed = (await ctx.fingerprinter.diff(ctx.repoRoot, receipt.beforeFingerprint, now)).filter((file) => file !== own);
  } catch (error) {
    return failed('ORCHESTRATION_SNAPSHOT_FAILED', errorMessage(error), task.taskId);
  }
  if (changed.length > 0) {
    return failed(
      'ORCHESTRATION_PREPARED_RECOVERY_DRIFT',
      `workspace changed after delegation preparation (${changed.slice(0, 5).join(', ')}${changed.length > 5 ? ', …' : ''}); revert it, or baton task ${task.taskId} abort --reason "…" to give the delegation up`,
      task.taskId,
    );
  }
  const aborted = abortDelegation(receipt, { now: ctx.now });
  if (!aborted.ok) return failed(aborted.code, aborted.message, task.taskId);
  const released = withUpdates(ctx, run, {
    status: 'running',
    pause: null,
    nextStage: null,
    pendingDelegation: null,
    receipts: Object.freeze([...run.receipts, aborted.receipt]),
  });
  save(ctx, task, released);
  ctx.warnings.push(`delegation ${receipt.id} was released (never activated): route and prepare again`);
  return reportRun(task.taskId, released, true);
}
