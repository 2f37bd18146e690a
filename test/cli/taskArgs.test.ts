import { describe, expect, it } from 'vitest';
import { parseTaskCommand } from '../../src/cli/taskArgs.ts';
import { completeStage, nativeStart, nativeStop } from '../support/engineEvents.ts';

// The grammar of docs/lifecycle.md §10.4, kept so scripts written for agent-infra's task-orchestration
// work by swapping the command.

function usageError(argv: string[]): string {
  const parsed = parseTaskCommand(argv);
  if (parsed.kind !== 'usage-error') throw new Error(`expected a usage error, got ${JSON.stringify(parsed)}`);
  return parsed.message;
}

function event(argv: string[]) {
  const parsed = parseTaskCommand(argv);
  if (parsed.kind !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(parsed)}`);
  return parsed;
}

describe('parseTaskCommand: upstream usage errors', () => {
  it.each([
    [[], 'task ref and intent are required'],
    [['01'], 'task ref and intent are required'],
    [['01', 'dance'], "unknown intent 'dance'"],
    [['01', 'status', '--colour', 'red'], "unknown option '--colour'"],
    [['01', 'prepare', '--client', 'codex', '--client', 'codex'], "duplicate option '--client'"],
    [['01', 'prepare', '--client'], "option '--client' requires a value"],
    [['01', 'prepare', '--client', '--requested-model', 'x'], "option '--client' requires a value"],
    [['auto', 'hook-stop', '--client', 'claude-code', '--native-agent', 'a', '--child-id', ''], "option '--child-id' requires a value"],
    [['01', 'prepare'], "intent 'prepare' requires '--client'"],
    [
      ['auto', 'hook-start', '--native-agent', 'a', '--child-id', 'c', '--parent-id', 'p', '--spawn-mode', 'fresh'],
      "intent 'hook-start' requires '--client'",
    ],
    [['01', 'hook-start', '--native-agent', 'a', '--child-id', 'c', '--parent-id', 'p'], "intent 'hook-start' requires '--spawn-mode'"],
    [['01', 'hook-stop', '--child-id', 'c'], "intent 'hook-stop' requires '--exit-code'"],
    [['auto', 'hook-stop', '--client', 'codex', '--child-id', 'c'], "intent 'hook-stop' requires '--native-agent'"],
    [['01', 'stage-completed'], "intent 'stage-completed' requires '--agent'"],
    [['01', 'pause', '--code', 'X', '--message', 'm'], "intent 'pause' requires '--recoverable'"],
    [['01', 'begin-or-resume', '--max-steps', '0'], '--max-steps must be a positive integer'],
    [['01', 'begin-or-resume', '--max-steps', '1.5'], '--max-steps must be a positive integer'],
    [['01', 'hook-stop', '--child-id', 'c', '--exit-code', 'zero'], '--exit-code must be an integer'],
    [['01', 'pause', '--code', 'X', '--message', 'm', '--recoverable', 'yes'], '--recoverable must be true or false'],
    [['01', 'prepare', '--client', 'vim'], "unknown client 'vim'"],
    [
      ['01', 'complete-stage', '--stage', 'deploy', '--round', '1', '--artifact', 'a.md', '--agent', 'x'],
      '--stage must be one of analysis, review-analysis, plan, review-plan, code, review-code, commit',
    ],
    [
      ['01', 'complete-stage', '--stage', 'plan', '--round', '-1', '--artifact', 'a.md', '--agent', 'x'],
      '--round must be a positive integer',
    ],
    [
      ['01', 'complete-stage', '--stage', 'plan', '--round', '1.5', '--artifact', 'a.md', '--agent', 'x'],
      '--round must be a positive integer',
    ],
    [['01', 'begin-or-resume', '--max-steps', '-1e3'], '--max-steps must be a positive integer'],
    [['01', 'begin-or-resume', '--max-steps', 'Infinity'], '--max-steps must be a positive integer'],
    [['01', 'hook-stop', '--child-id', 'c', '--exit-code', '0.5'], '--exit-code must be an integer'],
    [['--client', 'x'], "unknown intent 'x'"],
    [['--client'], 'task ref and intent are required'],
    [['01', 'route', '-x', 'y'], "unknown option '-x'"],
    [
      ['01', 'validate-stage', '--stage', 'plan', '--round', '1', '--artifact', 'plan.md', '--role', 'boss'],
      '--role must be executor or reviewer',
    ],
    [['01', 'status', 'extra'], "unknown option 'extra'"],
    [['01', 'route', 'foo'], "unknown option 'foo'"],
    [['01', 'status', '--worker', 'cloud'], '--worker must be queue or inline'],
    [['01', 'status', '--timeout', '0'], '--timeout must be a positive integer (milliseconds)'],
    // 2**53 + 1 would silently become 2**53 (a neighbour of what was typed); the fuzz test found it.
    [['01', 'begin-or-resume', '--timeout', '9007199254740993'], '--timeout must be a positive integer (milliseconds)'],
  ])('%j → %s', (argv, message) => {
    expect(usageError(argv)).toBe(message);
  });

  it('refuses caller-supplied fingerprints and changed paths (they could dodge the reviewer write gate)', () => {
    expect(usageError(['01', 'hook-stop', '--child-id', 'c', '--exit-code', '0', '--after-fingerprint', 'abc'])).toBe(
      "option '--after-fingerprint' is not accepted: baton captures the workspace fingerprint and changed paths itself",
    );
    expect(usageError(['01', 'hook-stop', '--child-id', 'c', '--exit-code', '0', '--changed-paths', 'a,b'])).toContain(
      "'--changed-paths' is not accepted",
    );
  });
});

describe('parseTaskCommand: events', () => {
  it('maps flags to typed events', () => {
    // The flags naming a native child: Claude Code's reviewer claude-child.
    const reviewerFlags = ['--client', 'claude-code', '--native-agent', 'agent-infra-lifecycle-reviewer', '--child-id', 'claude-child'];
    expect(event(['01', 'begin-or-resume', '--max-steps', '5']).event).toEqual({ intent: 'begin-or-resume', taskRef: '01', maxSteps: 5 });
    expect(
      event([
        'auto',
        'hook-start',
        ...reviewerFlags,
        '--parent-id',
        'claude-parent',
        '--spawn-mode',
        'fresh',
        '--actual-model',
        'opus',
        '--fallback-reason',
        'quota',
      ]).event,
    ).toEqual(
      nativeStart({ role: 'reviewer', childId: 'claude-child', parentId: 'claude-parent', actualModel: 'opus', fallbackReason: 'quota' }),
    );
    expect(event(['auto', 'hook-stop', ...reviewerFlags]).event).toEqual(nativeStop({ role: 'reviewer', childId: 'claude-child' }));
    expect(event(['01', 'hook-stop', '--child-id', 'c', '--exit-code', '-1']).event).toEqual({
      intent: 'hook-stop',
      taskRef: '01',
      childId: 'c',
      exitCode: -1,
    });
    expect(event(['01', 'pause', '--code', 'HOOK_FAILED', '--message', 'gone', '--recoverable', 'false']).event).toEqual({
      intent: 'pause',
      taskRef: '01',
      code: 'HOOK_FAILED',
      message: 'gone',
      recoverable: false,
    });
    expect(
      event(['01', 'complete-stage', '--stage', 'plan', '--round', '2', '--artifact', 'plan-r2.md', '--agent', 'codex']).event,
    ).toEqual(completeStage({ taskRef: '01', stage: 'plan', round: 2, artifact: 'plan-r2.md', agent: 'codex' }));
    expect(event(['01', 'abort', '--reason', 'child crashed']).event).toEqual({ intent: 'abort', taskRef: '01', reason: 'child crashed' });
  });

  it('ignores known flags that do not apply to the intent (as upstream)', () => {
    expect(event(['01', 'advance', '--client', 'codex']).event).toEqual({ intent: 'advance', taskRef: '01' });
    expect(event(['01', 'advance', '--before-fingerprint', 'abc']).event).toEqual({ intent: 'advance', taskRef: '01' });
    expect(event(['01', 'hook-stop', '--child-id', 'c', '--exit-code', '0', '--before-fingerprint', 'abc']).event).toEqual({
      intent: 'hook-stop',
      taskRef: '01',
      childId: 'c',
      exitCode: 0,
    });
    // With a task ref, hook-start and hook-stop do not use --client: any value is ignored, as upstream.
    expect(
      event(['01', 'hook-start', '--client', 'foo', '--native-agent', 'a', '--child-id', 'c', '--parent-id', 'p', '--spawn-mode', 'fresh'])
        .event,
    ).toEqual({
      intent: 'hook-start',
      taskRef: '01',
      nativeAgent: 'a',
      childId: 'c',
      parentId: 'p',
      spawnMode: 'fresh',
    });
    expect(event(['01', 'hook-stop', '--client', 'foo', '--child-id', 'c', '--exit-code', '1']).event).toEqual({
      intent: 'hook-stop',
      taskRef: '01',
      childId: 'c',
      exitCode: 1,
    });
  });

  it('reads numbers as upstream does: any integer-valued Number()', () => {
    expect(event(['01', 'begin-or-resume', '--max-steps', '1e3']).event).toEqual({
      intent: 'begin-or-resume',
      taskRef: '01',
      maxSteps: 1000,
    });
    expect(event(['01', 'begin-or-resume', '--max-steps', '05']).event).toEqual({ intent: 'begin-or-resume', taskRef: '01', maxSteps: 5 });
    expect(event(['01', 'hook-stop', '--child-id', 'c', '--exit-code', '0.0']).event).toEqual({
      intent: 'hook-stop',
      taskRef: '01',
      childId: 'c',
      exitCode: 0,
    });
    expect(
      event(['01', 'complete-stage', '--stage', 'plan', '--round', '02', '--artifact', 'plan-r2.md', '--agent', 'x']).event,
    ).toMatchObject({ round: 2 });
  });

  it('takes any task ref, even empty or long: the engine answers INVALID_TASK_REF', () => {
    expect(event(['', 'route']).event).toEqual({ intent: 'route', taskRef: '' });
    expect(event(['x'.repeat(300), 'advance']).event).toEqual({ intent: 'advance', taskRef: 'x'.repeat(300) });
  });

  it('reads common options', () => {
    expect(
      event(['01', 'status', '--repo', '/r', '--redis', 'redis://h:1', '--timeout', '500', '--worker', 'inline', '--idempotency-key', 'k1'])
        .options,
    ).toEqual({
      repo: '/r',
      redis: 'redis://h:1',
      timeoutMs: 500,
      worker: 'inline',
      idempotencyKey: 'k1',
    });
  });

  it('--help or -h asks for help as an argument or an option name, not as an option value', () => {
    expect(parseTaskCommand(['01', 'prepare', '--help'])).toEqual({ kind: 'help' });
    expect(parseTaskCommand(['-h'])).toEqual({ kind: 'help' });
    expect(parseTaskCommand(['01', '--help'])).toEqual({ kind: 'help' });
    expect(parseTaskCommand(['01', 'route', 'foo', '-h'])).toEqual({ kind: 'help' });
    const pause = { intent: 'pause', taskRef: '01', code: 'X', message: '-h', recoverable: true };
    expect(event(['01', 'pause', '--code', 'X', '--message', '-h', '--recoverable', 'true']).event).toEqual(pause);
  });
});

describe('claim-spawn is internal', () => {
  it('baton task does not offer the hook-only intent', () => {
    expect(parseTaskCommand(['auto', 'claim-spawn', '--client', 'codex'])).toEqual({
      kind: 'usage-error',
      message: "unknown intent 'claim-spawn'",
    });
  });
});
