import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { copilotPayload } from '../../src/clients/copilot-cli/index.ts';
import { decideHook, nativeEventId, spawnFork } from '../../src/hooks/decide.ts';
import { parseHookInput } from '../../src/hooks/payload.ts';
import { checkoutProblem, mainRepositoryOf, repositoryOf } from '../../src/base/repoRoot.ts';
import type { HookPayload } from '../../src/hooks/payload.ts';
import { EXAMPLE_HOOKS_DIR } from '../support/fixturePaths.ts';
import { nativeStart, nativeStop } from '../support/engineEvents.ts';

// How native payloads become events (docs/lifecycle.md §10.2–10.3, scenarios 53–55).

const EXAMPLES = EXAMPLE_HOOKS_DIR;

function payload(value: unknown): HookPayload {
  const parsed = parseHookInput(Buffer.from(JSON.stringify(value)));
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.payload;
}

const claudeStart = {
  agent_id: 'claude-child',
  agent_type: 'agent-infra-lifecycle-reviewer',
  cwd: '/repo',
  hook_event_name: 'SubagentStart',
  session_id: 'claude-parent',
  transcript_path: '/t.jsonl',
};
const claudeStop = {
  ...claudeStart,
  hook_event_name: 'SubagentStop',
  agent_transcript_path: '/a.jsonl',
  last_assistant_message: 'done',
  stop_hook_active: false,
};

