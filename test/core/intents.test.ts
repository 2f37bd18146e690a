import { describe, expect, it } from 'vitest';
import {
  EVENT_FLAG_SPECS,
  INTENTS,
  INTERNAL_INTENTS,
  LIFECYCLE_INTENTS,
  READ_ONLY_INTENTS,
  intentFlags,
  requiredFlags,
} from '../../src/core/intents.ts';
import { lifecycleEventSchema } from '../../src/core/events.ts';
import { TASK_USAGE, parseTaskCommand } from '../../src/cli/taskArgs.ts';

function usageIntents(): string[] {
  const section = TASK_USAGE.split('Intents:\n')[1]!.split('\n\n')[0]!;
  // An intent's block starts at two spaces of indent; continuation lines are indented further.
  return section
    .split('\n')
    .filter((line) => /^ {2}\S/.test(line))
    .map((line) => line.trim().split(/\s+/)[0]!);
}

describe('the intent table', () => {
  it('the usage text lists exactly the offered intents of the table, in its order', () => {
    expect(usageIntents()).toEqual(LIFECYCLE_INTENTS.filter((intent) => !INTERNAL_INTENTS.has(intent)));
  });

  it('names every intent the event schema accepts, and no other', () => {
    const schemaIntents = lifecycleEventSchema.def.options.map((option) => option.shape.intent.def.values[0]);
    expect([...LIFECYCLE_INTENTS].sort()).toEqual([...schemaIntents].sort());
  });

  it('derives the read-only and internal sets', () => {
    expect([...READ_ONLY_INTENTS]).toEqual(['route', 'status']);
    expect([...INTERNAL_INTENTS]).toEqual(['claim-spawn', 'release-spawn', 'reconcile', 'child-gone']);
  });

  it('each required flag is one of the flags the intent reads', () => {
    for (const intent of LIFECYCLE_INTENTS) {
      for (const auto of [false, true]) {
        for (const flag of requiredFlags(intent, auto)) expect(INTENTS[intent].flags as readonly string[]).toContain(flag);
      }
    }
  });

  it('the CLI reports the first missing required flag of the table, per form', () => {
    expect(parseTaskCommand(['T1', 'hook-stop'])).toEqual({ kind: 'usage-error', message: "intent 'hook-stop' requires '--child-id'" });
    expect(parseTaskCommand(['auto', 'hook-stop'])).toEqual({ kind: 'usage-error', message: "intent 'hook-stop' requires '--client'" });
    expect(parseTaskCommand(['auto', 'hook-start', '--client', 'codex'])).toEqual({
      kind: 'usage-error',
      message: "intent 'hook-start' requires '--native-agent'",
    });
    expect(parseTaskCommand(['T1', 'claim-spawn'])).toEqual({ kind: 'usage-error', message: "unknown intent 'claim-spawn'" });
  });
});

describe('the event builder follows the table', () => {
  it('reads the auto-only flags only in the auto form (upstream ignores them with a task ref)', () => {
    const explicit = parseTaskCommand([
      'T1',
      'hook-stop',
      '--client',
      'nobody',
      '--native-agent',
      'a',
      '--child-id',
      'c',
      '--exit-code',
      '0',
    ]);
    expect(explicit).toMatchObject({ kind: 'ok', event: { intent: 'hook-stop', taskRef: 'T1', childId: 'c', exitCode: 0 } });
    expect(explicit.kind === 'ok' && 'client' in explicit.event).toBe(false);
    expect(parseTaskCommand(['auto', 'hook-stop', '--client', 'nobody', '--native-agent', 'a', '--child-id', 'c'])).toEqual({
      kind: 'usage-error',
      message: "unknown client 'nobody'",
    });
  });

  it("checks values in the order of the intent's flags, with upstream's messages", () => {
    const args = ['T1', 'validate-stage', '--role', 'judge', '--round', '0', '--stage', 'nope', '--artifact', 'a.md'];
    expect(parseTaskCommand(args)).toEqual({ kind: 'usage-error', message: expect.stringMatching(/^--stage must be one of /) });
    expect(parseTaskCommand([...args.slice(0, 7), 'analysis', '--artifact', 'a.md'])).toEqual({
      kind: 'usage-error',
      message: '--round must be a positive integer',
    });
    expect(
      parseTaskCommand(['T1', 'validate-stage', '--role', 'judge', '--round', '1', '--stage', 'analysis', '--artifact', 'a.md']),
    ).toEqual({
      kind: 'usage-error',
      message: '--role must be executor or reviewer',
    });
    expect(parseTaskCommand(['T1', 'pause', '--code', 'X', '--message', 'm', '--recoverable', 'yes'])).toEqual({
      kind: 'usage-error',
      message: '--recoverable must be true or false',
    });
    expect(parseTaskCommand(['T1', 'advance', '--content', '-'])).toEqual({
      kind: 'usage-error',
      message: "option '--content' is only accepted by complete-stage",
    });
  });
});

