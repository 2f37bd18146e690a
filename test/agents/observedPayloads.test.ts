import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decideHook, nativeEventId } from '../../src/hooks/decide.ts';
import type { EventDecision } from '../../src/hooks/decide.ts';
import { parseHookInput } from '../../src/hooks/payload.ts';
import { EXAMPLE_HOOKS_DIR } from '../support/fixturePaths.ts';

// The payloads the real clients sent (recorded by test/agents/mainPath.test.ts, normalised,
// checked in as test/fixtures/hooks/<client>-<version>/) mapped by baton's hook, without a client.

const observed = fs
  .readdirSync(EXAMPLE_HOOKS_DIR)
  .filter((name) => /^(claude-code|codex)-\d/.test(name))
  .map((name) => ({
    name,
    client: name.startsWith('codex') ? ('codex' as const) : ('claude-code' as const),
    dir: path.join(EXAMPLE_HOOKS_DIR, name),
  }));

function load(dir: string, suffix: string | RegExp): Record<string, any> {
  const file = fs.readdirSync(dir).find((name) => (typeof suffix === 'string' ? name.endsWith(suffix) : suffix.test(name)));
  if (!file) throw new Error(`no *${suffix} in ${dir}`);
  return JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Record<string, any>;
}

describe.each(observed)('$name', ({ client, dir }) => {
  it('the spawning tool is checked, the lifecycle events become hook-start / hook-stop', () => {
    // Claude Code's spawning tool is `Task` up to 2.1.x, then `Agent`.
    const pre = load(dir, client === 'codex' ? 'PreToolUse-spawn_agent.json' : /PreToolUse-(Agent|Task)\.json$/);
    const start = load(dir, 'SubagentStart.json');
    const stop = load(dir, 'SubagentStop.json');
    for (const payload of [pre, start, stop]) expect(parseHookInput(Buffer.from(JSON.stringify(payload))).ok).toBe(true);

    expect(decideHook(client, pre as never)).toMatchObject({ kind: 'spawn-check', nativeAgent: 'agent-infra-lifecycle-executor' });
    const started = decideHook(client, start as never);
    expect(started).toMatchObject({
      kind: 'event',
      event: {
        intent: 'hook-start',
        client,
        nativeAgent: 'agent-infra-lifecycle-executor',
        childId: start.agent_id,
        parentId: start.session_id,
        spawnMode: 'fresh',
      },
    });
    // Codex reports the child's model; Claude Code reports none.
    expect((started as { event: { actualModel?: string } }).event.actualModel).toBe(client === 'codex' ? start.model : undefined);
    const stopped = decideHook(client, stop as never);
    expect(stopped).toMatchObject({ kind: 'event', event: { intent: 'hook-stop', childId: start.agent_id } });
    // The same child: a start and a stop are different events.
    expect(nativeEventId(stopped as EventDecision, null)).not.toBe(nativeEventId(started as EventDecision, null));
  });
});
