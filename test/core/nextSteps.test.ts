import { describe, expect, it } from 'vitest';
import { shellQuote } from '../../src/base/shellQuote.ts';
import { nextCommands, outdatedPause, pendingNextStep } from '../../src/core/nextSteps.ts';
import type { OrchestrationRun } from '../../src/core/types.ts';

// What to do next with a run (docs/lifecycle.md §7.5), as begin-or-resume's warnings, baton runs and
// the run page say it: who acts on the pending delegation, the commands that resume or give up a
// paused run, and a pause message that has gone out of date.

describe('nextCommands', () => {
  const base = {
    status: 'paused',
    pause: { code: 'C', message: 'm', recoverable: true },
    pendingDelegation: null,
  } as unknown as OrchestrationRun;
  it('offers abort then resume while a delegation is pending, nothing to resume when not recoverable', () => {
    const pending = { ...base, pendingDelegation: { id: 'r-1' } } as unknown as OrchestrationRun;
    expect(nextCommands(pending, '01')).toEqual({
      waiting: null,
      resume: 'baton task 01 begin-or-resume',
      abort: "baton task 01 abort --reason 'give up delegation r-1'",
      note: 'a delegation is still pending: abort it first, then resume',
    });
    expect(nextCommands({ ...base, pause: { code: 'C', message: 'm', recoverable: false } }, 'TASK-1').resume).toBeNull();
    expect(nextCommands({ ...base, status: 'running', pause: null }, '01')).toEqual({
      waiting: null,
      resume: null,
      abort: null,
      note: null,
    });
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });
});

describe('what a pending delegation waits for, and a pause that is out of date', () => {
  const receipt = (status: string, more: object = {}) =>
    ({ id: 'r-1', role: 'executor', stage: 'analysis', round: 1, status, childId: null, ...more }) as never;
  it('says who acts next at every step of a delegation (docs/lifecycle.md §7.5)', () => {
    expect(pendingNextStep(receipt('prepared'))).toBe(
      'spawn agent-infra-lifecycle-executor for analysis r1 (a fresh subagent, in the foreground); waiting for its SubagentStart',
    );
    expect(pendingNextStep(receipt('activated', { childId: 'c-9' }))).toBe(
      'agent-infra-lifecycle-executor (child c-9) works on analysis r1; waiting for its complete-stage',
    );
    expect(pendingNextStep(receipt('activated', { stage: 'commit', role: 'executor' }))).toContain('waiting for its stage-completed');
    expect(pendingNextStep(receipt('stage-completed', { role: 'reviewer', stage: 'review-plan', round: 2 }))).toBe(
      "review-plan r2 is completed; waiting for the subagent's SubagentStop, which seals the receipt",
    );
    expect(pendingNextStep(receipt('sealed'))).toContain("the orchestrator's advance consumes the receipt");
    expect(pendingNextStep(receipt('consumed'))).toBeNull();
  });

  it('marks a DELEGATION_STATE_INVALID pause whose receipt has moved on since', () => {
    const paused = (status: string, message = 'delegation r-1 is stage-completed, expected sealed; wait for the subagent') =>
      ({
        status: 'paused',
        pause: { code: 'DELEGATION_STATE_INVALID', message, recoverable: true },
        pendingDelegation: receipt(status),
      }) as unknown as OrchestrationRun;
    expect(outdatedPause(paused('stage-completed'))).toBeNull();
    expect(outdatedPause(paused('sealed'))).toBe('out of date: delegation r-1 is sealed now, so advance goes on');
    expect(outdatedPause(paused('sealed', 'delegation r-0 is stage-completed, expected sealed'))).toBeNull();
    expect(
      outdatedPause({
        ...paused('sealed'),
        pause: { code: 'OTHER', message: 'delegation r-1 is stage-completed, expected sealed', recoverable: true },
      }),
    ).toBeNull();
  });
});
