import { describe, expect, it } from 'vitest';
import { decideHook } from '../../src/hooks/decide.ts';

// PostToolUse of a tool that ends a child without a stop (ClientHook.goneTools): the client's own
// evidence, decided into a `child-gone` event (docs/architecture.md "Reconciliation"). The payload
// is the one Claude Code 2.1.337 sends for TaskStop of a background subagent
// (test/agents/childGone.test.ts records it).

const taskStop = {
  session_id: 'parent-session',
  cwd: '/repo',
  hook_event_name: 'PostToolUse',
  tool_name: 'TaskStop',
  tool_input: { task_id: 'a1b2c3' },
  tool_response: { message: 'Successfully stopped task: a1b2c3', task_id: 'a1b2c3', task_type: 'local_agent' },
  tool_use_id: 'toolu_1',
};

describe('decideHook: PostToolUse of a gone tool', () => {
  it("Claude Code's TaskStop becomes child-gone for the stopped task, identified by its tool call", () => {
    const decision = decideHook('claude-code', taskStop);
    expect(decision).toEqual({
      kind: 'event',
      idParts: ['claude-code', 'gone', 'parent-session', 'a1b2c3', 'toolu_1'],
      event: { intent: 'child-gone', taskRef: 'auto', client: 'claude-code', childId: 'a1b2c3', evidence: 'TaskStop' },
    });
  });

  it('names the stopped subagent’s transcript beside the session’s (UsageRecord.ofChild), for the seal’s cost', () => {
    const decision = decideHook('claude-code', { ...taskStop, transcript_path: '/home/u/.claude/projects/-repo/parent-session.jsonl' });
    expect(decision).toMatchObject({
      kind: 'event',
      idParts: ['claude-code', 'gone', 'parent-session', 'a1b2c3', 'toolu_1'],
      event: {
        usageRecord: '/home/u/.claude/projects/-repo/parent-session/subagents/agent-a1b2c3.jsonl',
        usageFormat: 'claude-code-transcript',
      },
    });
    // An id that is not a plain name is not made into a path.
    const odd = decideHook('claude-code', {
      ...taskStop,
      tool_input: { task_id: '../x' },
      tool_response: { task_id: '../x' },
      transcript_path: '/t/s.jsonl',
    });
    expect(odd.kind === 'event' && 'usageRecord' in odd.event).toBe(false);
  });

  it('reads the id from the input when the response has none; ignores other tools, other clients, and a call with no id', () => {
    const fromInput = decideHook('claude-code', { ...taskStop, tool_response: 'stopped' });
    expect(fromInput).toMatchObject({ kind: 'event', event: { childId: 'a1b2c3' } });
    expect(decideHook('claude-code', { ...taskStop, tool_name: 'Bash' })).toEqual({ kind: 'ignore' });
    expect(decideHook('codex', taskStop)).toEqual({ kind: 'ignore' });
    expect(decideHook('claude-code', { ...taskStop, tool_input: {}, tool_response: {} })).toEqual({ kind: 'ignore' });
  });
});

describe('decideHook: an agent-team teammate spawn (Claude Code)', () => {
  const spawn = {
    session_id: 'parent-session',
    cwd: '/repo',
    hook_event_name: 'PreToolUse',
    tool_name: 'Agent',
    tool_use_id: 'toolu_2',
    tool_input: { subagent_type: 'agent-infra-lifecycle-executor', prompt: 'Run analyze-task for task 01.', description: 'stage' },
  };

  it('team_name or name is refused with DELEGATION_TEAMMATE_FORBIDDEN, naming the subagent way', () => {
    const refused = decideHook('claude-code', { ...spawn, tool_input: { ...spawn.tool_input, team_name: 'lifecycle', name: 'analyst' } });
    expect(refused).toEqual({
      kind: 'spawn-refused',
      reason:
        "baton: DELEGATION_TEAMMATE_FORBIDDEN: team_name 'lifecycle' and name 'analyst' would make agent-infra-lifecycle-executor an agent-team teammate (or a named agent others message), not a fresh subagent whose stage baton can measure. Spawn it as a subagent: the Agent tool with subagent_type 'agent-infra-lifecycle-executor', without team_name or name.",
    });
    expect(decideHook('claude-code', { ...spawn, tool_input: { ...spawn.tool_input, name: 'analyst' } })).toMatchObject({
      kind: 'spawn-refused',
      reason: expect.stringContaining("DELEGATION_TEAMMATE_FORBIDDEN: name 'analyst' would make"),
    });
  });

  it('a plain subagent spawn is checked as before; an unmanaged teammate is none of baton’s business', () => {
    expect(decideHook('claude-code', spawn)).toEqual({
      kind: 'spawn-check',
      nativeAgent: 'agent-infra-lifecycle-executor',
      toolCallId: 'toolu_2',
    });
    expect(
      decideHook('claude-code', { ...spawn, tool_input: { subagent_type: 'general-purpose', team_name: 'x', name: 'helper' } }),
    ).toEqual({ kind: 'ignore' });
  });
});
