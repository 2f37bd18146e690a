import { failed } from '../results.ts';
import { resolveTaskRef } from '../taskRef.ts';
import type { RunTransaction } from '../runStore.ts';
import type { ProfileRules } from '../profile.ts';
import type { ReviewerVendorPolicy } from '../profiles/reviewerVendor.ts';
import type { DelegationReceipt, OrchestrationNext, OrchestrationResult, OrchestrationRun, WorkspaceFingerprinter } from '../types.ts';
import { unhonouredUpstreamField } from './upstreamRun.ts';
import type { StageCost } from '../stageCost.ts';

// The steps every orchestration function is made of (docs/lifecycle.md §7.3): resolve the task
// reference, load its run (a corrupt file stops the command, decision 2), require a run or a pending
// delegation, stage the updated run (updatedAt from the injected clock, decision 3; no pause unless
// paused, decision 5), and report the run's real status (decision 4).

export const DEFAULT_MAX_STEPS = 24;

export type OrchestrationContext = Readonly<{
  repoRoot: string;
  now: () => string;
  newId: () => string;
  fingerprinter: WorkspaceFingerprinter;
  tx: RunTransaction;
  /** Things a scan skipped (e.g. corrupt run files of other tasks), reported with the result. */
  warnings: string[];
  /** The rules of the repository's lifecycle profile (src/core/profile.ts). */
  rules: ProfileRules;
  /** A stop's fact: what the stage cost by the client's record, read by the caller (EngineDeps.stopCost). */
  stopCost?: StageCost;
  /** The repository's reviewer-vendor policy where its profile enforces one, else null (vendorPolicy.ts). */
  reviewerVendor: ReviewerVendorPolicy | null;
}>;

export type Resolved = Extract<ReturnType<typeof resolveTaskRef>, { ok: true }>;

export function reportRun(
  taskId: string,
  run: OrchestrationRun,
  changed: boolean,
  next: OrchestrationNext | null = null,
): OrchestrationResult {
  return { status: run.status, changed, taskId, run, next, error: null };
}

/** Standalone tasks (no run) tolerate stage events as no-ops, as upstream does. */
export function standaloneNoop(taskId: string): OrchestrationResult {
  return { status: 'running', changed: false, taskId, run: null, next: null, error: null };
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

type Step<T> = { ok: true; value: T } | { ok: false; result: OrchestrationResult };

export function resolve(ctx: OrchestrationContext, taskRef: string): Step<Resolved> {
  const resolved = resolveTaskRef(taskRef, { repoRoot: ctx.repoRoot });
  return resolved.ok ? { ok: true, value: resolved } : { ok: false, result: failed(resolved.code, resolved.message, resolved.taskId) };
}

/** The task's run, null when there is none; a corrupt file stops the command (decision 2). */
/** `reading`: the intent only shows the run (`status`), so a later upstream field baton cannot honour is no obstacle. */
export type LoadOptions = Readonly<{ reading?: boolean }>;

export function loadRun(ctx: OrchestrationContext, task: Resolved, options: LoadOptions = {}): Step<OrchestrationRun | null> {
  const read = ctx.tx.read(task.taskDir);
  if (read.kind === 'invalid') return { ok: false, result: failed('ORCHESTRATION_STATE_INVALID', read.message, task.taskId) };
  const run = read.kind === 'ok' ? read.run : null;
  const unhonoured = run && ctx.rules.laterUpstreamRuns && !options.reading ? unhonouredUpstreamField(run, ctx.rules.name) : null;
  if (unhonoured !== null) return { ok: false, result: failed('ORCHESTRATION_STATE_INVALID', unhonoured, task.taskId) };
  return { ok: true, value: run };
}

type Opened<R> = { task: Resolved; run: R };

/** resolve → load run: the task and its run (null when there is none). */
export function openRun(ctx: OrchestrationContext, taskRef: string, options: LoadOptions = {}): Step<Opened<OrchestrationRun | null>> {
  const task = resolve(ctx, taskRef);
  if (!task.ok) return task;
  const loaded = loadRun(ctx, task.value, options);
  if (!loaded.ok) return loaded;
  return { ok: true, value: { task: task.value, run: loaded.value } };
}

function runMissing(taskId: string): OrchestrationResult {
  return failed('ORCHESTRATION_RUN_MISSING', 'no orchestration run exists', taskId);
}

/** resolve → load run → missing check: a task without a run ends the command with `ifMissing`'s result. */
export function requireRun(
  ctx: OrchestrationContext,
  taskRef: string,
  ifMissing: (taskId: string) => OrchestrationResult = runMissing,
  options: LoadOptions = {},
): Step<Opened<OrchestrationRun>> {
  const opened = openRun(ctx, taskRef, options);
  if (!opened.ok) return opened;
  const { task, run } = opened.value;
  return run ? { ok: true, value: { task, run } } : { ok: false, result: ifMissing(task.taskId) };
}

/** resolve → load run → the pending delegation, which the command acts on; none (or no run) is DELEGATION_MISSING. */
export function requirePending(
  ctx: OrchestrationContext,
  taskRef: string,
): Step<Opened<OrchestrationRun> & { receipt: DelegationReceipt }> {
  const opened = openRun(ctx, taskRef);
  if (!opened.ok) return opened;
  const { task, run } = opened.value;
  if (!run?.pendingDelegation)
    return { ok: false, result: failed('ORCHESTRATION_DELEGATION_MISSING', 'no pending delegation exists', task.taskId) };
  return { ok: true, value: { task, run, receipt: run.pendingDelegation } };
}

export function withUpdates(ctx: OrchestrationContext, run: OrchestrationRun, updates: Partial<OrchestrationRun>): OrchestrationRun {
  const next = { ...run, ...updates, updatedAt: ctx.now() };
  if (next.status !== 'paused') next.pause = null;
  return Object.freeze(next);
}

export function save(ctx: OrchestrationContext, task: Resolved, run: OrchestrationRun): void {
  ctx.tx.stage(task.taskDir, run);
}

export function pauseRun(
  ctx: OrchestrationContext,
  task: Resolved,
  run: OrchestrationRun,
  code: string,
  message: string,
  recoverable: boolean,
): OrchestrationResult {
  const paused = withUpdates(ctx, run, { status: 'paused', pause: { code, message, recoverable } });
  save(ctx, task, paused);
  return reportRun(task.taskId, paused, true);
}

export function pauseByRef(
  ctx: OrchestrationContext,
  taskRef: string,
  code: string,
  message: string,
  recoverable: boolean,
): OrchestrationResult {
  const opened = requireRun(ctx, taskRef);
  if (!opened.ok) return opened.result;
  return pauseRun(ctx, opened.value.task, opened.value.run, code, message, recoverable);
}
