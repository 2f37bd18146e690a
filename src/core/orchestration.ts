import type { ErrorCode } from './errorCodes.ts';
import { failed } from './results.ts';
import fs from 'node:fs';
import path from 'node:path';
import { resolveTaskRef } from './taskRef.ts';
import { activeTaskDirs, isActiveRunFilePath } from './taskLayout.ts';
import { isLifecycleClientId } from './clients.ts';
import { parseTypedTaskFrontmatter } from './frontmatter.ts';
import { parseLedger, summarizeLedgerStage, validateLedgerRows } from './ledger.ts';
import { parseReviewSummary } from './reviewSummary.ts';
import { looseArtifactName, looseHighestRound } from './artifacts.ts';
import { routeFromArtifacts } from './route.ts';
import { ARTIFACT_INVALID_CODE, stageArtifactProblem } from './stageArtifact.ts';
import {
  abortDelegation,
  activateDelegation,
  claimDelegationSpawn,
  completeDelegationStage,
  consumeDelegation,
  extendSealedDelegation,
  firstForbiddenReviewerPath,
  managedDelegationRole,
  prepareDelegation,
  sealDelegation,
} from './receipts.ts';
import type { ActivationEvent } from './receipts.ts';
import { getAgentClientCapability, isAgentClientId } from './clients.ts';
import { readRunFile } from './runStore.ts';
import type { RunRead, RunTransaction } from './runStore.ts';
import type {
  DelegationReceipt,
  DelegationRole,
  DelegationStage,
  OrchestrationNext,
  OrchestrationResult,
  OrchestrationRun,
  WorkspaceFingerprinter,
} from './types.ts';

// The orchestration functions of docs/lifecycle.md §7.3, applied to one repository. They read run files
// through a RunTransaction and stage their writes there; the caller decides how writes reach disk.
// Behaviour, codes and messages are agent-infra 0.9.2's, except docs/architecture.md's decisions:
// corrupt run files are reported (2), updatedAt uses the injected clock (3), a result reports the
// run's real status (4), running/completed runs carry no pause (5), and `abort` exists (6).

export const DEFAULT_MAX_STEPS = 24;

export type OrchestrationContext = Readonly<{
  repoRoot: string;
  now: () => string;
  newId: () => string;
  fingerprinter: WorkspaceFingerprinter;
  tx: RunTransaction;
  /** Things a scan skipped (e.g. corrupt run files of other tasks), reported with the result. */
  warnings: string[];
}>;

type Resolved = Extract<ReturnType<typeof resolveTaskRef>, { ok: true }>;

export { failed } from './results.ts';

function reportRun(taskId: string, run: OrchestrationRun, changed: boolean, next: OrchestrationNext | null = null): OrchestrationResult {
  return { status: run.status, changed, taskId, run, next, error: null };
}

