import { TASK_ID } from './fixtures.ts';

// orchestration.json as agent-infra writes it (schema v1, its key order), for tests that write a run
// file by hand or compare one field by field. Each builder takes the fields a test changes; the
// others are those of a fresh run of TASK_ID at the fixtures' clock.

const T0 = '2026-01-01T00:00:00.000Z';

/** The keys of a delegation receipt, in agent-infra's order. */
export const RECEIPT_KEYS = [
  'taskId',
  'runId',
  'role',
  'stage',
  'round',
  'artifact',
  'client',
  'requestedModel',
  'beforeFingerprint',
  'id',
  'actualModel',
  'modelFallbackReason',
  'parentId',
  'childId',
  'spawnMode',
  'agent',
  'status',
  'afterFingerprint',
  'changedPaths',
  'createdAt',
  'activatedAt',
  'sealedAt',
  'consumedAt',
] as const;

type PreparedFields = {
  taskId: string;
  runId: string;
  role: string;
  stage: string;
  round: number;
  artifact: string;
  client: string;
  requestedModel: string | null;
  beforeFingerprint: string;
  id: string;
  createdAt: string;
};

/** A prepared receipt (default: receipt-1, the executor's analysis r1 for codex): nothing after prepare is set. */
export function preparedReceiptRecord(fields: Partial<PreparedFields> = {}) {
  return {
    taskId: fields.taskId ?? TASK_ID,
    runId: fields.runId ?? 'run-1',
    role: fields.role ?? 'executor',
    stage: fields.stage ?? 'analysis',
    round: fields.round ?? 1,
    artifact: fields.artifact ?? 'analysis.md',
    client: fields.client ?? 'codex',
    requestedModel: fields.requestedModel === undefined ? null : fields.requestedModel,
    beforeFingerprint: fields.beforeFingerprint ?? 'before',
    id: fields.id ?? 'receipt-1',
    actualModel: null,
    modelFallbackReason: null,
    parentId: null,
    childId: null,
    spawnMode: null,
    agent: null,
    status: 'prepared',
    afterFingerprint: null,
    changedPaths: [],
    createdAt: fields.createdAt ?? T0,
    activatedAt: null,
    sealedAt: null,
    consumedAt: null,
  };
}

/**
 * A run (default: run-1 of TASK_ID, running, nothing pending). `modelPolicy`, when given, stands where
 * upstream writes it (after maxSteps); any other field given replaces the default in its place.
 */
export function runRecord(fields: Record<string, unknown> = {}) {
  const { modelPolicy, ...rest } = fields;
  return {
    schemaVersion: 1,
    taskId: TASK_ID,
    runId: 'run-1',
    status: 'running',
    nextStage: null,
    stepCount: 0,
    maxSteps: 24,
    ...(modelPolicy === undefined ? {} : { modelPolicy }),
    baseline: '',
    pendingDelegation: null,
    receipts: [],
    pause: null,
    commitAuthorization: { issuedAt: null, consumedAt: null },
    createdAt: T0,
    updatedAt: T0,
    ...rest,
  };
}
