import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clientVersions } from '../support/agentClients.ts';
import { EXECUTOR, REVIEWER, batonResult, editMade, editingTurns, shell } from '../support/agentScripts.ts';
import { expectLeftOut, lateTurnExecutor, preparedReview, recordedPayloads, reviewHandOver, worldFor } from '../support/agentWorld.ts';
import type { AgentWorld } from '../support/agentWorld.ts';
import type { ModelRequest, ToolCall, Turn } from '../support/modelServer.ts';

// Issue 25, Codex's multi-agent v2 tools (`[features] multi_agent_v2 = true`), with the real Codex
// (the newest pinned): the tools sit in the `collaboration` namespace, `spawn_agent` takes a
// `task_name` and `fork_turns`, and a lifecycle child is talked to again with `followup_task` (a
// new turn) or `send_message` (no new turn). A follow-up turn of a child whose delegation was
// consumed is measured as a later turn, as v1's `send_input` is (docs/hooks.md "Multi-turn children").

const [codex] = clientVersions('codex');

/** The world's Codex with multi-agent v2 on, in the user's config of its own home. */
function withMultiAgentV2(w: AgentWorld): void {
  const config = path.join(w.home.env.CODEX_HOME!, 'config.toml');
  fs.appendFileSync(config, '\n[features]\nmulti_agent_v2 = true\n');
}

const TASK_NAME = 'analysis_stage';

function v2(name: string, input: Record<string, unknown>): ToolCall {
  return { name: `collaboration.${name}`, input };
}

/** A v2 wait: returns when a child finishes (the longest timeout, so that it never times out first). */
const WAIT = v2('wait_agent', { timeout_ms: 3_600_000 });

