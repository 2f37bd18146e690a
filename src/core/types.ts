import type { StageCost, UsageRecordRef } from './stageCost.ts';
import type { ErrorCode } from './errorCodes.ts';
// Shared vocabulary of the lifecycle engine (docs/lifecycle.md §6–§8). Types only: no behaviour here.

export const DELEGATION_ROLES = ['executor', 'reviewer'] as const;
export type DelegationRole = (typeof DELEGATION_ROLES)[number];

export const DELEGATION_STAGES = ['analysis', 'review-analysis', 'plan', 'review-plan', 'code', 'review-code', 'commit'] as const;
export type DelegationStage = (typeof DELEGATION_STAGES)[number];

export const RECEIPT_STATUSES = ['prepared', 'activated', 'stage-completed', 'sealed', 'consumed', 'aborted', 'expired'] as const;
export type ReceiptStatus = (typeof RECEIPT_STATUSES)[number];

/** A delegation receipt. Key order matches what agent-infra 0.9.2 writes, so files stay byte-compatible. */
export type DelegationReceipt = Readonly<{
  taskId: string;
  runId: string;
  role: DelegationRole;
  stage: DelegationStage;
  round: number;
  artifact: string;
  client: string;
  requestedModel: string | null;
  beforeFingerprint: string;
  id: string;
  actualModel: string | null;
  modelFallbackReason: string | null;
  parentId: string | null;
  childId: string | null;
  spawnMode: string | null;
  agent: string | null;
  status: ReceiptStatus;
  afterFingerprint: string | null;
  changedPaths: readonly string[];
  createdAt: string;
  activatedAt: string | null;
  sealedAt: string | null;
  consumedAt: string | null;
  /**
   * baton addition: the spawning tool call that claimed this prepared delegation at PreToolUse
   * (docs/hooks.md "Spawn claim"). Absent on receipts that were never claimed (and in 0.9.2 files).
   */
  spawnClaim?: SpawnClaim;
  /** baton addition: when the child completed its stage (the stop-grace clock, docs/architecture.md "Reconciliation"). */
  stageCompletedAt?: string | null;
  /** baton addition: what the worker did on its own because an awaited event did not come (absent until then). */
  reconciliations?: readonly Reconciliation[];
  /**
   * Later profile (agent-infra #854/#870): activation evidence after this time answers
   * DELEGATION_ACTIVATION_TIMEOUT. Set at the spawn claim; absent under agent-infra-0.9.2.
   */
  activationDeadlineAt?: string | null;
  /**
   * Later profile (agent-infra #993/#994): when the child stopped before completing its stage, the
   * positive evidence that it ended which `recover-started` acts on. Absent under agent-infra-0.9.2.
   */
  childStoppedAt?: string | null;
  /**
   * baton addition: what the stage cost by the client's own record, read by the worker at the seal
   * (src/core/stageCost.ts; docs/run-view.md "What a stage cost"). Absent on receipts sealed before it.
   */
  cost?: StageCost;
  /** baton addition: where the child's client records its requests, from SubagentStart (read by a seal without a stop). */
  usageRecord?: UsageRecordRef;
  /**
   * baton addition (issue 43): the vendor the child ran in, set at its activation from its client and
   * the model its client reported (src/core/vendors.ts): anthropic, openai, github… Absent before
   * activation and in 0.9.2 files.
   */
  vendor?: string | null;
}>;

export type SpawnClaim = Readonly<{ toolCallId: string; claimedAt: string }>;

/**
 * The three things a worker does on its own when a delegation waits past its grace
 * (docs/architecture.md "Reconciliation"): seal a completed stage whose SubagentStop never came,
 * pause a run whose child never completed its stage, give up a delegation no subagent started for.
 */
export const RECONCILIATION_KINDS = ['sealed', 'stalled', 'not-started'] as const;
export type ReconciliationKind = (typeof RECONCILIATION_KINDS)[number];

export type Reconciliation = Readonly<{
  kind: ReconciliationKind;
  /** When the wait began (the receipt timestamp the clock runs from). */
  since: string;
  /** The grace the worker granted, in milliseconds. */
  graceMs: number;
  /** When the worker acted. */
  at: string;
}>;

/** Receipt functions are pure and return either a new receipt or a coded failure. */
export type ReceiptOutcome = Readonly<{ ok: true; receipt: DelegationReceipt }> | Readonly<{ ok: false; code: ErrorCode; message: string }>;

export type OrchestrationStatus = 'running' | 'paused' | 'completed';

