import { describe, expect, it } from 'vitest';
import { INTENTS, INTERNAL_INTENTS, LIFECYCLE_INTENTS, READ_ONLY_INTENTS, requiredFlags } from '../../src/core/intents.ts';
import { lifecycleEventSchema } from '../../src/core/events.ts';
import { TASK_USAGE, parseTaskCommand } from '../../src/cli/taskArgs.ts';

function usageIntents(): string[] {
  const section = TASK_USAGE.split('intents:\n')[1]!.split('\n\ncommon options:')[0]!;
  // An intent's block starts at two spaces of indent; continuation lines are indented further.
  return section.split('\n').filter((line) => /^ {2}\S/.test(line)).map((line) => line.trim().split(/\s+/)[0]!);
}

describe('the intent table', () => {
  it('the usage text lists exactly the offered intents of the table, in its order', () => {
    expect(usageIntents()).toEqual(LIFECYCLE_INTENTS.filter((intent) => !INTERNAL_INTENTS.has(intent)));
  });

  it('names every intent the event schema accepts, and no other', () => {
    const schemaIntents = lifecycleEventSchema.options.map((option) => option.shape.intent.value);
    expect([...LIFECYCLE_INTENTS].sort()).toEqual([...schemaIntents].sort());
  });

  it('derives the read-only and internal sets', () => {
    expect([...READ_ONLY_INTENTS]).toEqual(['route', 'status']);
    expect([...INTERNAL_INTENTS]).toEqual(['claim-spawn']);
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
