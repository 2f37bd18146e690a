import * as z from 'zod/mini';
import './zodEnglish.ts';
import { DELEGATION_ROLES, DELEGATION_STAGES, RECEIPT_STATUSES, RECONCILIATION_KINDS } from './types.ts';
import type { DelegationReceipt, OrchestrationRun } from './types.ts';
import { stageCostSchema, usageRecordRefSchema } from './stageCost.ts';

// Validation of `orchestration.json` (schema v1). agent-infra 0.9.2 read the file with a bare
// JSON.parse; baton validates it so one corrupt file is reported instead of crashing a scan
// (docs/architecture.md decision 2). Validation only checks: the reader keeps the parsed JSON itself,
// so unknown keys at every level (a newer tool may add fields) and the key order survive a rewrite.
// Objects are loose so that unknown keys pass; numbers are any JSON number, as 0.9.2 worked with
// whatever was there (a `stepCount` of 1.5 still counts steps).

const nullableString = z.nullable(z.string());

export const delegationReceiptSchema = z.looseObject({
  taskId: z.string(),
  runId: z.string(),
  role: z.enum(DELEGATION_ROLES),
  stage: z.enum(DELEGATION_STAGES),
  round: z.number(),
  artifact: z.string(),
  client: z.string(),
  requestedModel: nullableString,
  beforeFingerprint: z.string(),
  id: z.string().check(z.minLength(1)),
  actualModel: nullableString,
  modelFallbackReason: nullableString,
  parentId: nullableString,
  childId: nullableString,
  spawnMode: nullableString,
  agent: nullableString,
  status: z.enum(RECEIPT_STATUSES),
  afterFingerprint: nullableString,
  changedPaths: z.array(z.string()),
  createdAt: z.string(),
  activatedAt: nullableString,
  sealedAt: nullableString,
  consumedAt: nullableString,
  // baton addition: the PreToolUse spawn claim (absent in 0.9.2 files).
  spawnClaim: z.optional(z.object({ toolCallId: z.string(), claimedAt: z.string() })),
  // baton additions: the stop-grace clock and what the worker reconciled (absent in 0.9.2 files).
  stageCompletedAt: z.optional(nullableString),
  reconciliations: z.optional(
    z.array(z.looseObject({ kind: z.enum(RECONCILIATION_KINDS), since: z.string(), graceMs: z.number(), at: z.string() })),
  ),
  // later profile: the activation deadline (absent in 0.9.2 files).
  activationDeadlineAt: z.optional(nullableString),
  childStoppedAt: z.optional(nullableString),
  // baton addition: the stage's cost by the client's record (absent in 0.9.2 files).
  cost: z.optional(stageCostSchema),
  usageRecord: z.optional(usageRecordRefSchema),
  // baton addition: the vendor of the child (absent before activation and in 0.9.2 files).
  vendor: z.optional(nullableString),
});

export const orchestrationRunSchema = z.looseObject({
  schemaVersion: z.literal(1),
  taskId: z.string(),
  runId: z.string().check(z.minLength(1)),
  status: z.enum(['running', 'paused', 'completed']),
  nextStage: z.nullable(z.enum(DELEGATION_STAGES)),
  stepCount: z.number(),
  maxSteps: z.number(),
  baseline: z.string(),
  pendingDelegation: z.nullable(delegationReceiptSchema),
  receipts: z.array(delegationReceiptSchema),
  pause: z.nullable(z.looseObject({ code: z.string(), message: z.string(), recoverable: z.boolean() })),
  commitAuthorization: z.looseObject({ issuedAt: nullableString, consumedAt: nullableString }),
  createdAt: z.string(),
  updatedAt: z.string(),
  // modelPolicy (later profile) is not checked here: later upstream shapes must still read;
  // src/core/orchestration/modelPolicy.ts says which one it can honour.
  // baton addition: write violations (absent in 0.9.2 files).
  violations: z.optional(
    z.array(
      z.looseObject({
        code: z.string(),
        message: z.string(),
        receiptId: z.string(),
        childId: z.string(),
        baseline: z.string(),
        allowedPaths: z.array(z.string()),
        paths: z.array(z.string()),
        detectedAt: z.string(),
        resolvedAt: nullableString,
        resolution: z.nullable(z.enum(['reverted', 'kept'])),
        reason: z.optional(z.string()),
      }),
    ),
  ),
});

/** What a worker returns for a job: validated by callers before they print it. */
/**
 * Later profile: a run file of the later upstream shape (agent-infra's schemaVersion 2: the same
 * fields, plus modelPolicySource, recoveryHistory and completionEvidence, kept in place). What baton
 * cannot honour in it is refused naming the field (src/core/orchestration/upstreamRun.ts).
 */
export const laterUpstreamRunSchema = z.extend(orchestrationRunSchema, { schemaVersion: z.literal(2) });

export const orchestrationResultSchema = z.looseObject({
  status: z.enum(['running', 'paused', 'completed', 'failed']),
  changed: z.boolean(),
  taskId: z.nullable(z.string()),
  run: z.nullable(orchestrationRunSchema),
  next: z.nullable(
    z.object({
      action: z.string(),
      role: z.enum(DELEGATION_ROLES),
      stage: z.enum(DELEGATION_STAGES),
      round: z.number(),
      artifact: z.string(),
      requestedModel: z.optional(z.nullable(z.string())),
    }),
  ),
  error: z.nullable(z.object({ code: z.string(), message: z.string() })),
  warnings: z.optional(z.array(z.string())),
});

// Compile-time check that the schemas describe the engine's types.
type Assignable<T, U extends T> = U;
export type _ReceiptCheck = Assignable<DelegationReceipt, z.infer<typeof delegationReceiptSchema>>;
export type _RunCheck = Assignable<OrchestrationRun, z.infer<typeof orchestrationRunSchema>>;

/** Human-readable summary of the first few schema problems, e.g. "status: Invalid option". */
export function describeSchemaError(error: z.core.$ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
}