describe('the auto and task-ref forms of hook events', () => {
  it('the guards tell the forms apart on parsed events', async () => {
    const { isAutoHookStart, isAutoHookStop, isExplicitHookStop } = await import('../../src/core/events.ts');
    const stop = (event: unknown) =>
      lifecycleEventSchema.parse(event) as Extract<ReturnType<typeof lifecycleEventSchema.parse>, { intent: 'hook-stop' }>;
    const auto = stop({ intent: 'hook-stop', taskRef: 'auto', client: 'codex', nativeAgent: 'a', childId: 'c' });
    const explicit = stop({ intent: 'hook-stop', taskRef: 'T1', childId: 'c', exitCode: 3 });
    expect([isAutoHookStop(auto), isExplicitHookStop(auto)]).toEqual([true, false]);
    expect([isAutoHookStop(explicit), isExplicitHookStop(explicit)]).toEqual([false, true]);
    const start = lifecycleEventSchema.parse({
      intent: 'hook-start',
      taskRef: 'T1',
      nativeAgent: 'a',
      childId: 'c',
      parentId: 'p',
      spawnMode: 'fresh',
    });
    expect(start.intent === 'hook-start' && isAutoHookStart(start)).toBe(false);
    expect(
      lifecycleEventSchema.safeParse({ intent: 'hook-stop', taskRef: 'auto', client: 'codex', childId: 'c' }).error?.issues[0]?.message,
    ).toBe("intent 'hook-stop' requires '--native-agent'");
  });

  it('the schema requires the fields of each form, named by their flags, as the table says', () => {
    const issues = (event: unknown) =>
      lifecycleEventSchema.safeParse(event).error?.issues.map((issue) => [issue.path.join('.'), issue.message]);
    expect(issues({ intent: 'hook-stop', taskRef: 'auto', childId: 'c' })).toEqual([
      ['client', "intent 'hook-stop' requires '--client'"],
      ['nativeAgent', "intent 'hook-stop' requires '--native-agent'"],
    ]);
    expect(issues({ intent: 'hook-stop', taskRef: 'T1', childId: 'c' })).toEqual([
      ['exitCode', "intent 'hook-stop' requires '--exit-code'"],
    ]);
    expect(issues({ intent: 'hook-start', taskRef: 'auto', nativeAgent: 'a', childId: 'c', parentId: 'p', spawnMode: 'fresh' })).toEqual([
      ['client', "intent 'hook-start' requires '--client'"],
    ]);
    expect(issues({ intent: 'hook-stop', taskRef: 'T1', childId: 'c', exitCode: 0 })).toBeUndefined();
  });
});

describe('the table and the schema agree', () => {
  it("every flag an intent reads names a field of that intent's event", () => {
    for (const option of lifecycleEventSchema.def.options) {
      const intent = option.shape.intent.def.values[0]!;
      const fields = Object.keys(option.shape);
      for (const flag of intentFlags(intent, true)) expect(fields).toContain(EVENT_FLAG_SPECS[flag].field);
    }
  });
});
