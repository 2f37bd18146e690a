import { randomUUID } from 'node:crypto';
import * as orchestration from './orchestration/index.ts';
import { RunTransaction, commitWrites, readRunFile } from './runStore.ts';
import type { RunRead, RunWrite } from './runStore.ts';
import { isAutoHookStart, isAutoHookStop, isExplicitHookStop } from './events.ts';
import type { LifecycleEvent } from './events.ts';
import type { OrchestrationResult, WorkspaceFingerprinter } from './types.ts';
import { profileRules } from './profile.ts';
import type { ProfileName } from './profile.ts';
import { ProfileError, readRepositoryRecord } from './profiles/file.ts';
import type { ReviewerVendorPolicy } from './profiles/reviewerVendor.ts';
import { failed } from './results.ts';
import type { StageCost } from './stageCost.ts';

// The engine's one entry point: apply one lifecycle event to one repository. Everything the outcome
// depends on besides the files is injected (clock, id source, fingerprints), and the outcome is the
// result plus the run files to write, so the caller chooses how writes reach disk (directly in
// process, or through the worker's journal so a redelivered job is applied exactly once).

export type EngineDeps = Readonly<{
  repoRoot: string;
  fingerprinter: WorkspaceFingerprinter;
  now?: () => string;
  newId?: () => string;
  /** Reads a run file; defaults to the validated reader of runStore. */
  readRun?: (taskDir: string) => RunRead;
  /** The lifecycle profile; defaults to the one the repository records (`.agents/baton.json`, src/core/profile.ts). */
  profile?: ProfileName;
  /**
   * For a stop (hook-stop): what the stage cost by the client's own record, read by the caller from
   * the file the stop named (src/workers/stageCost.ts): a fact, so the engine opens no client file.
   */
  stopCost?: StageCost;
  /** With `profile`: the reviewer-vendor policy (default none); without, the one the repository records. */
  reviewerVendor?: ReviewerVendorPolicy | null;
}>;

export type EngineOutcome = Readonly<{ result: OrchestrationResult; writes: RunWrite[] }>;

/**
 * One event about to be applied to one repository. Everything it looks at goes through one run
 * transaction, so each run file is read once for the event, whether for the receipt it targets (the
 * worker journal's duplicate check) or for applying it.
 */
export type PreparedEvent = Readonly<{
  /**
   * For a native hook event (taskRef `auto`), the receipt it would be applied to now, null when there
   * is none; undefined for an event with a task ref. The journal replays a repeated event id only
   * while it targets the same receipt (docs/hooks.md "Duplicates").
   */
  target(): string | null | undefined;
  /** Applies the event (once): the result and the run files to write. */
  apply(): Promise<EngineOutcome>;
}>;

export function prepareEvent(event: LifecycleEvent, deps: EngineDeps): PreparedEvent {
  let profile: ProfileName;
  let reviewerVendor: ReviewerVendorPolicy | null;
  try {
    const record = deps.profile
      ? { profile: deps.profile, reviewerVendor: deps.reviewerVendor ?? null }
      : readRepositoryRecord(deps.repoRoot);
    ({ profile, reviewerVendor } = record);
  } catch (error) {
    if (!(error instanceof ProfileError)) throw error;
    // A profile baton cannot read changes nothing: which rules would apply is unknown.
    const refused = failed(error.code, error.message);
    return { target: () => (event.taskRef === 'auto' ? null : undefined), apply: async () => ({ result: refused, writes: [] }) };
  }
  const rules = profileRules(profile);
  const ctx: orchestration.OrchestrationContext = {
    repoRoot: deps.repoRoot,
    now: deps.now ?? (() => new Date().toISOString()),
    newId: deps.newId ?? randomUUID,
    fingerprinter: deps.fingerprinter,
    tx: new RunTransaction(deps.readRun ?? ((taskDir) => readRunFile(taskDir, { laterUpstream: rules.laterUpstreamRuns }))),
    warnings: [],
    rules,
    ...(deps.stopCost ? { stopCost: deps.stopCost } : {}),
    // Under agent-infra-0.9.2 a recorded policy is not enforced (baton doctor says so).
    reviewerVendor: rules.reviewerVendorPolicy ? reviewerVendor : null,
  };
  return {
    target: () => (event.taskRef === 'auto' ? nativeEventTarget(ctx, event) : undefined),
    async apply() {
      const result = await dispatch(ctx, event);
      const unique = [...new Set(ctx.warnings)];
      return { result: unique.length > 0 ? { ...result, warnings: unique } : result, writes: ctx.tx.writes() };
    },
  };
}

