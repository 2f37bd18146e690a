import { failed } from '../results.ts';
import fs from 'node:fs';
import path from 'node:path';
import { parseTypedTaskFrontmatter } from '../frontmatter.ts';
import { parseLedger, summarizeLedgerStage, validateLedgerRows } from '../ledger.ts';
import { parseReviewSummary } from '../reviewSummary.ts';
import { looseArtifactName, looseHighestRound } from '../artifacts.ts';
import { routeFromArtifacts } from '../route.ts';
import { describeUnboundReview } from '../reviewBinding.ts';
import { nextCommands, outdatedPause } from '../nextSteps.ts';
import type { ModelPolicy, OrchestrationResult, OrchestrationRun } from '../types.ts';
import { POLICY_MISMATCH, policyGiven, requestedModelOf, runPolicyOf, samePolicy, validateModelPolicy } from './modelPolicy.ts';
import type { PolicyInput } from './modelPolicy.ts';
import { DEFAULT_MAX_STEPS, errorMessage, openRun, reportRun, requireRun, resolve, loadRun, save, withUpdates } from './steps.ts';
import type { OrchestrationContext, Resolved } from './steps.ts';
import { settleViolation } from './violations.ts';

// Starting a run and reading where it is: begin-or-resume, route (with the commit gates), status.

export async function beginOrResume(
  ctx: OrchestrationContext,
  taskRef: string,
  options: { maxSteps?: number } & PolicyInput = {},
): Promise<OrchestrationResult> {
  const opened = openRun(ctx, taskRef);
  if (!opened.ok) return opened.result;
  const { task } = opened.value;
  // Later profile: the model policy (modelPolicy.ts); under 0.9.2 a given one is said to be ignored.
  const policy = runPolicy(ctx, task, opened.value.run, options);
  if (!policy.ok) return policy.result;
  const existing = policy.run;
  if (existing) {
    if (existing.status === 'paused' && existing.pause?.recoverable && existing.pendingDelegation === null) {
      // baton (docs/lifecycle.md §6.3): a run paused for refused changes resumes only once they are gone.
      const settled = await settleViolation(ctx, task, existing);
      if (!settled.ok) return settled.result;
      const resumed = withUpdates(ctx, settled.run, { status: 'running', pause: null });
      save(ctx, task, resumed);
      return reportRun(task.taskId, resumed, true);
    }
    if (existing.status === 'paused') ctx.warnings.push(stillPaused(existing, taskRef));
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
    ...(policy.policy ? { modelPolicy: policy.policy } : {}),
  };
  save(ctx, task, run);
  return reportRun(task.taskId, run, true);
}

type PolicyStep = { ok: true; run: OrchestrationRun | null; policy: ModelPolicy | null } | { ok: false; result: OrchestrationResult };

/**
 * begin-or-resume's model policy. Under the later profile a new run requires a valid one; a run that
 * has one refuses another; a run written without one (under 0.9.2) takes the one given, and is
 * otherwise left as it is, without a policy to check (docs/differences.md "Profiles").
 */
function runPolicy(ctx: OrchestrationContext, task: Resolved, run: OrchestrationRun | null, input: PolicyInput): PolicyStep {
  if (!ctx.rules.modelSeparation) {
    if (policyGiven(input)) ctx.warnings.push(`the model policy is ignored under profile ${ctx.rules.name}`);
    return { ok: true, run, policy: null };
  }
  const recorded = run ? runPolicyOf(ctx, run) : null;
  if (recorded && !recorded.ok) return { ok: false, result: failed(recorded.code, recorded.message, task.taskId) };
  if (run && !policyGiven(input)) return { ok: true, run, policy: null };
  const valid = validateModelPolicy(input);
  if (!valid.ok) return { ok: false, result: failed(valid.code, valid.message, task.taskId) };
  if (!run) return { ok: true, run, policy: valid.policy };
  if (recorded?.policy) {
    if (!samePolicy(recorded.policy, valid.policy))
      return { ok: false, result: failed(POLICY_MISMATCH.code, POLICY_MISMATCH.message, task.taskId) };
    return { ok: true, run, policy: null };
  }
  const adopted = withUpdates(ctx, run, { modelPolicy: valid.policy });
  save(ctx, task, adopted);
  ctx.warnings.push(`the run had no model policy (written under agent-infra-0.9.2); it now keeps the one given`);
  return { ok: true, run: adopted, policy: null };
}

/**
 * baton: why begin-or-resume left a run paused. 0.9.2 returns the paused run with `error: null` and
 * nothing else; the pause and what keeps it are said in `warnings` (docs/lifecycle.md §7.3).
 */
function stillPaused(run: OrchestrationRun, taskRef: string): string {
  const pause = run.pause;
  const outdated = outdatedPause(run);
  const paused = `the run is paused${pause ? ` (${pause.code}: ${pause.message})${outdated ? ` [${outdated}]` : ''}` : ''}`;
  const commands = nextCommands(run, taskRef);
  if (!pause?.recoverable) return `${paused}; begin-or-resume does not resume it: the pause is not recoverable`;
  const receipt = run.pendingDelegation;
  if (!receipt) return paused;
  return (
    `${paused}; begin-or-resume does not resume it while delegation ${receipt.id} is pending (${receipt.status}${commands.waiting ? `: ${commands.waiting}` : ''}). ` +
    `To go on without that delegation: ${commands.abort}, then ${commands.resume}`
  );
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
  // baton: why the next step is another review round, when the latest review does not count.
  if (decision.unbound) ctx.warnings.push(describeUnboundReview(decision.unbound));
  if (next.stage === 'commit') {
    const blocked = commitGate(task.value, content);
    if (blocked) return blocked;
  }
  const loaded = loadRun(ctx, task.value);
  if (!loaded.ok) return loaded.result;
  const run = loaded.value;
  // Later profile (upstream's `next.requestedModel`): the model the orchestrator should spawn the role on.
  const requested = requestedModelOf(ctx, run, next);
  if (!requested.ok) return failed(requested.code, requested.message, task.value.taskId);
  return { status: run?.status ?? 'running', changed: false, taskId: task.value.taskId, run, next: requested.next, error: null };
}

export function status(ctx: OrchestrationContext, taskRef: string): OrchestrationResult {
  const opened = requireRun(ctx, taskRef, undefined, { reading: true });
  if (!opened.ok) return opened.result;
  return reportRun(opened.value.task.taskId, opened.value.run, false);
}
