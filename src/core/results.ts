// The failure results of every entry point, built in one place (docs/lifecycle.md §7.2): a failed
// result carries no run and no next step, and its code comes from the vocabulary in errorCodes.ts.
// `payloadInvalid` is the one exception in shape: a usage error has no task yet.
import type { ErrorCode } from './errorCodes.ts';
import type { OrchestrationResult } from './types.ts';

export function failed(code: ErrorCode, message: string, taskId: string | null = null): OrchestrationResult {
  return { status: 'failed', changed: false, taskId, run: null, next: null, error: { code, message } };
}

/**
 * A usage error (exit 2): upstream's ORCHESTRATION_PAYLOAD_INVALID result, which carries no `taskId`,
 * `run` or `next` (the command never got as far as a task). Kept in that shape, as 0.9.2 prints it.
 */
export function payloadInvalid(message: string) {
  return { status: 'failed', changed: false, error: { code: 'ORCHESTRATION_PAYLOAD_INVALID', message } } as const satisfies Pick<
    OrchestrationResult,
    'status' | 'changed' | 'error'
  >;
}