describe.concurrent('real Codex, multi-agent v2: later turns of a lifecycle child', { timeout: 240_000 }, () => {
  it(`${codex!.label}: an executor's followup_task turn after its delegation was consumed writes a file; begin-or-resume is refused (DELEGATION_TURN_AFTER_CONSUMED)`, async (context) => {
    const w = await worldFor(context, codex!, { record: true });
    withMultiAgentV2(w);
    // The follow-up turn writes LEFT-OUT.md with Codex's own apply_patch.
    const { edit, executor } = await lateTurnExecutor(w);
    const outputs: string[] = [];
    let tools: string[] = [];
    const parent = (request: ModelRequest): Turn => {
      if (request.step === 0) tools = request.tools;
      if (request.step === 6) outputs.push(request.toolResults.at(-1) ?? '');
      if (request.step === 0)
        return {
          toolCalls: [
            v2('spawn_agent', { agent_type: EXECUTOR, task_name: TASK_NAME, message: 'Run analyze-task for task 01.', fork_turns: 'none' }),
          ],
        };
      if (request.step === 1 || request.step === 4) return { toolCalls: [WAIT] };
      if (request.step === 2) return { toolCalls: [shell('codex', `${w.baton} task 01 advance`)] };
      if (request.step === 3) return { toolCalls: [v2('followup_task', { target: TASK_NAME, message: 'Write down what you left out.' })] };
      if (request.step === 5) return { toolCalls: [shell('codex', `${w.baton} task 01 begin-or-resume`)] };
      return { text: 'done' };
    };
    const run = await w.run(
      'Drive task 01 through its analysis stage.',
      {
        parent,
        executor,
      },
      180_000,
    );
    expectLeftOut(w, edit);
    const hooks = recordedPayloads(w);
    const trace = JSON.stringify(hooks.map((hook) => [hook.event, hook.payload.tool_name, hook.payload.turn_id, hook.code]));
    if (process.env.BATON_PRINT_FIGURES) console.log(trace);
    expect(run.code, `${trace}\n${run.stderr.slice(-2000)}`).toBe(0);
    expect(tools).toEqual(
      expect.arrayContaining(['collaboration.spawn_agent', 'collaboration.followup_task', 'collaboration.send_message']),
    );
    expect(tools).not.toContain('collaboration.send_input');
    const [resumed] = outputs.map(batonResult);
    expect(resumed, trace).toMatchObject({ status: 'paused', error: { code: 'DELEGATION_TURN_AFTER_CONSUMED' } });
    expect(resumed!.error.message).toContain("changed 'LEFT-OUT.md'");
    // The v2 spawn reaches PreToolUse as `collaborationspawn_agent`; the follow-up turn fires SubagentStop only.
    expect(hooks.map((hook) => [hook.event, hook.payload.tool_name ?? null])).toEqual([
      ['PreToolUse', 'collaborationspawn_agent'],
      ['SubagentStart', null],
      ['SubagentStop', null],
      ['SubagentStop', null],
    ]);
    const stops = hooks.filter((hook) => hook.event === 'SubagentStop');
    expect(stops, trace).toHaveLength(2);
    expect(new Set(stops.map((hook) => hook.payload.turn_id)).size).toBe(2);
    expect(w.runFile()).toMatchObject({ status: 'paused', pendingDelegation: null, pause: { code: 'DELEGATION_TURN_AFTER_CONSUMED' } });
  });

  it(`${codex!.label}: a sealed reviewer's followup_task turn edits code; advance is refused (DELEGATION_REVIEWER_WRITE_FORBIDDEN); reverted, advance consumes the review`, async (context) => {
    const w = await worldFor(context, codex!, { record: true });
    withMultiAgentV2(w);
    expect((await preparedReview(w)).next).toMatchObject({ stage: 'review-analysis', role: 'reviewer' });
    const retry = path.join(w.repo.root, 'src', 'retry.ts');
    const committed = fs.readFileSync(retry, 'utf8');
    // The follow-up turn "fixes" the code with Codex's own apply_patch.
    const fix = { file: path.join('src', 'retry.ts'), before: committed, after: 'export const retries = 3;\n' };
    const edit = editingTurns('codex', w.repo.root, fix, 'fixed src/retry.ts');
    let edited = '';
    let refusedAdvance = '';
    let advancedAgain = '';
    const parent = (request: ModelRequest): Turn => {
      if (request.step === 0)
        return {
          toolCalls: [
            v2('spawn_agent', {
              agent_type: REVIEWER,
              task_name: TASK_NAME,
              message: 'Run review-analysis for task 01.',
              fork_turns: 'none',
            }),
          ],
        };
      if (request.step === 1 || request.step === 3) return { toolCalls: [WAIT] };
      if (request.step === 2) return { toolCalls: [v2('followup_task', { target: TASK_NAME, message: 'Please also fix src/retry.ts' })] };
      if (request.step === 4) return { toolCalls: [shell('codex', `${w.baton} task 01 advance`)] };
      if (request.step === 5) {
        refusedAdvance = request.toolResults.at(-1) ?? '';
        // A human reverts the reviewer's edit.
        edited = fs.readFileSync(retry, 'utf8');
        fs.writeFileSync(retry, committed);
        return { toolCalls: [shell('codex', `${w.baton} task 01 advance`)] };
      }
      if (request.step === 6) advancedAgain = request.toolResults.at(-1) ?? '';
      return { text: 'done' };
    };
    const run = await w.run(
      'Review the analysis of task 01.',
      {
        parent,
        reviewer: (request) => {
          if (request.step === 0) return { toolCalls: [shell('codex', reviewHandOver(w))] };
          if (request.step === 1) return { text: 'review-analysis.md written.' };
          return edit.turn(request, 2);
        },
      },
      180_000,
    );
    expect(w.server.scriptErrors).toEqual([]);
    expect(edit.answer()).toMatch(editMade('codex', fix));
    expect(edited).toBe(fix.after);
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    const refused = batonResult(refusedAdvance);
    expect(refused).toMatchObject({ status: 'paused', error: { code: 'DELEGATION_REVIEWER_WRITE_FORBIDDEN' } });
    expect(refused.error.message).toMatch(/^reviewer changed forbidden path 'src\/retry\.ts'/);
    // What the hooks saw and answered, should the stops not have sealed the review before the advance.
    const hookTimeline = () =>
      JSON.stringify(
        recordedPayloads(w).map(({ event, at, ms, code, stderr, payload }) => ({ event, at, ms, code, stderr, turn: payload.turn_id })),
      );
    expect(refused.run, hookTimeline()).toMatchObject({ pendingDelegation: { status: 'sealed', stage: 'review-analysis' }, receipts: [] });
    expect(batonResult(advancedAgain)).toMatchObject({ status: 'running', error: null });
    const after = w.runFile();
    expect(after).toMatchObject({ status: 'running', pause: null, pendingDelegation: null });
    expect(after.receipts[0]).toMatchObject({ stage: 'review-analysis', status: 'consumed' });
    expect(after.violations).toEqual([
      expect.objectContaining({ code: 'DELEGATION_REVIEWER_WRITE_FORBIDDEN', paths: ['src/retry.ts'], resolution: 'reverted' }),
    ]);
    const stops = recordedPayloads(w).filter((hook) => hook.event === 'SubagentStop');
    expect(new Set(stops.map((hook) => hook.payload.turn_id)).size).toBe(2);
  });
});
