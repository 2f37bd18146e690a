import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decideHook, parseHookInput } from '../../src/cli/hook.ts';
import type { HookPayload } from '../../src/cli/hook.ts';
import { EXAMPLE_HOOKS_DIR } from '../support/fixturePaths.ts';

// How native payloads become events (docs/lifecycle.md §10.2–10.3, scenarios 53–55).

const EXAMPLES = EXAMPLE_HOOKS_DIR;

function payload(value: unknown): HookPayload {
  const parsed = parseHookInput(Buffer.from(JSON.stringify(value)));
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.payload;
}

const claudeStart = { agent_id: 'claude-child', agent_type: 'agent-infra-lifecycle-reviewer', cwd: '/repo', hook_event_name: 'SubagentStart', session_id: 'claude-parent', transcript_path: '/t.jsonl' };
const claudeStop = { ...claudeStart, hook_event_name: 'SubagentStop', agent_transcript_path: '/a.jsonl', last_assistant_message: 'done', stop_hook_active: false };

describe('decideHook', () => {
  it('53: an unrelated subagent is ignored', () => {
    expect(decideHook('claude-code', payload({ ...claudeStart, agent_type: 'general-purpose' }))).toEqual({ kind: 'ignore' });
  });

  it('54: Claude start/stop fixtures become exactly the upstream events', () => {
    const start = decideHook('claude-code', payload(claudeStart));
    expect(start.kind).toBe('event');
    if (start.kind !== 'event') return;
    expect(start.event).toEqual({ intent: 'hook-start', taskRef: 'auto', client: 'claude-code', nativeAgent: 'agent-infra-lifecycle-reviewer', childId: 'claude-child', parentId: 'claude-parent', spawnMode: 'fresh' });
    const stop = decideHook('claude-code', payload(claudeStop));
    expect(stop.kind === 'event' && stop.event).toEqual({ intent: 'hook-stop', taskRef: 'auto', client: 'claude-code', nativeAgent: 'agent-infra-lifecycle-reviewer', childId: 'claude-child' });
  });

  it('the same payload delivered twice gets the same event id; start and stop differ', () => {
    const a = decideHook('claude-code', payload(claudeStart));
    const b = decideHook('claude-code', payload({ ...claudeStart, transcript_path: '/elsewhere' }));
    const stop = decideHook('claude-code', payload(claudeStop));
    expect(a.kind === 'event' && b.kind === 'event' && a.eventId === b.eventId).toBe(true);
    expect(a.kind === 'event' && stop.kind === 'event' && a.eventId !== stop.eventId).toBe(true);
    expect(a.kind === 'event' && /^h-[0-9a-f]{40}$/.test(a.eventId)).toBe(true);
  });

  it('Codex payloads carry the actual model', () => {
    const start = decideHook('codex', payload(JSON.parse(fs.readFileSync(`${EXAMPLES}/codex/SubagentStart.json`, 'utf8'))));
    expect(start.kind === 'event' && start.event).toEqual({
      intent: 'hook-start', taskRef: 'auto', client: 'codex', nativeAgent: 'agent-infra-lifecycle-reviewer',
      childId: '019a3c60-child-thread', parentId: '019a3c55-codex-session', spawnMode: 'fresh', actualModel: 'gpt-5-codex',
    });
    const stop = decideHook('codex', payload(JSON.parse(fs.readFileSync(`${EXAMPLES}/codex/SubagentStop.json`, 'utf8'))));
    expect(stop.kind === 'event' && stop.event.intent).toBe('hook-stop');
  });

  it('--event overrides the payload kind; unknown kinds are an error', () => {
    const forced = decideHook('codex', payload({ ...claudeStart, hook_event_name: 'whatever' }), 'subagent-stop');
    expect(forced.kind === 'event' && forced.event.intent).toBe('hook-stop');
    expect(decideHook('claude-code', payload({ ...claudeStart, hook_event_name: 'Notification' }))).toEqual({ kind: 'error', message: 'Managed lifecycle hook event has an unknown type' });
  });

  it('a managed event without a child id is an error (never exit 2, which would keep a stopping child running)', () => {
    const { agent_id: _drop, ...noChild } = claudeStop;
    expect(decideHook('claude-code', payload(noChild))).toEqual({ kind: 'error', message: 'Managed lifecycle hook event has no child identity (agent_id)' });
  });

  it('PreToolUse on the spawning tool asks for a spawn check; other tools are ignored', () => {
    const pre = JSON.parse(fs.readFileSync(`${EXAMPLES}/claude-code/PreToolUse-Task.json`, 'utf8'));
    expect(decideHook('claude-code', payload(pre))).toEqual({ kind: 'spawn-check', nativeAgent: 'agent-infra-lifecycle-executor' });
    expect(decideHook('claude-code', payload({ ...pre, tool_name: 'Bash' }))).toEqual({ kind: 'ignore' });
    expect(decideHook('claude-code', payload({ ...pre, tool_input: { subagent_type: 'Explore' } }))).toEqual({ kind: 'ignore' });
    expect(decideHook('codex', payload({ hook_event_name: 'PreToolUse', tool_name: 'spawn_agent', tool_input: { agent_type: 'agent-infra-lifecycle-reviewer' } }))).toEqual({ kind: 'spawn-check', nativeAgent: 'agent-infra-lifecycle-reviewer' });
  });
});

describe('parseHookInput', () => {
  it('55: `{` → the upstream message', () => {
    expect(parseHookInput(Buffer.from('{'))).toEqual({ ok: false, message: 'Lifecycle delegation hook received invalid JSON' });
  });
  it('empty input is {}', () => {
    expect(parseHookInput(Buffer.from(''))).toEqual({ ok: true, payload: {} });
  });
  it('over 64 KiB is refused', () => {
    expect(parseHookInput(Buffer.alloc(64 * 1024 + 1, 32))).toEqual({ ok: false, message: 'Lifecycle delegation hook input exceeds 64 KiB' });
  });
  it('non-object JSON and wrongly typed fields are refused with the field named', () => {
    expect(parseHookInput(Buffer.from('[1,2]')).ok).toBe(false);
    const typed = parseHookInput(Buffer.from('{"agent_id": 7}'));
    expect(typed).toEqual({ ok: false, message: expect.stringContaining('agent_id') });
  });
});
