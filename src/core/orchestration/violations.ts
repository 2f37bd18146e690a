import type { ErrorCode } from '../errorCodes.ts';
import { isErrorCode } from '../errorCodes.ts';
import { failed } from '../results.ts';
import { extendSealedDelegation, sealDelegation } from '../receipts.ts';
import { isActiveRunFilePath } from '../taskLayout.ts';
import type { DelegationReceipt, OrchestrationResult, OrchestrationRun, PauseInfo, ReceiptOutcome, WriteViolation } from '../types.ts';
import { errorMessage, reportRun, save, withUpdates } from './steps.ts';
import type { OrchestrationContext, Resolved } from './steps.ts';
import { activeRuns } from './scan.ts';

// Write violations (baton addition, docs/lifecycle.md §6.3): changes the write restriction refused
// (a reviewer's writes outside its allow-list; a child's turn after its delegation was consumed)
// stay refused whatever the orchestrator does next. 0.9.2 only paused the run, and its `advance`
// ignored the pause: a resumed reviewer's code edit was consumed with the review. Here the
// violation is recorded on the run and checked where a delegation would be consumed or prepared,
// or a run resumed; only evidence (the workspace measured back) or a human's `abort` resolves it.

type Detected = Pick<WriteViolation, 'code' | 'message' | 'receiptId' | 'childId' | 'baseline' | 'allowedPaths' | 'paths'>;

/** The run's open violation (the latest one not resolved), or null. */
export function openViolation(run: Pick<OrchestrationRun, 'violations'>): WriteViolation | null {
  const list = run.violations ?? [];
  for (let index = list.length - 1; index >= 0; index -= 1) if (list[index]!.resolvedAt === null) return list[index]!;
  return null;
}

function violationCode(violation: WriteViolation): ErrorCode {
  return isErrorCode(violation.code) ? violation.code : 'DELEGATION_REVIEWER_WRITE_FORBIDDEN';
}

function quoted(paths: readonly string[]): string {
  const shown = paths
    .slice(0, 10)
    .map((item) => `'${item}'`)
    .join(', ');
  return paths.length > 10 ? `${shown} and ${paths.length - 10} more` : shown;
}

/** What to do about an open violation of `run` (task `taskId`), with the paths that still differ. */
export function violationAdvice(taskId: string, run: OrchestrationRun, violation: WriteViolation, offending: readonly string[]): string {
  const pending = run.pendingDelegation;
  const blocked = pending
    ? `delegation ${pending.id} cannot be consumed, nor any delegation of this repository prepared,`
    : 'the run cannot be resumed, nor any delegation of this repository prepared,';
  const next = pending ? 'advance' : 'begin-or-resume';
  const one = offending.length === 1;
  const keep = pending
    ? `'baton task ${taskId} abort --reason "…"' (delegation ${pending.id} is given up; the changes stay, unreviewed)`
    : `'baton task ${taskId} abort --reason "…"' (the changes stay, belonging to no delegation)`;
  return (
    `${blocked} while ${quoted(offending)} ${one ? 'differs' : 'differ'} from the workspace baton recorded (tree ${violation.baseline}). ` +
    `To continue, put ${one ? 'it' : 'them'} back ('git restore --source=${violation.baseline} -- <path>' restores a file that tree holds; delete a file it does not hold), ` +
    `then run 'baton task ${taskId} ${next}' again: baton measures the workspace. ` +
    `To keep the changes instead, a human runs ${keep}, then 'baton task ${taskId} begin-or-resume'`
  );
}

function violationPause(taskId: string, run: OrchestrationRun, violation: WriteViolation, offending: readonly string[]): PauseInfo {
  return {
    code: violation.code,
    message: `${violation.message}; ${violationAdvice(taskId, run, violation, offending)}`,
    recoverable: true,
  };
}

/**
 * Records a detected violation and pauses its run with the violation's code, upstream's message and
 * what to do. An open violation absorbs a later one: its baseline is kept, the paths are joined, and
 * only paths both allow stay allowed.
 */
export function pauseForViolation(
  ctx: OrchestrationContext,
  task: Resolved,
  run: OrchestrationRun,
  detected: Detected,
): OrchestrationResult {
  const list = run.violations ?? [];
  const open = openViolation(run);
  const recorded: WriteViolation = open
    ? {
        ...open,
        paths: [...new Set([...open.paths, ...detected.paths])],
        allowedPaths: open.allowedPaths.filter((allowed) => detected.allowedPaths.includes(allowed)),
      }
    : { ...detected, detectedAt: ctx.now(), resolvedAt: null, resolution: null };
  const violations = open ? list.map((item) => (item === open ? recorded : item)) : [...list, recorded];
  const paused = withUpdates(ctx, run, { status: 'paused', violations, pause: violationPause(task.taskId, run, recorded, recorded.paths) });
  save(ctx, task, paused);
  return reportRun(task.taskId, paused, true);
}

