// Every error code baton emits, in one place: agent-infra 0.9.2's codes (kept as upstream spells
// them) and baton's own `BATON_*` additions. A result's `error.code` is typed with `ErrorCode`, so a
// misspelt code does not compile. (A run's pause code stays a string: `pause --code` takes any code.)
import { LATER_UPSTREAM_ERROR_CODES } from './profiles/codes.ts';

/** Codes from agent-infra 0.9.2 (docs/lifecycle.md), plus baton's additions in upstream's families. */
export const LIFECYCLE_ERROR_CODES = [
  // task references and the short-id registry
  'REPO_ROOT_NOT_FOUND',
  'INVALID_TASK_REF',
  'TASK_NOT_FOUND',
  'SHORT_ID_RESERVED',
  'SHORT_ID_CAPACITY_EXCEEDED',
  'SHORT_ID_NOT_FOUND',
  'SHORT_ID_STALE',
  'SHORT_ID_REGISTRY_NOT_FOUND',
  'SHORT_ID_REGISTRY_READ_FAILED',
  'SHORT_ID_REGISTRY_INVALID_JSON',
  'SHORT_ID_REGISTRY_INVALID_SCHEMA',
  'SHORT_ID_REGISTRY_DUPLICATE_TASK',
  // task documents and artifacts
  'TASK_DOCUMENT_INVALID',
  'MUTATION_INVALID',
  'ARTIFACT_DIRECTORY_READ_FAILED',
  'ARTIFACT_FAMILY_UNKNOWN',
  'LEDGER_DOCUMENT_INVALID',
  'LEDGER_DUPLICATE_ID',
  'LEDGER_ID_INVALID',
  'LEDGER_STAGE_INVALID',
  'LEDGER_STATUS_INVALID',
  'REVIEW_FINDING_COUNTS_NOT_FINALIZED',
  'REVIEW_SUMMARY_COUNT_MISMATCH',
  'REVIEW_SUMMARY_NOT_FOUND',
  'REVIEW_SUMMARY_PLACEHOLDER_INVALID',
  // orchestration runs
  'ORCHESTRATION_ARTIFACT_INVALID',
  'ORCHESTRATION_CLIENT_UNSUPPORTED',
  'ORCHESTRATION_DELEGATION_ABORTED',
  'ORCHESTRATION_DELEGATION_AMBIGUOUS',
  'ORCHESTRATION_DELEGATION_BUSY',
  'ORCHESTRATION_DELEGATION_MISSING',
  'ORCHESTRATION_LEDGER_BLOCKED',
  'ORCHESTRATION_LEDGER_INVALID',
  'ORCHESTRATION_MANUAL_VALIDATION_PENDING',
  'ORCHESTRATION_MAX_STEPS',
  'ORCHESTRATION_PAYLOAD_INVALID',
  'ORCHESTRATION_PROVENANCE_MISMATCH',
  'ORCHESTRATION_REVIEW_INVALID',
  'ORCHESTRATION_REVIEW_INPUT_MISMATCH',
  'ORCHESTRATION_ROUTE_UNKNOWN',
  'ORCHESTRATION_RUN_MISSING',
  'ORCHESTRATION_RUN_NOT_RUNNING',
  'ORCHESTRATION_SNAPSHOT_FAILED',
  'ORCHESTRATION_STATE_INVALID',
  'ORCHESTRATION_TASK_INVALID',
  'ORCHESTRATION_TASK_READ_FAILED',
  // delegation receipts
  'DELEGATION_AGENT_MISMATCH',
  'DELEGATION_FORK_FORBIDDEN',
  'DELEGATION_IDENTITY_INVALID',
  'DELEGATION_IDENTITY_REUSED',
  'DELEGATION_IGNORED',
  'DELEGATION_ISOLATION_FORBIDDEN',
  'DELEGATION_MODEL_FALLBACK_UNRECORDED',
  'DELEGATION_REPLAY',
  'DELEGATION_REVIEWER_WRITE_FORBIDDEN',
  'DELEGATION_ROLE_MISMATCH',
  'DELEGATION_SPAWN_CLAIMED',
  'DELEGATION_SPAWN_CLAIM_EXPIRED',
  'DELEGATION_STAGE_MISMATCH',
  'DELEGATION_STATE_INVALID',
  'DELEGATION_STOP_INVALID',
  'DELEGATION_TURN_AFTER_CONSUMED',
  // baton: a Claude Code agent-team teammate spawn (refused at PreToolUse, docs/clients.md "Agent teams")
  'DELEGATION_TEAMMATE_FORBIDDEN',
] as const;

/** baton's own codes: the queue, the worker and the transport around the lifecycle. */
export const BATON_ERROR_CODES = [
  'BATON_CHECKOUT_MISMATCH',
  'BATON_CLIENT_CANNOT_REVIEW',
  'BATON_CLIENT_NOT_INSTALLED',
  'BATON_CLIENT_NOT_LOGGED_IN',
  'BATON_CLIENT_NOT_WIRED',
  'BATON_DELEGATION_NOT_STARTED',
  'BATON_DELEGATION_STALLED',
  'BATON_EVENT_FAILED',
  'BATON_JOB_FAILED',
  'BATON_PREFIX_NOT_HASH_TAGGED',
  'BATON_REDIS_NO_PERMISSION',
  'BATON_HEADLESS_NOT_REVIEW',
  'BATON_REDIS_UNAVAILABLE',
  'BATON_REVIEWER_EXITED',
  'BATON_REVIEWER_INTERRUPTED',
  'BATON_REVIEWER_TIMEOUT',
  'BATON_TIMEOUT',
  'BATON_WORKER_UNAVAILABLE',
] as const;

/**
 * Not errors: what an artifact inventory says about one directory entry or round (docs/lifecycle.md),
 * reported next to the inventory and never as a result's code.
 */
export const ARTIFACT_DIAGNOSTIC_CODES = [
  'NONCANONICAL_NAME',
  'ROUND_OUT_OF_RANGE',
  'SYMBOLIC_LINK',
  'NON_REGULAR_FILE',
  'FILESYSTEM_RACE',
  'MISSING_BASE',
  'ROUND_GAP',
  'BROKEN_REFERENCE',
] as const;

export type ArtifactDiagnosticCode = (typeof ARTIFACT_DIAGNOSTIC_CODES)[number];

export const ERROR_CODES = [...LIFECYCLE_ERROR_CODES, ...BATON_ERROR_CODES, ...LATER_UPSTREAM_ERROR_CODES] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

const KNOWN: ReadonlySet<string> = new Set(ERROR_CODES);

export function isErrorCode(code: string): code is ErrorCode {
  return KNOWN.has(code);
}

/**
 * An error that says what went wrong with a code, so that callers classify it by type and code,
 * never by matching its message text.
 */
export class CodedError<C extends string> extends Error {
  readonly code: C;
  constructor(name: string, code: C, message: string) {
    super(message);
    this.name = name;
    this.code = code;
  }
}