describe('decideHook', () => {
  it('53: an unrelated subagent is ignored', () => {
    expect(decideHook('claude-code', payload({ ...claudeStart, agent_type: 'general-purpose' }))).toEqual({ kind: 'ignore' });
  });

  it('54: Claude start/stop fixtures become exactly the upstream events', () => {
    const start = decideHook('claude-code', payload(claudeStart), undefined, { invocationId: 'one' });
    expect(start.kind).toBe('event');
    if (start.kind !== 'event') return;
    expect(start.event).toEqual({
      ...nativeStart({ role: 'reviewer', childId: 'claude-child', parentId: 'claude-parent' }),
      // baton: the subagent's transcript beside the session's, kept on the receipt for a seal without a stop.
      usageRecord: '/t/subagents/agent-claude-child.jsonl',
      usageFormat: 'claude-code-transcript',
    });
    const stop = decideHook('claude-code', payload(claudeStop));
    expect(stop.kind === 'event' && stop.event).toEqual({
      ...nativeStop({ role: 'reviewer', childId: 'claude-child' }),
      // baton: the child's own record, which the worker reads the stage's cost from.
      usageRecord: '/a.jsonl',
      usageFormat: 'claude-code-transcript',
    });
  });

  it('a stop names the child’s own record of its requests (ClientHook.usageRecord), outside the event id', () => {
    const codexStop = { ...claudeStop, turn_id: 'turn-1', agent_transcript_path: '/r/rollout-child.jsonl' };
    const codex = decideHook('codex', payload(codexStop));
    expect(codex.kind === 'event' && codex.event).toMatchObject({ usageRecord: '/r/rollout-child.jsonl', usageFormat: 'codex-rollout' });
    // An --ephemeral Codex session sends null: nothing is named, and the seal notes it.
    const ephemeral = decideHook('codex', payload({ ...codexStop, agent_transcript_path: null }));
    expect(ephemeral.kind === 'event' && 'usageRecord' in ephemeral.event).toBe(false);
    // Claude Code's transcript_path is the parent's: never taken for the child's.
    const noAgentRecord = decideHook('claude-code', payload({ ...claudeStop, agent_transcript_path: undefined }));
    expect(noAgentRecord.kind === 'event' && 'usageRecord' in noAgentRecord.event).toBe(false);
    const elsewhere = decideHook('codex', payload({ ...codexStop, agent_transcript_path: '/elsewhere.jsonl' }));
    expect(codex.kind === 'event' && elsewhere.kind === 'event' && nativeEventId(codex, null) === nativeEventId(elsewhere, null)).toBe(
      true,
    );
    // Copilot CLI's session events file (transcriptPath, camelCase).
    const copilot = decideHook(
      'copilot-cli',
      copilotPayload({
        hook_event_name: 'subagentStop',
        agentId: 'c1',
        agentName: 'agent-infra-lifecycle-executor',
        sessionId: 's',
        transcriptPath: '/s/events.jsonl',
      }),
    );
    expect(copilot.kind === 'event' && copilot.event).toMatchObject({ usageRecord: '/s/events.jsonl', usageFormat: 'copilot-events' });
    // SubagentStart: Codex's transcript_path is the child's rollout only when named by the child's thread id.
    const codexStart = { ...claudeStart, agent_id: 'thread-9', turn_id: 't' };
    const named = decideHook('codex', payload({ ...codexStart, transcript_path: '/s/rollout-2026-thread-9.jsonl' }));
    expect(named.kind === 'event' && named.event).toMatchObject({
      usageRecord: '/s/rollout-2026-thread-9.jsonl',
      usageFormat: 'codex-rollout',
    });
    const parents = decideHook('codex', payload({ ...codexStart, transcript_path: '/s/rollout-2026-parent.jsonl' }));
    expect(parents.kind === 'event' && 'usageRecord' in parents.event).toBe(false);
  });

  it('event ids carry the turn: Codex turn_id, else one id per hook invocation (Claude Code resumes repeat every id)', () => {
    const codex = { ...claudeStart, turn_id: 'turn-1' };
    const a = decideHook('codex', payload(codex));
    const b = decideHook('codex', payload({ ...codex, transcript_path: '/elsewhere' }));
    const nextTurn = decideHook('codex', payload({ ...codex, turn_id: 'turn-2' }));
    const stop = decideHook('codex', payload({ ...codex, hook_event_name: 'SubagentStop' }));
    expect(a.kind === 'event' && b.kind === 'event' && nativeEventId(a, null) === nativeEventId(b, null)).toBe(true);
    expect(a.kind === 'event' && nextTurn.kind === 'event' && nativeEventId(a, null) !== nativeEventId(nextTurn, null)).toBe(true);
    expect(a.kind === 'event' && stop.kind === 'event' && nativeEventId(a, null) !== nativeEventId(stop, null)).toBe(true);
    expect(a.kind === 'event' && /^h-[0-9a-f]{40}$/.test(nativeEventId(a, null))).toBe(true);
    const first = decideHook('claude-code', payload(claudeStop));
    const resumed = decideHook('claude-code', payload(claudeStop));
    expect(first.kind === 'event' && resumed.kind === 'event' && nativeEventId(first, null) !== nativeEventId(resumed, null)).toBe(true);
    const same = decideHook('claude-code', payload(claudeStop), undefined, { invocationId: 'x' });
    expect(same).toEqual(decideHook('claude-code', payload(claudeStop), undefined, { invocationId: 'x' }));
  });

  it("child id precedence is upstream's: child_id, then agent_id, then thread_id", () => {
    const both = decideHook('codex', payload({ ...claudeStop, child_id: 'from-child-id', thread_id: 'from-thread' }));
    expect(both.kind === 'event' && both.event.intent === 'hook-stop' && both.event.childId).toBe('from-child-id');
    const { agent_id: _drop, ...noAgent } = claudeStop;
    const thread = decideHook('codex', payload({ ...noAgent, thread_id: 'from-thread' }));
    expect(thread.kind === 'event' && thread.event.intent === 'hook-stop' && thread.event.childId).toBe('from-thread');
  });

  it('an agent-infra-lifecycle-* type that is neither executor nor reviewer is DELEGATION_IGNORED (exit 1), as upstream', () => {
    expect(decideHook('claude-code', payload({ ...claudeStart, agent_type: 'agent-infra-lifecycle-planner' }))).toEqual({
      kind: 'error',
      message: "baton: DELEGATION_IGNORED: subagent 'agent-infra-lifecycle-planner' is not lifecycle-managed",
    });
  });

  it('unmanaged agents are ignored whatever their fields hold; managed ones are validated strictly', () => {
    expect(decideHook('codex', payload({ ...claudeStart, agent_type: 'general-purpose', model: { id: 'x' }, agent_id: 7 }))).toEqual({
      kind: 'ignore',
    });
    const managed = decideHook('codex', payload({ ...claudeStart, model: { id: 'x' } }));
    expect(managed).toEqual({
      kind: 'error',
      message: 'Lifecycle delegation hook payload is not a hook event object (model: Invalid input: expected string, received object)',
    });
  });

  it('Codex payloads carry the actual model', () => {
    const start = decideHook('codex', payload(JSON.parse(fs.readFileSync(`${EXAMPLES}/codex/SubagentStart.json`, 'utf8'))));
    expect(start.kind === 'event' && start.event).toEqual(
      nativeStart({
        role: 'reviewer',
        childId: '019a3c60-child-thread',
        parentId: '019a3c55-codex-session',
        client: 'codex',
        actualModel: 'gpt-5-codex',
      }),
    );
    const stop = decideHook('codex', payload(JSON.parse(fs.readFileSync(`${EXAMPLES}/codex/SubagentStop.json`, 'utf8'))));
    expect(stop.kind === 'event' && stop.event.intent).toBe('hook-stop');
  });

  it('--event overrides the payload kind; unknown kinds are an error', () => {
    const forced = decideHook('codex', payload({ ...claudeStart, hook_event_name: 'whatever' }), 'subagent-stop');
    expect(forced.kind === 'event' && forced.event.intent).toBe('hook-stop');
    expect(decideHook('claude-code', payload({ ...claudeStart, hook_event_name: 'Notification' }))).toEqual({
      kind: 'error',
      message: 'Managed lifecycle hook event has an unknown type',
    });
  });

  it('a managed event without a child id is an error (never exit 2, which would keep a stopping child running)', () => {
    const { agent_id: _drop, ...noChild } = claudeStop;
    expect(decideHook('claude-code', payload(noChild))).toEqual({
      kind: 'error',
      message: 'Managed lifecycle hook event has no child identity (agent_id)',
    });
  });

  it('PreToolUse on the spawning tool asks for a spawn check; other tools are ignored', () => {
    const pre = JSON.parse(fs.readFileSync(`${EXAMPLES}/claude-code/PreToolUse-Task.json`, 'utf8'));
    expect(decideHook('claude-code', payload({ ...pre, tool_use_id: 'toolu_1' }))).toEqual({
      kind: 'spawn-check',
      nativeAgent: 'agent-infra-lifecycle-executor',
      toolCallId: 'toolu_1',
    });
    expect(decideHook('claude-code', payload({ ...pre, tool_name: 'Bash' }))).toEqual({ kind: 'ignore' });
    expect(decideHook('claude-code', payload({ ...pre, tool_input: { subagent_type: 'Explore' } }))).toEqual({ kind: 'ignore' });
    expect(
      decideHook(
        'codex',
        payload({
          hook_event_name: 'PreToolUse',
          tool_name: 'spawn_agent',
          tool_use_id: 'call_9',
          tool_input: { agent_type: 'agent-infra-lifecycle-reviewer' },
        }),
      ),
    ).toEqual({ kind: 'spawn-check', nativeAgent: 'agent-infra-lifecycle-reviewer', toolCallId: 'call_9' });
  });

  it("Copilot CLI's `task` is its own: its required `name` is not taken for Claude Code's agent-team field", () => {
    const task = {
      toolName: 'task',
      toolArgs: { name: 'stage', agent_type: 'agent-infra-lifecycle-executor', prompt: 'go', mode: 'sync' },
    };
    const decided = decideHook('copilot-cli', payload(copilotPayload(task)), 'pre-tool', { invocationId: 'i1' });
    expect(decided).toEqual({ kind: 'spawn-check', nativeAgent: 'agent-infra-lifecycle-executor', toolCallId: 'invocation:i1' });
    // The same input as Claude Code's old `Task` would make a named teammate.
    expect(decideHook('claude-code', payload({ hook_event_name: 'PreToolUse', tool_name: 'Task', tool_input: task.toolArgs })).kind).toBe(
      'spawn-refused',
    );
  });

  it('forked and worktree-isolated lifecycle spawns are refused at PreToolUse with a reason', () => {
    const v2 = {
      hook_event_name: 'PreToolUse',
      tool_name: 'collaborationspawn_agent',
      tool_use_id: 'call_1',
      tool_input: { agent_type: 'agent-infra-lifecycle-executor', message: 'go' },
    };
    const refusedDefault = decideHook('codex', payload(v2));
    expect(refusedDefault).toEqual({
      kind: 'spawn-refused',
      reason:
        'baton: DELEGATION_FORK_FORBIDDEN: spawn mode \'fork\' is not fresh: fork_turns is not set, so the child would inherit the whole parent conversation. Spawn agent-infra-lifecycle-executor fresh (fork_turns: "none").',
    });
    expect(decideHook('codex', payload({ ...v2, tool_input: { ...v2.tool_input, fork_turns: 'all' } })).kind).toBe('spawn-refused');
    expect(decideHook('codex', payload({ ...v2, tool_input: { ...v2.tool_input, fork_turns: 'none' } })).kind).toBe('spawn-check');
    expect(
      decideHook(
        'codex',
        payload({ ...v2, tool_name: 'spawn_agent', tool_input: { agent_type: 'agent-infra-lifecycle-executor', fork_context: true } }),
      ).kind,
    ).toBe('spawn-refused');
    expect(
      decideHook('codex', payload({ ...v2, tool_name: 'spawn_agent', tool_input: { agent_type: 'agent-infra-lifecycle-executor' } })).kind,
    ).toBe('spawn-check');
    expect(spawnFork('spawn_agent', { fork_context: false })).toBeNull();
    const pre = JSON.parse(fs.readFileSync(`${EXAMPLES}/claude-code/PreToolUse-Task.json`, 'utf8'));
    const worktree = decideHook(
      'claude-code',
      payload({ ...pre, tool_name: 'Agent', tool_input: { ...pre.tool_input, isolation: 'worktree' } }),
    );
    expect(worktree).toEqual({
      kind: 'spawn-refused',
      reason:
        "baton: DELEGATION_ISOLATION_FORBIDDEN: agent-infra-lifecycle-executor with isolation 'worktree': Claude Code would run it in a new worktree made from HEAD (.claude/worktrees/agent-<id>), which has neither the task's .agents/workspace/ nor this checkout's uncommitted changes, and its changes would stay on that worktree's branch, outside the checkout the next stages run in. Spawn it without isolation; to run agents side by side, give each task its own worktree (baton new --worktree <branch>) and start the agent there.",
    });
    const remote = decideHook(
      'claude-code',
      payload({ ...pre, tool_name: 'Agent', tool_input: { ...pre.tool_input, isolation: 'remote' } }),
    );
    expect(remote).toMatchObject({
      kind: 'spawn-refused',
      reason: expect.stringContaining("isolation 'remote' would run it outside this checkout"),
    });
  });

  it('repositoryOf: a linked worktree is a checkout of its own and names its main repository (.git file → gitdir → commondir)', () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-wt-'));
    try {
      const main = path.join(base, 'main');
      const gitdir = path.join(main, '.git', 'worktrees', 'agent-1');
      fs.mkdirSync(gitdir, { recursive: true });
      fs.writeFileSync(path.join(gitdir, 'commondir'), '../..\n');
      const linked = path.join(main, '.claude', 'worktrees', 'agent-1');
      fs.mkdirSync(linked, { recursive: true });
      fs.writeFileSync(path.join(linked, '.git'), `gitdir: ${gitdir}\n`);
      expect(mainRepositoryOf(linked)).toBe(main);
      expect(mainRepositoryOf(main)).toBeNull();
      expect(repositoryOf(linked)).toEqual({ root: linked, main });
      expect(repositoryOf(main)).toEqual({ root: main, main: null });
      fs.mkdirSync(path.join(main, '.git', 'objects'));
      expect(checkoutProblem(linked)).toBeNull();
      expect(checkoutProblem(main)).toBeNull();
      // The main repository deleted: the worktree's git directory is gone with it, and baton says what to do.
      fs.rmSync(path.join(main, '.git'), { recursive: true });
      expect(checkoutProblem(linked)).toBe(
        `${linked} is a linked worktree whose git directory is gone: its main repository was moved or deleted, or the worktree was pruned ('git worktree prune'); run 'git worktree repair ${linked}' in the main repository, or add the worktree again`,
      );
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
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
    expect(parseHookInput(Buffer.alloc(64 * 1024 + 1, 32))).toEqual({
      ok: false,
      message: 'Lifecycle delegation hook input exceeds 64 KiB',
    });
  });
  it('non-object JSON is refused; field types are checked only for managed events (decideHook)', () => {
    expect(parseHookInput(Buffer.from('[1,2]'))).toEqual({
      ok: false,
      message: 'Lifecycle delegation hook payload is not a hook event object',
    });
    expect(parseHookInput(Buffer.from('{"agent_id": 7}')).ok).toBe(true);
    const typed = decideHook('claude-code', payload({ ...claudeStart, agent_id: 7 }));
    expect(typed).toEqual({ kind: 'error', message: expect.stringContaining('agent_id') });
  });
});