/** Standalone tasks (no run) tolerate stage events as no-ops, as upstream does. */
function standaloneNoop(taskId: string): OrchestrationResult {
  return { status: 'running', changed: false, taskId, run: null, next: null, error: null };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

type Step<T> = { ok: true; value: T } | { ok: false; result: OrchestrationResult };

function resolve(ctx: OrchestrationContext, taskRef: string): Step<Resolved> {
  const resolved = resolveTaskRef(taskRef, { repoRoot: ctx.repoRoot });
  return resolved.ok ? { ok: true, value: resolved } : { ok: false, result: failed(resolved.code, resolved.message, resolved.taskId) };
}

/** The task's run, null when there is none; a corrupt file stops the command (decision 2). */
function loadRun(ctx: OrchestrationContext, task: Resolved): Step<OrchestrationRun | null> {
  const read = ctx.tx.read(task.taskDir);
  if (read.kind === 'invalid') return { ok: false, result: failed('ORCHESTRATION_STATE_INVALID', read.message, task.taskId) };
  return { ok: true, value: read.kind === 'ok' ? read.run : null };
}

type Opened<R> = { task: Resolved; run: R };

/** resolve → load run: the task and its run (null when there is none). */
function openRun(ctx: OrchestrationContext, taskRef: string): Step<Opened<OrchestrationRun | null>> {
  const task = resolve(ctx, taskRef);
  if (!task.ok) return task;
  const loaded = loadRun(ctx, task.value);
  if (!loaded.ok) return loaded;
  return { ok: true, value: { task: task.value, run: loaded.value } };
}

function runMissing(taskId: string): OrchestrationResult {
  return failed('ORCHESTRATION_RUN_MISSING', 'no orchestration run exists', taskId);
}

/** resolve → load run → missing check: a task without a run ends the command with `ifMissing`'s result. */
function requireRun(ctx: OrchestrationContext, taskRef: string, ifMissing: (taskId: string) => OrchestrationResult = runMissing): Step<Opened<OrchestrationRun>> {
  const opened = openRun(ctx, taskRef);
  if (!opened.ok) return opened;
  const { task, run } = opened.value;
  return run ? { ok: true, value: { task, run } } : { ok: false, result: ifMissing(task.taskId) };
}

/** resolve → load run → the pending delegation, which the command acts on; none (or no run) is DELEGATION_MISSING. */
function requirePending(ctx: OrchestrationContext, taskRef: string): Step<Opened<OrchestrationRun> & { receipt: DelegationReceipt }> {
  const opened = openRun(ctx, taskRef);
  if (!opened.ok) return opened;
  const { task, run } = opened.value;
  if (!run?.pendingDelegation) return { ok: false, result: failed('ORCHESTRATION_DELEGATION_MISSING', 'no pending delegation exists', task.taskId) };
  return { ok: true, value: { task, run, receipt: run.pendingDelegation } };
}

function withUpdates(ctx: OrchestrationContext, run: OrchestrationRun, updates: Partial<OrchestrationRun>): OrchestrationRun {
  const next = { ...run, ...updates, updatedAt: ctx.now() };
  if (next.status !== 'paused') next.pause = null;
  return Object.freeze(next);
}

function save(ctx: OrchestrationContext, task: Resolved, run: OrchestrationRun): void {
  ctx.tx.stage(task.taskDir, run);
}

function pauseRun(
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

// ---------------------------------------------------------------------------------------------
// begin-or-resume, route, status

export function beginOrResume(ctx: OrchestrationContext, taskRef: string, options: { maxSteps?: number } = {}): OrchestrationResult {
  const opened = openRun(ctx, taskRef);
  if (!opened.ok) return opened.result;
  const { task, run: existing } = opened.value;
  if (existing) {
    if (existing.status === 'paused' && existing.pause?.recoverable && existing.pendingDelegation === null) {
      const resumed = withUpdates(ctx, existing, { status: 'running', pause: null });
      save(ctx, task, resumed);
      return reportRun(task.taskId, resumed, true);
    }
    return reportRun(task.taskId, existing, false);
  }
  const now = ctx.now();
  const run: OrchestrationRun = {
    schemaVersion: 1,
    taskId: task.taskId,
    runId: ctx.newId(),
    status: 'running',
    nextStage: null,
    stepCount: 0,
    maxSteps: options.maxSteps ?? DEFAULT_MAX_STEPS,
    baseline: '',
    pendingDelegation: null,
    receipts: [],
    pause: null,
    commitAuthorization: { issuedAt: null, consumedAt: null },
    createdAt: now,
    updatedAt: now,
  };
  save(ctx, task, run);
  return reportRun(task.taskId, run, true);
}

/** Commit gates of docs/lifecycle.md §7.3, checked only when routing reaches `commit`. */
function commitGate(task: Resolved, taskContent: string): OrchestrationResult | null {
  const reviewRound = looseHighestRound(task.taskDir, 'review-code');
  let review: ReturnType<typeof parseReviewSummary> | null = null;
  try {
    review = parseReviewSummary(fs.readFileSync(path.join(task.taskDir, looseArtifactName('review-code', reviewRound)), 'utf8'));
  } catch {
    review = null;
  }
  if (!review?.ok || review.summary.manualValidation === null) {
    return failed('ORCHESTRATION_REVIEW_INVALID', 'latest code review has no numeric manual-validation count', task.taskId);
  }
  if (review.summary.manualValidation > 0) {
    return failed('ORCHESTRATION_MANUAL_VALIDATION_PENDING', 'manual validation must be completed before commit', task.taskId);
  }
  const rows = parseLedger(taskContent);
  const ledgerError = validateLedgerRows(rows);
  if (ledgerError) return failed('ORCHESTRATION_LEDGER_INVALID', ledgerError.message, task.taskId);
  if (!summarizeLedgerStage(rows, 'code').canAdvance) {
    return failed('ORCHESTRATION_LEDGER_BLOCKED', 'code review ledger has unresolved findings or human decisions', task.taskId);
  }
  return null;
}

/** Read-only. Reports the run's real status when a run exists (decision 4), else `running`. */
export function route(ctx: OrchestrationContext, taskRef: string): OrchestrationResult {
  const task = resolve(ctx, taskRef);
  if (!task.ok) return task.result;
  let content: string;
  try {
    content = fs.readFileSync(task.value.taskMdPath, 'utf8');
  } catch (error) {
    return failed('ORCHESTRATION_TASK_READ_FAILED', String(error), task.value.taskId);
  }
  try {
    parseTypedTaskFrontmatter(content);
  } catch (error) {
    return failed('ORCHESTRATION_TASK_INVALID', errorMessage(error), task.value.taskId);
  }
  const decision = routeFromArtifacts(task.value.taskDir);
  if (!decision.ok) {
    return failed('ORCHESTRATION_ROUTE_UNKNOWN', `cannot determine a unique lifecycle action: ${decision.message}`, task.value.taskId);
  }
  const next = decision.next;
  if (next.stage === 'commit') {
    const blocked = commitGate(task.value, content);
    if (blocked) return blocked;
  }
  const loaded = loadRun(ctx, task.value);
  if (!loaded.ok) return loaded.result;
  const run = loaded.value;
  return { status: run?.status ?? 'running', changed: false, taskId: task.value.taskId, run, next, error: null };
}

export function status(ctx: OrchestrationContext, taskRef: string): OrchestrationResult {
  const opened = requireRun(ctx, taskRef);
  if (!opened.ok) return opened.result;
  return reportRun(opened.value.task.taskId, opened.value.run, false);
}

// ---------------------------------------------------------------------------------------------
// Repository scan: pending delegations across every active task (prepare guard, native hooks)

export type PendingMatch = { taskId: string; run: OrchestrationRun; receipt: DelegationReceipt };

function pendingDelegations(ctx: OrchestrationContext, predicate: (receipt: DelegationReceipt) => boolean): PendingMatch[] {
  return scanPending(ctx.repoRoot, (dir) => ctx.tx.read(dir), ctx.warnings, predicate);
}

function scanPending(
  repoRoot: string,
  read: (taskDir: string) => RunRead,
  warnings: string[],
  predicate: (receipt: DelegationReceipt) => boolean,
): PendingMatch[] {
  const matches: PendingMatch[] = [];
  for (const { taskId, dir } of activeTaskDirs(repoRoot)) {
    const run = read(dir);
    if (run.kind === 'invalid') {
      warnings.push(`skipped corrupt run state: ${run.message}`);
      continue;
    }
    if (run.kind === 'missing') continue;
    const receipt = run.run.pendingDelegation;
    if (receipt && predicate(receipt)) matches.push({ taskId, run: run.run, receipt });
  }
  return matches;
}

/**
 * Every pending delegation in the repository, read straight from the run files (read-only callers
 * such as the PreToolUse spawn check and `baton runs`).
 */
export function repositoryPendingDelegations(repoRoot: string): { matches: PendingMatch[]; warnings: string[] } {
  const warnings: string[] = [];
  return { matches: scanPending(repoRoot, readRunFile, warnings, () => true), warnings };
}

function uniquePending(ctx: OrchestrationContext, client: string, predicate: (receipt: DelegationReceipt) => boolean): PendingMatch | OrchestrationResult {
  const matches = pendingDelegations(ctx, (receipt) => receipt.client === client && predicate(receipt));
  if (matches.length === 0) return failed('ORCHESTRATION_DELEGATION_MISSING', 'no matching lifecycle delegation exists');
  if (matches.length > 1) return failed('ORCHESTRATION_DELEGATION_AMBIGUOUS', 'multiple lifecycle delegations match the native hook event');
  return matches[0]!;
}

function isResult(value: PendingMatch | OrchestrationResult): value is OrchestrationResult {
  return 'status' in value && 'error' in value;
}

/**
 * The id of the receipt a native hook event of `client` would be applied to: the repository's one
 * pending delegation of that client, or null. The worker's journal stores it with each native event
 * so a repeated event id is replayed only when it still targets the same delegation: a reused child
 * id for a later delegation is a new event, not a duplicate (docs/hooks.md "Duplicates").
 */
export function nativeEventTarget(repoRoot: string, client: string, read: (taskDir: string) => RunRead = readRunFile): string | null {
  const matches = scanPending(repoRoot, read, [], (receipt) => receipt.client === client);
  return matches.length === 1 ? matches[0]!.receipt.id : null;
}

// ---------------------------------------------------------------------------------------------
// spawn check and claim (PreToolUse, baton addition)

export type SpawnRefusal = Readonly<{ code: ErrorCode; message: string; taskId: string | null }>;

/**
 * Which prepared delegation a lifecycle spawn of `nativeAgent` by `client` may start, or why none:
 * the one-pending rule as seen before the spawning tool runs. Shared by the read-only file check
 * (Redis down) and the worker's claim.
 */
export function spawnTarget(matches: readonly PendingMatch[], repoRoot: string, client: string, nativeAgent: string): PendingMatch | SpawnRefusal {
  const role = managedDelegationRole(nativeAgent);
  if (!role) return { code: 'DELEGATION_IGNORED', message: `subagent '${nativeAgent}' is not lifecycle-managed`, taskId: null };
  const prepared = matches.filter((match) => match.receipt.client === client && match.receipt.status === 'prepared');
  if (prepared.length === 0) {
    const other = matches[0];
    const detail = other
      ? ` The pending delegation is ${other.receipt.id} of ${other.taskId} (${other.receipt.stage}, client ${other.receipt.client}, ${other.receipt.status}); finish it or run 'baton task ${other.taskId} abort'.`
      : ` Run 'baton task <task> route' and 'baton task <task> prepare --client ${client}' first.`;
    return {
      code: 'ORCHESTRATION_DELEGATION_MISSING',
      message: `no lifecycle delegation is prepared for ${nativeAgent} in ${repoRoot}, so this spawn would not be recorded.${detail}`,
      taskId: other?.taskId ?? null,
    };
  }
  if (prepared.length > 1) {
    return {
      code: 'ORCHESTRATION_DELEGATION_AMBIGUOUS',
      message: `${prepared.length} prepared delegations match ${client} in ${repoRoot} (${prepared.map((match) => match.taskId).join(', ')}); abort all but one before spawning.`,
      taskId: null,
    };
  }
  const match = prepared[0]!;
  if (match.receipt.role !== role) {
    return {
      code: 'DELEGATION_ROLE_MISMATCH',
      message: `the prepared delegation ${match.receipt.id} of ${match.taskId} is ${match.receipt.stage} round ${match.receipt.round} for a ${match.receipt.role}; spawn agent-infra-lifecycle-${match.receipt.role}, not ${nativeAgent}.`,
      taskId: match.taskId,
    };
  }
  return match;
}

function isRefusal(value: PendingMatch | SpawnRefusal): value is SpawnRefusal {
  return 'code' in value;
}

/**
 * PreToolUse through the serialized worker: exactly one tool call claims the prepared delegation,
 * so of several spawns in one assistant message only one passes. Refusals change nothing (the run
 * is not paused: nothing has started yet).
 */
export function claimSpawn(
  ctx: OrchestrationContext,
  client: string,
  event: { nativeAgent: string; toolCallId: string; notAfter?: string | undefined },
): OrchestrationResult {
  if (event.notAfter !== undefined && Date.parse(ctx.now()) > Date.parse(event.notAfter)) {
    return failed(
      'DELEGATION_SPAWN_CLAIM_EXPIRED',
      `the spawn claim of tool call ${event.toolCallId} arrived after its hook gave up (${event.notAfter}); that spawn was blocked, nothing was claimed`,
    );
  }
  const target = spawnTarget(pendingDelegations(ctx, () => true), ctx.repoRoot, client, event.nativeAgent);
  if (isRefusal(target)) return failed(target.code, target.message, target.taskId);
  const outcome = claimDelegationSpawn(target.receipt, event, { now: ctx.now });
  if (!outcome.ok) {
    const hint = outcome.code === 'DELEGATION_SPAWN_CLAIMED' ? ` If that spawn never started, run 'baton task ${target.taskId} abort' and prepare again.` : '';
    return failed(outcome.code, `${outcome.message}${hint}`, target.taskId);
  }
  if ('unchanged' in outcome) return reportRun(target.taskId, target.run, false);
  const task = resolve(ctx, target.taskId);
  if (!task.ok) return task.result;
  const updated = withUpdates(ctx, target.run, { pendingDelegation: outcome.receipt });
  save(ctx, task.value, updated);
  return reportRun(target.taskId, updated, true);
}

// ---------------------------------------------------------------------------------------------
// later turns of a child (baton addition, docs/hooks.md "Multi-turn children")

type RunEntry = { taskId: string; run: OrchestrationRun };

function activeRuns(ctx: OrchestrationContext): RunEntry[] {
  const runs: RunEntry[] = [];
  for (const { taskId, dir } of activeTaskDirs(ctx.repoRoot)) {
    const read = ctx.tx.read(dir);
    if (read.kind === 'ok') runs.push({ taskId, run: read.run });
  }
  return runs;
}

/** The latest consumed receipt of `client` whose child is `childId`, across the active runs. */
function consumedReceiptOfChild(ctx: OrchestrationContext, client: string, childId: string): PendingMatch | null {
  let found: PendingMatch | null = null;
  for (const { taskId, run } of activeRuns(ctx)) {
    for (const receipt of run.receipts) {
      if (receipt.status !== 'consumed' || receipt.client !== client || receipt.childId !== childId) continue;
      if (!found || (receipt.consumedAt ?? '') > (found.receipt.consumedAt ?? '')) found = { taskId, run, receipt };
    }
  }
  return found;
}

/**
 * The most recent workspace fingerprint baton recorded in the repository: the pending delegation's
 * after- (sealed) or before-fingerprint, else the after-fingerprint of the last consumed receipt.
 */
function latestRecordedFingerprint(ctx: OrchestrationContext): string | null {
  let latest: { at: string; fingerprint: string } | null = null;
  for (const { run } of activeRuns(ctx)) {
    const pending = run.pendingDelegation;
    if (pending) {
      const fingerprint = pending.status === 'sealed' && pending.afterFingerprint ? pending.afterFingerprint : pending.beforeFingerprint;
      return fingerprint;
    }
    for (const receipt of run.receipts) {
      if (receipt.status !== 'consumed' || !receipt.afterFingerprint) continue;
      const at = receipt.consumedAt ?? '';
      if (!latest || at > latest.at) latest = { at, fingerprint: receipt.afterFingerprint };
    }
  }
  return latest?.fingerprint ?? null;
}

export const TURN_AFTER_CONSUMED_CODE = 'DELEGATION_TURN_AFTER_CONSUMED';

/** A later turn of a sealed child: no change is harmless; changes are measured against the receipt. */
async function laterTurnOfSealed(ctx: OrchestrationContext, match: PendingMatch, childId: string): Promise<OrchestrationResult> {
  const task = resolve(ctx, match.taskId);
  if (!task.ok) return task.result;
  const receipt = match.receipt;
  let after: string;
  let sinceSeal: string[];
  let sincePrepare: string[];
  try {
    after = await ctx.fingerprinter.capture(ctx.repoRoot);
    // Run files are baton's own writes after every fingerprint it records, never a child's change.
    sinceSeal = (await ctx.fingerprinter.diff(ctx.repoRoot, receipt.afterFingerprint ?? receipt.beforeFingerprint, after)).filter((item) => !isActiveRunFilePath(item));
    sincePrepare = sinceSeal.length === 0 ? [] : await ctx.fingerprinter.diff(ctx.repoRoot, receipt.beforeFingerprint, after);
  } catch (error) {
    return pauseRun(ctx, task.value, match.run, 'ORCHESTRATION_SNAPSHOT_FAILED', errorMessage(error), true);
  }
  if (sinceSeal.length === 0) {
    ctx.warnings.push(`child ${childId} ended another turn of sealed delegation ${receipt.id} without changes`);
    return reportRun(match.taskId, match.run, false);
  }
  const outcome = extendSealedDelegation(receipt, { childId, afterFingerprint: after, changedPaths: sincePrepare });
  if (!outcome.ok) return pauseRun(ctx, task.value, match.run, outcome.code, outcome.message, true);
  ctx.warnings.push(`child ${childId} ended another turn of sealed delegation ${receipt.id}; changed since the seal: ${sinceSeal.join(', ')}`);
  const updated = withUpdates(ctx, match.run, { pendingDelegation: outcome.receipt });
  save(ctx, task.value, updated);
  return reportRun(match.taskId, updated, true);
}

/** A turn of a child whose delegation was already consumed: its changes belong to no delegation. */
async function turnAfterConsumed(ctx: OrchestrationContext, match: PendingMatch, childId: string): Promise<OrchestrationResult> {
  const task = resolve(ctx, match.taskId);
  if (!task.ok) return task.result;
  const baseline = latestRecordedFingerprint(ctx) ?? match.receipt.afterFingerprint ?? match.receipt.beforeFingerprint;
  let changed: string[];
  try {
    changed = (await ctx.fingerprinter.diff(ctx.repoRoot, baseline, await ctx.fingerprinter.capture(ctx.repoRoot))).filter((item) => !isActiveRunFilePath(item));
  } catch (error) {
    return pauseRun(ctx, task.value, match.run, 'ORCHESTRATION_SNAPSHOT_FAILED', errorMessage(error), true);
  }
  if (changed.length === 0) {
    ctx.warnings.push(`child ${childId} ended a turn after its delegation ${match.receipt.id} was consumed, without changes`);
    return reportRun(match.taskId, match.run, false);
  }
  const forbidden = firstForbiddenReviewerPath(match.receipt, changed);
  const [code, message]: [ErrorCode, string] = forbidden !== undefined
    ? ['DELEGATION_REVIEWER_WRITE_FORBIDDEN', `reviewer changed forbidden path '${forbidden}'`]
    : [
      TURN_AFTER_CONSUMED_CODE,
      `child ${childId} ran a turn after its delegation ${match.receipt.id} (${match.receipt.stage} round ${match.receipt.round}) was consumed and changed ${changed.map((item) => `'${item}'`).join(', ')}; these changes belong to no delegation`,
    ];
  if (match.run.status === 'completed') return failed(code, message, match.taskId);
  return pauseRun(ctx, task.value, match.run, code, message, true);
}

// ---------------------------------------------------------------------------------------------
// prepare

export async function prepare(
  ctx: OrchestrationContext,
  taskRef: string,
  input: { client: string; requestedModel?: string | null },
): Promise<OrchestrationResult> {
  const task = resolve(ctx, taskRef);
  if (!task.ok) return task.result;
  const { taskId } = task.value;
  // 0.9.2's registry threw on an unknown client; baton answers with a usage error instead.
  if (!isAgentClientId(input.client)) return failed('ORCHESTRATION_PAYLOAD_INVALID', `unknown client '${input.client}'`, taskId);
  if (
    getAgentClientCapability(input.client, 'subagents').level === 'unsupported'
    || getAgentClientCapability(input.client, 'orchestration').level === 'unsupported'
  ) {
    return failed('ORCHESTRATION_CLIENT_UNSUPPORTED', `client '${input.client}' does not support lifecycle orchestration`, taskId);
  }
  const loaded = loadRun(ctx, task.value);
  if (!loaded.ok) return loaded.result;
  const run = loaded.value;
  if (!run || run.status !== 'running') return failed('ORCHESTRATION_RUN_NOT_RUNNING', 'a running orchestration is required', taskId);
  if (run.pendingDelegation) return failed('ORCHESTRATION_DELEGATION_BUSY', 'the run already has a pending delegation', taskId);
  // One pending delegation per repository, whatever the other run's status (0.9.2 guard).
  const repositoryPending = pendingDelegations(ctx, (receipt) => isLifecycleClientId(receipt.client));
  if (repositoryPending.length > 0) {
    return failed('ORCHESTRATION_DELEGATION_BUSY', 'the repository already has a pending lifecycle delegation', taskId);
  }
  if (run.stepCount >= run.maxSteps) {
    return pauseRun(ctx, task.value, run, 'ORCHESTRATION_MAX_STEPS', 'maximum orchestration steps reached', true);
  }
  const routed = route(ctx, taskRef);
  if (!routed.next) return routed;
  const next = routed.next;
  let beforeFingerprint: string;
  try {
    beforeFingerprint = await ctx.fingerprinter.capture(ctx.repoRoot);
  } catch (error) {
    return failed('ORCHESTRATION_SNAPSHOT_FAILED', errorMessage(error), taskId);
  }
  const receipt = prepareDelegation(
    {
      taskId,
      runId: run.runId,
      role: next.role,
      stage: next.stage,
      round: next.round,
      artifact: next.artifact,
      client: input.client,
      requestedModel: input.requestedModel ?? null,
      beforeFingerprint,
    },
    { id: ctx.newId, now: ctx.now },
  );
  const updated = withUpdates(ctx, run, {
    nextStage: next.stage,
    pendingDelegation: receipt,
    commitAuthorization:
      next.stage === 'commit' && run.commitAuthorization.issuedAt === null
        ? { issuedAt: ctx.now(), consumedAt: null }
        : run.commitAuthorization,
  });
  save(ctx, task.value, updated);
  return reportRun(taskId, updated, true, next);
}

// ---------------------------------------------------------------------------------------------
// activation (SubagentStart)

export function activate(ctx: OrchestrationContext, taskRef: string, event: ActivationEvent): OrchestrationResult {
  const opened = requirePending(ctx, taskRef);
  if (!opened.ok) return opened.result;
  const { task, run, receipt } = opened.value;
  const outcome = activateDelegation(receipt, event, { now: ctx.now });
  if (!outcome.ok) {
    if (outcome.code === 'DELEGATION_IGNORED') return reportRun(task.taskId, run, false);
    return pauseRun(ctx, task, run, outcome.code, outcome.message, true);
  }
  const updated = withUpdates(ctx, run, { pendingDelegation: outcome.receipt });
  save(ctx, task, updated);
  return reportRun(task.taskId, updated, true);
}

export function activateMatching(ctx: OrchestrationContext, client: string, event: ActivationEvent): OrchestrationResult {
  if (!managedDelegationRole(event.nativeAgent)) {
    return failed('DELEGATION_IGNORED', `subagent '${event.nativeAgent}' is not lifecycle-managed`);
  }
  // baton (multi-turn children): a resumed child (Claude Code SendMessage, Codex send_input) starts
  // another turn of its own delegation; that is recorded in the result, not an error.
  const ofClient = pendingDelegations(ctx, (receipt) => receipt.client === client);
  const own = ofClient.find((match) => match.receipt.status !== 'prepared' && match.receipt.childId === event.childId);
  if (own) {
    ctx.warnings.push(`child ${event.childId} started another turn of delegation ${own.receipt.id} (${own.receipt.status})`);
    return reportRun(own.taskId, own.run, false);
  }
  if (!ofClient.some((match) => match.receipt.status === 'prepared')) {
    const consumed = consumedReceiptOfChild(ctx, client, event.childId);
    if (consumed) {
      ctx.warnings.push(`child ${event.childId} started a turn after its delegation ${consumed.receipt.id} was consumed`);
      return reportRun(consumed.taskId, consumed.run, false);
    }
  }
  const matched = uniquePending(ctx, client, (receipt) => receipt.status === 'prepared');
  if (isResult(matched)) return matched;
  if (matched.run.receipts.some((receipt) => receipt.childId === event.childId)) {
    return pauseByRef(ctx, matched.taskId, 'DELEGATION_IDENTITY_REUSED', 'native child identity was already used by this run', true);
  }
  return activate(ctx, matched.taskId, event);
}

// ---------------------------------------------------------------------------------------------
// stage completion and provenance

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

// ---------------------------------------------------------------------------------------------
// sealing (SubagentStop)

type SealEvent = { childId: string; exitCode: number; afterFingerprint: string; changedPaths: readonly string[] };

function sealLoaded(ctx: OrchestrationContext, task: Resolved, run: OrchestrationRun, receipt: DelegationReceipt, event: SealEvent): OrchestrationResult {
  const outcome = sealDelegation(receipt, event, { now: ctx.now });
  if (!outcome.ok) return pauseRun(ctx, task, run, outcome.code, outcome.message, true);
  const updated = withUpdates(ctx, run, { pendingDelegation: outcome.receipt });
  save(ctx, task, updated);
  return reportRun(task.taskId, updated, true);
}

/** Captures the workspace after a delegation and lists what changed since its receipt was prepared. */
async function workspaceChange(ctx: OrchestrationContext, receipt: DelegationReceipt): Promise<{ afterFingerprint: string; changedPaths: string[] }> {
  const afterFingerprint = await ctx.fingerprinter.capture(ctx.repoRoot);
  const changedPaths = await ctx.fingerprinter.diff(ctx.repoRoot, receipt.beforeFingerprint, afterFingerprint);
  return { afterFingerprint, changedPaths };
}

/**
 * Explicit-task stop (`baton task <ref> hook-stop --child-id --exit-code`). Unlike 0.9.2, baton
 * captures the after-fingerprint and the changed paths itself: a caller-supplied list could slip
 * past the reviewer write restriction.
 */
export async function sealExplicit(ctx: OrchestrationContext, taskRef: string, event: { childId: string; exitCode: number }): Promise<OrchestrationResult> {
  const opened = requirePending(ctx, taskRef);
  if (!opened.ok) return opened.result;
  const { task, run, receipt } = opened.value;
  let change: { afterFingerprint: string; changedPaths: string[] };
  try {
    change = await workspaceChange(ctx, receipt);
  } catch (error) {
    return pauseRun(ctx, task, run, 'ORCHESTRATION_SNAPSHOT_FAILED', errorMessage(error), true);
  }
  return sealLoaded(ctx, task, run, receipt, { ...event, ...change });
}

export async function sealMatching(ctx: OrchestrationContext, client: string, event: { nativeAgent: string; childId: string }): Promise<OrchestrationResult> {
  const role = managedDelegationRole(event.nativeAgent);
  if (!role) return failed('DELEGATION_IGNORED', `subagent '${event.nativeAgent}' is not lifecycle-managed`);
  // baton (multi-turn children): Codex stops every turn, Claude Code stops a resumed child again.
  const ofClient = pendingDelegations(ctx, (receipt) => receipt.client === client && receipt.status !== 'prepared');
  const own = ofClient.find((match) => match.receipt.childId === event.childId);
  if (own?.receipt.status === 'sealed') return laterTurnOfSealed(ctx, own, event.childId);
  if (!own) {
    const consumed = consumedReceiptOfChild(ctx, client, event.childId);
    if (consumed) return turnAfterConsumed(ctx, consumed, event.childId);
  }
  const matched = uniquePending(ctx, client, (receipt) => receipt.status !== 'prepared');
  if (isResult(matched)) return matched;
  const task = resolve(ctx, matched.taskId);
  if (!task.ok) return task.result;
  // baton (with decision 6): the stop of a child whose delegation was aborted can still arrive
  // while the next delegation runs; it says nothing about that delegation, so it changes nothing.
  if (
    matched.receipt.childId !== event.childId
    && matched.run.receipts.some((receipt) => receipt.status === 'aborted' && receipt.childId === event.childId)
  ) {
    ctx.warnings.push(`ignored the stop of child ${event.childId}: its delegation was aborted`);
    return reportRun(task.value.taskId, matched.run, false);
  }
  if (matched.receipt.role !== role) {
    return pauseRun(ctx, task.value, matched.run, 'DELEGATION_ROLE_MISMATCH', `managed role ${role} does not match ${matched.receipt.role}`, true);
  }
  let change: { afterFingerprint: string; changedPaths: string[] };
  try {
    change = await workspaceChange(ctx, matched.receipt);
  } catch (error) {
    return pauseRun(ctx, task.value, matched.run, 'ORCHESTRATION_SNAPSHOT_FAILED', errorMessage(error), true);
  }
  // Native stop payloads carry no exit status: 0.9.2 hard-wires 0.
  return sealLoaded(ctx, task.value, matched.run, matched.receipt, { childId: event.childId, exitCode: 0, ...change });
}

// ---------------------------------------------------------------------------------------------
// advance, pause, abort

/** Receipts whose subagent has not stopped yet: advancing them is early, not wrong. */
const IN_FLIGHT: ReadonlySet<string> = new Set(['prepared', 'activated', 'stage-completed']);

/**
 * baton: what an orchestrator that advanced too early should do (Claude Code runs subagents in the
 * background unless told otherwise, so its completion notice can come after the parent moved on).
 * The pause is recoverable: the late SubagentStop still seals the receipt and `advance` resumes.
 */
export function prematureAdvanceAdvice(taskId: string, receipt: Pick<DelegationReceipt, 'status'>): string {
  const waitFor =
    receipt.status === 'prepared'
      ? 'no subagent has started for it yet: spawn the routed lifecycle subagent (fresh, in the foreground)'
      : 'its subagent has not finished: wait for the subagent to return (spawn it in the foreground, never in the background) and for its SubagentStop hook, which seals the receipt';
  return `${waitFor}; check with 'baton task ${taskId} status' until run.pendingDelegation.status is 'sealed', then advance again; if the subagent is gone, 'baton task ${taskId} abort --reason "…"' and 'baton task ${taskId} begin-or-resume'`;
}

export function advance(ctx: OrchestrationContext, taskRef: string): OrchestrationResult {
  const opened = requirePending(ctx, taskRef);
  if (!opened.ok) return opened.result;
  const { task, run, receipt } = opened.value;
  const outcome = consumeDelegation(receipt, { now: ctx.now });
  if (!outcome.ok) {
    const message = IN_FLIGHT.has(receipt.status)
      ? `${outcome.message}; ${prematureAdvanceAdvice(task.taskId, receipt)}`
      : outcome.message;
    return pauseRun(ctx, task, run, outcome.code, message, true);
  }
  const completed = outcome.receipt.stage === 'commit';
  const updated = withUpdates(ctx, run, {
    status: completed ? 'completed' : 'running',
    nextStage: null,
    stepCount: run.stepCount + 1,
    pendingDelegation: null,
    receipts: Object.freeze([...run.receipts, outcome.receipt]),
    commitAuthorization: completed ? { ...run.commitAuthorization, consumedAt: ctx.now() } : run.commitAuthorization,
  });
  save(ctx, task, updated);
  return reportRun(task.taskId, updated, true);
}

function pauseByRef(ctx: OrchestrationContext, taskRef: string, code: string, message: string, recoverable: boolean): OrchestrationResult {
  const opened = requireRun(ctx, taskRef);
  if (!opened.ok) return opened.result;
  return pauseRun(ctx, opened.value.task, opened.value.run, code, message, recoverable);
}

export function pause(ctx: OrchestrationContext, taskRef: string, input: { code: string; message: string; recoverable: boolean }): OrchestrationResult {
  return pauseByRef(ctx, taskRef, input.code, input.message, input.recoverable);
}

export const ABORT_PAUSE_CODE = 'ORCHESTRATION_DELEGATION_ABORTED';

/**
 * baton's way out of 0.9.2's dead end (decision 6): the pending receipt becomes `aborted` and joins
 * the history, and the run is paused recoverably with no pending delegation, so begin-or-resume can
 * resume it and the repository-wide guard no longer counts it.
 */
export function abort(ctx: OrchestrationContext, taskRef: string, input: { reason?: string }): OrchestrationResult {
  const opened = requireRun(ctx, taskRef);
  if (!opened.ok) return opened.result;
  const { task, run } = opened.value;
  if (!run.pendingDelegation) return failed('ORCHESTRATION_DELEGATION_MISSING', 'no pending delegation exists', task.taskId);
  const outcome = abortDelegation(run.pendingDelegation, { now: ctx.now });
  if (!outcome.ok) return failed(outcome.code, outcome.message, task.taskId);
  const message = input.reason ?? `delegation ${outcome.receipt.id} was aborted`;
  const updated = withUpdates(ctx, run, {
    status: 'paused',
    nextStage: null,
    pendingDelegation: null,
    receipts: Object.freeze([...run.receipts, outcome.receipt]),
    pause: { code: ABORT_PAUSE_CODE, message, recoverable: true },
  });
  save(ctx, task, updated);
  return reportRun(task.taskId, updated, true);
}
