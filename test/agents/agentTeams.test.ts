import { describe, expect, it } from 'vitest';
import { clientVersions } from '../support/agentClients.ts';
import { EXECUTOR, asOffered, executorThatCompletes, spawn } from '../support/agentScripts.ts';
import { expectCleanRun, recordedPayloads, worldFor } from '../support/agentWorld.ts';
import type { ModelRequest, Turn } from '../support/modelServer.ts';

// Issue 25, agent teams, with the real Claude Code (the newest pinned) and its agent teams on
// (CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1): a lifecycle agent spawned as a teammate (`team_name`,
// `name`) is refused at PreToolUse with DELEGATION_TEAMMATE_FORBIDDEN, whose message names the
// subagent way; the model then spawns it that way and the stage goes through. docs/clients.md
// "Agent teams".

const [claude] = clientVersions('claude-code');

describe('real Claude Code with agent teams: a teammate spawn of a lifecycle agent is refused', { timeout: 180_000 }, () => {
  it(`${claude!.label}: Agent with team_name and name → DELEGATION_TEAMMATE_FORBIDDEN naming the subagent way; the plain subagent spawn then passes`, async (context) => {
    const w = await worldFor(context, claude!, { record: true });
    w.env.CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS = '1';
    expect((await w.task('begin-or-resume')).status).toBe('running');
    expect((await w.task('prepare', '--client', 'claude-code')).run.pendingDelegation.status).toBe('prepared');
    const teammate = spawn('claude-code', EXECUTOR, 'Run analyze-task for task 01.', { team_name: 'lifecycle', name: 'analyst' });
    let offered: string[] = [];
    let refusal = '';
    const parent = (request: ModelRequest): Turn => {
      if (request.step === 0) {
        const call = asOffered(teammate, request);
        offered = Object.keys(call.input);
        return { toolCalls: [call] };
      }
      if (request.step === 1) {
        refusal = request.toolResults.at(-1) ?? '';
        return { toolCalls: [asOffered(spawn('claude-code', EXECUTOR, 'Run analyze-task for task 01.'), request)] };
      }
      return { text: 'done' };
    };
    const run = await w.run(
      'Drive task 01 through its analysis stage.',
      { parent, executor: executorThatCompletes('claude-code', w.baton) },
      120_000,
    );
    expectCleanRun(w, run);
    // This version's Agent tool declares both fields, so the model could send them.
    expect(offered).toEqual(expect.arrayContaining(['team_name', 'name']));
    expect(refusal).toContain('DELEGATION_TEAMMATE_FORBIDDEN');
    expect(refusal).toContain(
      "Spawn it as a subagent: the Agent tool with subagent_type 'agent-infra-lifecycle-executor', without team_name or name.",
    );
    const hooks = recordedPayloads(w);
    expect(hooks.map((hook) => [hook.event, hook.code])).toEqual([
      ['PreToolUse', 2],
      ['PreToolUse', 0],
      ['SubagentStart', 0],
      ['SubagentStop', 0],
    ]);
    expect(hooks[0]!.payload.tool_input).toMatchObject({ subagent_type: EXECUTOR, team_name: 'lifecycle', name: 'analyst' });
    // The refused call spawned nothing: the one child is the subagent, and its stage is sealed.
    expect(w.server.byRole('executor').filter((request) => request.step === 0)).toHaveLength(1);
    // A hook queues its event and exits without waiting for the result: the worker seals it after.
    await context.expect.poll(() => w.runFile().pendingDelegation?.status, { timeout: 60_000 }).toBe('sealed');
    expect(w.runFile().pendingDelegation).toMatchObject({ status: 'sealed', childId: hooks[2]!.payload.agent_id });
  });
});