export function applyEvent(event: LifecycleEvent, deps: EngineDeps): Promise<EngineOutcome> {
  return prepareEvent(event, deps).apply();
}

/** applyEvent, then write the staged run files directly (the in-process path). */
export async function applyEventNow(event: LifecycleEvent, deps: EngineDeps): Promise<OrchestrationResult> {
  const outcome = await applyEvent(event, deps);
  commitWrites(outcome.writes);
  return outcome.result;
}

const NATIVE_INTENTS: ReadonlySet<LifecycleEvent['intent']> = new Set([
  'hook-start',
  'hook-stop',
  'claim-spawn',
  'release-spawn',
  'child-gone',
]);

function nativeEventTarget(ctx: orchestration.OrchestrationContext, event: LifecycleEvent): string | null {
  if (!NATIVE_INTENTS.has(event.intent) || !('client' in event) || !event.client) return null;
  return orchestration.nativeEventTarget(ctx, event.client);
}

function dispatch(ctx: orchestration.OrchestrationContext, event: LifecycleEvent): OrchestrationResult | Promise<OrchestrationResult> {
  switch (event.intent) {
    case 'begin-or-resume':
      return orchestration.beginOrResume(ctx, event.taskRef, {
        maxSteps: event.maxSteps,
        executorModel: event.executorModel,
        reviewerModel: event.reviewerModel,
        sameModelReason: event.sameModelReason,
      });
    case 'route':
      return orchestration.route(ctx, event.taskRef);
    case 'status':
      return orchestration.status(ctx, event.taskRef);
    case 'prepare':
      return orchestration.prepare(ctx, event.taskRef, { client: event.client, requestedModel: event.requestedModel ?? null });
    case 'hook-start': {
      const activation = {
        nativeAgent: event.nativeAgent,
        childId: event.childId,
        parentId: event.parentId,
        spawnMode: event.spawnMode,
        actualModel: event.actualModel ?? null,
        modelFallbackReason: event.fallbackReason ?? null,
        ...(event.usageRecord && event.usageFormat ? { usageRecord: { format: event.usageFormat, file: event.usageRecord } } : {}),
      };
      return isAutoHookStart(event)
        ? orchestration.activateMatching(ctx, event.client, activation)
        : orchestration.activate(ctx, event.taskRef, activation);
    }
    case 'hook-stop':
      if (isAutoHookStop(event))
        return orchestration.sealMatching(ctx, event.client, { nativeAgent: event.nativeAgent, childId: event.childId });
      if (isExplicitHookStop(event))
        return orchestration.sealExplicit(ctx, event.taskRef, { childId: event.childId, exitCode: event.exitCode });
      // Unreachable for a parsed event: the schema refuses either form without its fields.
      throw new Error(`hook-stop event for '${event.taskRef}' lacks the fields of its form`);
    case 'claim-spawn':
      return orchestration.claimSpawn(ctx, event.client, {
        nativeAgent: event.nativeAgent,
        toolCallId: event.toolCallId,
        notAfter: event.notAfter,
        model: event.model,
      });
    case 'release-spawn':
      return orchestration.releaseSpawn(ctx, event.client, { toolCallId: event.toolCallId });
    case 'reconcile':
      return orchestration.reconcile(ctx, event.taskRef, event);
    case 'child-gone':
      return orchestration.childGone(ctx, event.client, { childId: event.childId, evidence: event.evidence });
    case 'stage-completed':
      return orchestration.completeCommitStage(ctx, event.taskRef, event.agent);
    case 'complete-stage':
      return orchestration.completeStage(ctx, event.taskRef, event);
    case 'validate-stage':
      return orchestration.validateStage(ctx, event.taskRef, event);
    case 'advance':
      return orchestration.advance(ctx, event.taskRef);
    case 'pause':
      return orchestration.pause(ctx, event.taskRef, event);
    case 'abort':
      return orchestration.abort(ctx, event.taskRef, event);
    case 'recover-prepared':
      return orchestration.recoverPrepared(ctx, event.taskRef);
    case 'recover-started':
      return orchestration.recoverStarted(ctx, event.taskRef);
  }
}
