// agent-infra 0.9.2's own words, where baton rewords a message to name something that exists in baton
// (docs/differences.md "Errors name baton's commands"). Under `baton install-hooks --agent-infra-shim`
// the shim sets AGENT_INFRA_SHIM_ENV (src/base/agentInfraShim.ts), and `baton task` answers in upstream's exact words, because
// there agent-infra's own scripts and skills read them.

import { REPO_ROOT_NOT_FOUND_MESSAGE } from '../base/repoRoot.ts';
import { SHORT_ID_CLEANED_HINT } from '../core/taskRef.ts';

/** 0.9.2's words for the messages baton rewords: [code, baton's text, upstream's text]. */
export const AGENT_INFRA_WORDS: ReadonlyArray<readonly [code: string, baton: string, upstream: string]> = [
  ['REPO_ROOT_NOT_FOUND', REPO_ROOT_NOT_FOUND_MESSAGE, 'ai task: current directory is not inside a git repository'],
  ['SHORT_ID_NOT_FOUND', SHORT_ID_CLEANED_HINT, "check 'task-short-id.js list'"],
  ['SHORT_ID_STALE', SHORT_ID_CLEANED_HINT, "check 'task-short-id.js list'"],
];

/** `result` with its error message in 0.9.2's words, where baton rewords it; otherwise `result` itself. */
export function inAgentInfraWords<R extends object>(result: R): R {
  const error = (result as { error?: { code?: unknown; message?: unknown } | null }).error;
  if (!error || typeof error.code !== 'string' || typeof error.message !== 'string') return result;
  let message: string = error.message;
  for (const [code, baton, upstream] of AGENT_INFRA_WORDS) if (code === error.code) message = message.split(baton).join(upstream);
  return message === error.message ? result : { ...result, error: { ...error, message } };
}
