// The failure results of every entry point, built in one place (docs/lifecycle.md §7.2): a failed
// result carries no run and no next step, and its code comes from the vocabulary in errorCodes.ts.
import type { ErrorCode } from './errorCodes.ts';
import type { OrchestrationResult } from './types.ts';

export function failed(code: ErrorCode, message: string, taskId: string | null = null): OrchestrationResult {
  return { status: 'failed', changed: false, taskId, run: null, next: null, error: { code, message } };
}
