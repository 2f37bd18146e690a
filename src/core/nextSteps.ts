import { shellQuote } from '../base/shellQuote.ts';
import { lifecycleAgentName } from './receipts.ts';
import type { DelegationReceipt, OrchestrationRun } from './types.ts';

// What to do next with a run, in words and commands (docs/lifecycle.md §7.5): who acts on the
// pending delegation and what baton waits for, the commands that resume or give up a paused run, and
// whether a pause message has gone out of date. The engine says it in begin-or-resume's warnings;
// the run listing and the run page (src/runs/) show the same.

export type NextCommands = Readonly<{
  /** What happens next with the pending delegation (who acts, what baton waits for), when there is one. */
  waiting: string | null;
  /** Resumes a paused run (recoverable, no pending delegation). */
  resume: string | null;
  /** Gives up the pending delegation so the run can resume. */
  abort: string | null;
  /** Why there is no resume command, when there is none for a paused run. */
  note: string | null;
}>;

/**
 * baton: a DELEGATION_STATE_INVALID pause states what the pending receipt was when the run paused
 * ("delegation X is S, expected E"). When that receipt has moved on since (a late SubagentStop
 * sealed it), the message no longer says how things are: this says how they are now, else null.
 */
export function outdatedPause(run: OrchestrationRun): string | null {
  const { pause, pendingDelegation: receipt } = run;
  if (run.status !== 'paused' || !pause || !receipt || pause.code !== 'DELEGATION_STATE_INVALID') return null;
  const stated = /^delegation (\S+) is ([a-z-]+), expected /.exec(pause.message);
  if (!stated || stated[1] !== receipt.id || stated[2] === receipt.status) return null;
  return `out of date: delegation ${receipt.id} is ${receipt.status} now${receipt.status === 'sealed' ? ', so advance goes on' : ''}`;
}

/** What happens next with a pending delegation (docs/lifecycle.md §7.5): who acts, and what baton waits for. */
export function pendingNextStep(receipt: DelegationReceipt): string | null {
  const agent = lifecycleAgentName(receipt.role);
  const what = `${receipt.stage} r${receipt.round}`;
  switch (receipt.status) {
    case 'prepared':
      return `spawn ${agent} for ${what} (a fresh subagent, in the foreground); waiting for its SubagentStart`;
    case 'activated':
      return `${agent}${receipt.childId ? ` (child ${receipt.childId})` : ''} works on ${what}; waiting for its ${receipt.stage === 'commit' ? 'stage-completed' : 'complete-stage'}`;
    case 'stage-completed':
      return `${what} is completed; waiting for the subagent's SubagentStop, which seals the receipt`;
    case 'sealed':
      return `the subagent of ${what} has finished; the orchestrator's advance consumes the receipt and routes on`;
    default:
      return null;
  }
}

export function nextCommands(run: OrchestrationRun, taskRef: string): NextCommands {
  const ref = shellQuote(taskRef);
  const waiting = run.pendingDelegation && run.status !== 'completed' ? pendingNextStep(run.pendingDelegation) : null;
  const abort =
    run.pendingDelegation && run.status !== 'completed'
      ? `baton task ${ref} abort --reason ${shellQuote(`give up delegation ${run.pendingDelegation.id}`)}`
      : null;
  if (run.status !== 'paused') return { waiting, resume: null, abort, note: null };
  if (!run.pause?.recoverable)
    return { waiting, resume: null, abort, note: 'the pause is not recoverable: begin-or-resume leaves it paused' };
  if (run.pendingDelegation) {
    return {
      waiting,
      resume: `baton task ${ref} begin-or-resume`,
      abort,
      note: `a delegation is still pending: abort it first, then resume`,
    };
  }
  return { waiting, resume: `baton task ${ref} begin-or-resume`, abort: null, note: null };
}
