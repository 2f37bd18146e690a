import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decideHook, nativeEventId } from '../../src/hooks/decide.ts';
import type { EventDecision } from '../../src/hooks/decide.ts';
import { parseHookInput } from '../../src/hooks/payload.ts';
import { clientAdapter } from '../../src/clients/registry.ts';
import type { ClientId } from '../../src/clients/registry.ts';
import { EXAMPLE_HOOKS_DIR } from '../support/fixturePaths.ts';

// The payloads the real clients sent (recorded by test/agents/mainPath.test.ts, normalised,
// checked in as test/fixtures/hooks/<client>-<version>/) mapped by baton's hook, without a client.

const observed = fs
  .readdirSync(EXAMPLE_HOOKS_DIR)
  .filter((name) => /^(claude-code|codex|copilot-cli)-\d/.test(name))
  .map((name) => ({
    name,
    client: /^(claude-code|codex|copilot-cli)/.exec(name)![1] as ClientId,
    dir: path.join(EXAMPLE_HOOKS_DIR, name),
  }));

/** The fixture file of each event, as each client's hooks named it (Copilot CLI's are camelCase and carry no event name). */
const FILES: Readonly<Record<ClientId, { pre: string | RegExp; start: string; stop: string }>> = {
  // Claude Code's spawning tool is `Task` up to 2.1.x, then `Agent`.
  'claude-code': { pre: /PreToolUse-(Agent|Task)\.json$/, start: 'SubagentStart.json', stop: 'SubagentStop.json' },
  codex: { pre: 'PreToolUse-spawn_agent.json', start: 'SubagentStart.json', stop: 'SubagentStop.json' },
  'copilot-cli': { pre: 'preToolUse-task.json', start: 'subagentStart.json', stop: 'subagentStop.json' },
};

/** The event name the installed hook command passes (`--event`), for a client whose payload names none. */
function eventOption(client: ClientId, event: 'pre-tool' | 'subagent-start' | 'subagent-stop'): string | undefined {
  return client === 'copilot-cli' ? event : undefined;
}

function load(dir: string, suffix: string | RegExp): Record<string, any> {
  const file = fs.readdirSync(dir).find((name) => (typeof suffix === 'string' ? name.endsWith(suffix) : suffix.test(name)));
  if (!file) throw new Error(`no *${suffix} in ${dir}`);
  return JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Record<string, any>;
}

describe.each(observed)('$name', ({ client, dir }) => {
  it('the spawning tool is checked, the lifecycle events become hook-start / hook-stop', () => {
    const read = (payload: Record<string, any>) => clientAdapter(client)!.hook.payload?.(payload) ?? payload;
    const [pre, start, stop] = [FILES[client].pre, FILES[client].start, FILES[client].stop].map((file) => load(dir, file));
    for (const payload of [pre, start, stop]) expect(parseHookInput(Buffer.from(JSON.stringify(payload))).ok).toBe(true);

    expect(decideHook(client, read(pre!) as never, eventOption(client, 'pre-tool'))).toMatchObject({
      kind: 'spawn-check',
      nativeAgent: 'agent-infra-lifecycle-executor',
    });
    const started = decideHook(client, read(start!) as never, eventOption(client, 'subagent-start'));
    expect(started).toMatchObject({
      kind: 'event',
      event: {
        intent: 'hook-start',
        client,
        nativeAgent: 'agent-infra-lifecycle-executor',
        childId: read(start!).agent_id,
        parentId: read(start!).session_id,
        spawnMode: 'fresh',
      },
    });
    // Codex reports the child's model; Claude Code and Copilot CLI report none.
    expect((started as { event: { actualModel?: string } }).event.actualModel).toBe(client === 'codex' ? start!.model : undefined);
    const stopped = decideHook(client, read(stop!) as never, eventOption(client, 'subagent-stop'));
    expect(stopped).toMatchObject({ kind: 'event', event: { intent: 'hook-stop', childId: read(start!).agent_id } });
    // The same child: a start and a stop are different events.
    expect(nativeEventId(stopped as EventDecision, null)).not.toBe(nativeEventId(started as EventDecision, null));
  });
});