export type PauseInfo = Readonly<{ code: string; message: string; recoverable: boolean }>;

/**
 * baton addition (docs/lifecycle.md §6.3): changes the write restriction refused. While one is open
 * (`resolvedAt` null) its run is neither advanced nor resumed, and no delegation of the repository
 * is prepared or advanced; it is resolved by evidence (the workspace measured back at `baseline`
 * outside `allowedPaths`: `reverted`) or by a human's `abort` (`kept`).
 */
export type WriteViolation = Readonly<{
  /** DELEGATION_REVIEWER_WRITE_FORBIDDEN or DELEGATION_TURN_AFTER_CONSUMED. */
  code: string;
  /** What was refused (upstream's message for the reviewer restriction), without the advice. */
  message: string;
  /** The delegation whose child made the changes, and that child. */
  receiptId: string;
  childId: string;
  /** The fingerprint the workspace must be measured back at. */
  baseline: string;
  /** Paths that may differ from the baseline (a pending reviewer's allow-list); run files always may. */
  allowedPaths: readonly string[];
  /** The offending paths as measured (the first detection and any later one). */
  paths: readonly string[];
  detectedAt: string;
  resolvedAt: string | null;
  resolution: 'reverted' | 'kept' | null;
  /** With `kept`: the reason given to abort. */
  reason?: string;
}>;

/** `<taskDir>/orchestration.json`, schema v1 (docs/lifecycle.md §7.1). */
export type OrchestrationRun = Readonly<{
  schemaVersion: 1;
  taskId: string;
  runId: string;
  status: OrchestrationStatus;
  nextStage: DelegationStage | null;
  stepCount: number;
  maxSteps: number;
  baseline: string;
  pendingDelegation: DelegationReceipt | null;
  receipts: readonly DelegationReceipt[];
  pause: PauseInfo | null;
  commitAuthorization: Readonly<{ issuedAt: string | null; consumedAt: string | null }>;
  createdAt: string;
  updatedAt: string;
  /** baton addition: the write violations of this run, resolved or open (absent until the first, and in 0.9.2 files). */
  violations?: readonly WriteViolation[];
  /**
   * Later profile (agent-infra #783): the executor and reviewer models of the run (absent in 0.9.2
   * files). `unknown`: a later upstream writes other shapes; src/core/orchestration/modelPolicy.ts reads it.
   */
  modelPolicy?: unknown;
}>;

/** agent-infra #783's model policy: one model per role; one model for both only with a reason. */
export type ModelPolicy = Readonly<{ executor: string; reviewer: string; sameModelReason: string | null }>;

export const NEXT_ACTIONS = ['analyze-task', 'review-analysis', 'plan-task', 'review-plan', 'code-task', 'review-code', 'commit'] as const;
export type NextAction = (typeof NEXT_ACTIONS)[number];

/** The routed next step: the skill to run, and the receipt fields a delegation of it gets. */
export type OrchestrationNext = Readonly<
  { action: NextAction } & Pick<DelegationReceipt, 'role' | 'stage' | 'round' | 'artifact'> & {
      /** Later profile only (modelPolicy.ts): the model the orchestrator should spawn the role on (null: no policy). */
      requestedModel?: string | null;
    }
>;

export type ResultError = Readonly<{ code: ErrorCode; message: string }>;

/** What every orchestration entry point returns (docs/lifecycle.md §7.2). */
export type OrchestrationResult = Readonly<{
  status: OrchestrationStatus | 'failed';
  changed: boolean;
  taskId: string | null;
  run: OrchestrationRun | null;
  next: OrchestrationNext | null;
  error: ResultError | null;
  /** baton addition, present only when non-empty: e.g. corrupt run files skipped by a repository scan. */
  warnings?: readonly string[];
}>;

export type TaskState = 'active' | 'blocked' | 'completed' | 'archive';

export type ResolvedTaskRef =
  | Readonly<{
      ok: true;
      repoRoot: string;
      taskId: string;
      taskDir: string;
      taskMdPath: string;
      state: TaskState;
    }>
  | Readonly<{
      ok: false;
      code: ErrorCode;
      message: string;
      repoRoot: string | null;
      taskId: string | null;
    }>;

/**
 * The fingerprint seam (docs/lifecycle.md §9, docs/architecture.md "Fingerprints"): capture returns a git tree id
 * for the whole workspace; diff lists repo-relative paths that differ between two captures.
 */
export interface WorkspaceFingerprinter {
  capture(repoRoot: string): Promise<string>;
  diff(repoRoot: string, before: string, after: string): Promise<string[]>;
}