/** The refusal of a command `violation` holds back: the run paused with what to do, and the error. */
function refusal(
  ctx: OrchestrationContext,
  task: Resolved,
  run: OrchestrationRun,
  violation: WriteViolation,
  offending: readonly string[],
): OrchestrationResult {
  const pause = violationPause(task.taskId, run, violation, offending);
  const current = run.pause;
  const unchanged = run.status === 'paused' && current?.code === pause.code && current.message === pause.message && current.recoverable;
  const paused = unchanged ? run : withUpdates(ctx, run, { status: 'paused', pause });
  if (!unchanged) save(ctx, task, paused);
  return {
    status: 'paused',
    changed: !unchanged,
    taskId: task.taskId,
    run: paused,
    next: null,
    error: { code: violationCode(violation), message: pause.message },
  };
}

/** A pending receipt of the offending child, brought up to the workspace measured now. */
async function measuredReceipt(ctx: OrchestrationContext, receipt: DelegationReceipt, now: string): Promise<ReceiptOutcome> {
  const childId = receipt.childId ?? '';
  if (receipt.status === 'stage-completed') {
    // Its stop was refused for the writes that are now gone: that stop seals it.
    const changedPaths = await ctx.fingerprinter.diff(ctx.repoRoot, receipt.beforeFingerprint, now);
    return sealDelegation(receipt, { childId, exitCode: 0, afterFingerprint: now, changedPaths }, { now: ctx.now });
  }
  if (receipt.status === 'sealed' && receipt.afterFingerprint !== now) {
    // Allowed writes since the seal (its review artifact) are the receipt's, as a later turn's are.
    const changedPaths = await ctx.fingerprinter.diff(ctx.repoRoot, receipt.beforeFingerprint, now);
    return extendSealedDelegation(receipt, { childId, afterFingerprint: now, changedPaths });
  }
  return { ok: true, receipt };
}

export type Settled = { ok: true; run: OrchestrationRun } | { ok: false; result: OrchestrationResult };

/**
 * The evidence an open violation of `run` waits for: the workspace measured now. Back at the
 * baseline outside the allowed paths (run files are baton's own writes) → resolved `reverted`, and a
 * pending receipt of the offending child follows the workspace (sealed when its stop was refused,
 * extended when it was sealed). Otherwise the command is refused, naming the paths that still differ.
 */
export async function settleViolation(ctx: OrchestrationContext, task: Resolved, run: OrchestrationRun): Promise<Settled> {
  const open = openViolation(run);
  if (!open) return { ok: true, run };
  let now: string;
  let offending: string[];
  let pending = run.pendingDelegation;
  try {
    now = await ctx.fingerprinter.capture(ctx.repoRoot);
    const allowed = new Set(open.allowedPaths);
    offending = (await ctx.fingerprinter.diff(ctx.repoRoot, open.baseline, now)).filter(
      (item) => !isActiveRunFilePath(item) && !allowed.has(item),
    );
    if (offending.length === 0 && pending?.id === open.receiptId) {
      const measured = await measuredReceipt(ctx, pending, now);
      if (!measured.ok) return { ok: false, result: failed(measured.code, measured.message, task.taskId) };
      pending = measured.receipt;
    }
  } catch (error) {
    return { ok: false, result: failed('ORCHESTRATION_SNAPSHOT_FAILED', errorMessage(error), task.taskId) };
  }
  if (offending.length > 0) return { ok: false, result: refusal(ctx, task, run, open, offending) };
  const resolvedAt = ctx.now();
  const violations = (run.violations ?? []).map(
    (item): WriteViolation => (item === open ? { ...item, resolvedAt, resolution: 'reverted' } : item),
  );
  ctx.warnings.push(
    `the workspace is back at the fingerprint baton recorded (${open.baseline}): ${open.code} of child ${open.childId} is resolved`,
  );
  return { ok: true, run: withUpdates(ctx, run, { violations, pendingDelegation: pending }) };
}

/** `run` with its open violation resolved by a human's decision to keep the changes (abort). */
export function keepViolation(
  ctx: OrchestrationContext,
  run: OrchestrationRun,
  reason: string | undefined,
): { violations: readonly WriteViolation[]; note: string } | null {
  const open = openViolation(run);
  if (!open) return null;
  const resolvedAt = ctx.now();
  const violations = (run.violations ?? []).map(
    (item): WriteViolation =>
      item === open ? { ...item, resolvedAt, resolution: 'kept', ...(reason !== undefined ? { reason } : {}) } : item,
  );
  return { violations, note: `the changes refused with ${open.code} (${quoted(open.paths)}) stay in the workspace by this decision` };
}

/**
 * An open violation of a run of the repository other than `exceptTaskId`'s (the workspace is
 * shared: changes of one task's child end up in any other delegation's fingerprints).
 */
export function repositoryViolation(
  ctx: OrchestrationContext,
  exceptTaskId: string | null,
): { taskId: string; run: OrchestrationRun; violation: WriteViolation } | null {
  for (const { taskId, run } of activeRuns(ctx)) {
    if (taskId === exceptTaskId) continue;
    const violation = openViolation(run);
    if (violation) return { taskId, run, violation };
  }
  return null;
}

/** The refusal of a command of task `taskId` held back by another run's violation; nothing is written. */
export function refusedForRepository(
  taskId: string,
  found: { taskId: string; run: OrchestrationRun; violation: WriteViolation },
): OrchestrationResult {
  const { violation } = found;
  return failed(
    violationCode(violation),
    `task ${found.taskId} has changes its write restriction refused (${violation.message}); ${violationAdvice(found.taskId, found.run, violation, violation.paths)}`,
    taskId,
  );
}
