import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clientVersions } from '../support/agentClients.ts';
import {
  ACCEPT_EDITS,
  EXECUTOR,
  REVIEWER,
  asOffered,
  batonResult,
  editMade,
  editingTurns,
  executorThatCompletes,
  parentThatSpawns,
  shell,
  spawn,
  spawnedIds,
  waitForChildren,
} from '../support/agentScripts.ts';
import { expectLeftOut, lateTurnExecutor, preparedReview, recordedPayloads, reviewHandOver, worldFor } from '../support/agentWorld.ts';
import type { AgentWorld } from '../support/agentWorld.ts';
import type { ModelRequest, ToolCall, Turn } from '../support/modelServer.ts';

// With the real clients (the newest of each): the write restriction holds
// whatever the orchestrator does next (a reviewer resumed after its seal edits code, and the
// orchestrator advances; a child writes after its delegation was consumed, and the orchestrator
// resumes), and a blocked spawn's claim holds nothing (a worker started right after finds nothing
// to apply, and the next spawn passes). docs/lifecycle.md §6.3, docs/hooks.md "Spawn claim".

const [claude] = clientVersions('claude-code');
const [codex] = clientVersions('codex');
const [copilot] = clientVersions('copilot-cli');

const RETRY = path.join('src', 'retry.ts');
const RETRY_COMMITTED = 'export const retries = Infinity;\n';

const RETRY_FIXED = 'export const retries = 3;\n';
/** The reviewer's "fix" of src/retry.ts, made with its client's own edit tool. */
const FIX_RETRY = { file: RETRY, before: RETRY_COMMITTED, after: RETRY_FIXED };

/**
 * A reviewer that writes its review, stops, and, resumed, "fixes" src/retry.ts with its client's
 * own edit tool (Claude Code's Read then Edit, Codex's apply_patch). `edit.answer()` is what that
 * tool answered.
 */
function reviewerThatFixesCode(w: AgentWorld): { script: (request: ModelRequest) => Turn; edit: ReturnType<typeof editingTurns> } {
  const edit = editingTurns(w.client, w.repo.root, FIX_RETRY, 'fixed src/retry.ts');
  const script = (request: ModelRequest): Turn => {
    if (request.step === 0) return { toolCalls: [shell(w.client, reviewHandOver(w))] };
    if (request.step === 1) return { text: 'review-analysis.md written.' };
    return edit.turn(request, 2);
  };
  return { script, edit };
}

/** Polls the run file until `done` holds (a resumed Claude child stops in the background). */
async function until(w: AgentWorld, done: (run: Record<string, any>) => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done(w.runFile())) {
    if (Date.now() > deadline) throw new Error(`the run file never got there: ${JSON.stringify(w.runFile())}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** What the orchestrator's refused advance, a human's revert and the advance after it leave to check. */
type RefusedThenReverted = { refusedAdvance: string; edited: string; advancedAgain: string };

/**
 * The orchestrator's side of a refused advance: `revert` keeps the refused advance's result, has a
 * human revert the reviewer's edit of src/retry.ts (keeping what it held) and advances again;
 * `again` keeps that advance's result. `seen` holds all three.
 */
function refusedThenReverted(w: AgentWorld) {
  const seen: RefusedThenReverted = { refusedAdvance: '', edited: '', advancedAgain: '' };
  return {
    seen,
    revert(refusedAdvance: string): Turn {
      seen.refusedAdvance = refusedAdvance;
      seen.edited = fs.readFileSync(path.join(w.repo.root, RETRY), 'utf8');
      fs.writeFileSync(path.join(w.repo.root, RETRY), RETRY_COMMITTED);
      return { toolCalls: [shell(w.client, `${w.baton} task 01 advance`)] };
    },
    again(advancedAgain: string): void {
      seen.advancedAgain = advancedAgain;
    },
  };
}

/** The child ids of the recorded stops (Copilot CLI's payloads name it `agentId`). */
function stoppedChildIds(w: AgentWorld): string[] {
  return recordedPayloads(w)
    .filter((hook) => hook.event.toLowerCase() === 'subagentstop')
    .map((hook) => hook.payload.agent_id ?? hook.payload.agentId);
}

/**
 * A Copilot CLI parent that spawns one lifecycle child in the background (so that the idle child can
 * be given a later turn with write_agent), waits until the child's first stop sealed its delegation,
 * then plays `after`, one turn a request, then ends its turn. It counts its own requests: Copilot adds
 * read_agent turns of its own to the conversation when a background child goes idle.
 */
function copilotBackgroundParent(
  w: AgentWorld,
  child: ToolCall,
  after: ReadonlyArray<(request: ModelRequest, childId: string) => Turn | Promise<Turn>>,
): { script: (request: ModelRequest) => Promise<Turn>; childId(): string } {
  let requests = 0;
  let childId = '';
  const script = async (request: ModelRequest): Promise<Turn> => {
    requests += 1;
    if (requests === 1) return { toolCalls: [{ ...child, input: { ...child.input, mode: 'background' } }] };
    if (requests === 2) {
      childId = /agent_id: ([0-9a-f-]{36})/.exec(request.toolResults.at(-1) ?? '')?.[1] ?? '';
      await until(w, (run) => run.pendingDelegation?.status === 'sealed');
    }
    return (await after[requests - 2]?.(request, childId)) ?? { text: 'done' };
  };
  return { script, childId: () => childId };
}

/** The last `baton task` result among a request's tool results (Copilot may add its own after it). */
function lastBatonResult(request: ModelRequest): string {
  return request.toolResults.filter((result) => result.includes('{"status"')).at(-1) ?? '';
}

/** The orchestrator's begin-or-resume and prepare (`outputs`) after a consumed child's later turn wrote LEFT-OUT.md: refused, nothing prepared. */
function expectTurnAfterConsumedRefused(w: AgentWorld, outputs: readonly string[]): void {
  const [resumed, prepared] = outputs.map(batonResult);
  expect(resumed).toMatchObject({ status: 'paused', error: { code: 'DELEGATION_TURN_AFTER_CONSUMED' } });
  expect(resumed!.error.message).toContain("changed 'LEFT-OUT.md'; these changes belong to no delegation; the run cannot be resumed");
  expect(prepared).toMatchObject({ status: 'failed', error: { code: 'ORCHESTRATION_RUN_NOT_RUNNING' } });
  const run = w.runFile();
  expect(run).toMatchObject({ status: 'paused', pendingDelegation: null, pause: { code: 'DELEGATION_TURN_AFTER_CONSUMED' } });
  expect(run.receipts).toHaveLength(1);
}

/**
 * After a reviewer's resumed edit (made by its client's tool: the tool said so, and the file held
 * what the call asked for until the human reverted it) and the orchestrator's refused advance, a
 * human revert, then advance again: consumed.
 */
function expectRefusedThenConsumed(w: AgentWorld, answer: string, { refusedAdvance, edited, advancedAgain }: RefusedThenReverted): void {
  expect(w.server.scriptErrors).toEqual([]);
  expect(answer).toMatch(editMade(w.client, FIX_RETRY));
  expect(edited).toBe(RETRY_FIXED);
  const refused = batonResult(refusedAdvance);
  expect(refused).toMatchObject({ status: 'paused', error: { code: 'DELEGATION_REVIEWER_WRITE_FORBIDDEN' } });
  expect(refused.error.message).toMatch(/^reviewer changed forbidden path 'src\/retry\.ts'; delegation \S+ cannot be consumed/);
  expect(refused.error.message).toContain("then run 'baton task TASK-");
  // The refused advance left the review unconsumed (0.9.2 consumed it with the code edit).
  expect(refused.run).toMatchObject({ status: 'paused', pendingDelegation: { status: 'sealed', stage: 'review-analysis' }, receipts: [] });
  expect(batonResult(advancedAgain)).toMatchObject({ status: 'running', error: null });
  const run = w.runFile();
  expect(run).toMatchObject({ status: 'running', pause: null, pendingDelegation: null });
  expect(run.receipts[0]).toMatchObject({ stage: 'review-analysis', status: 'consumed' });
  expect(run.receipts[0].changedPaths).not.toContain('src/retry.ts');
  expect(run.violations).toEqual([
    expect.objectContaining({ code: 'DELEGATION_REVIEWER_WRITE_FORBIDDEN', paths: ['src/retry.ts'], resolution: 'reverted' }),
  ]);
}

describe.concurrent('real clients: the write restriction holds whatever the orchestrator does next', { timeout: 180_000 }, () => {
  it(`${claude!.label}: a reviewer resumed with SendMessage edits code; the orchestrator's advance is refused; reverted, the next advance consumes the review`, async (context) => {
    const w = await worldFor(context, claude!, { record: true });
    expect((await preparedReview(w)).next).toMatchObject({ stage: 'review-analysis', role: 'reviewer' });
    const reviewer = reviewerThatFixesCode(w);
    let childId = '';
    const human = refusedThenReverted(w);
    await w.run(
      'Review the analysis of task 01.',
      {
        parent: async (request) => {
          if (request.step === 0)
            return { toolCalls: [asOffered(spawn('claude-code', REVIEWER, 'Run review-analysis for task 01.'), request)] };
          if (request.step === 1) {
            childId = /agentId: (\w+)/.exec(request.toolResults.at(-1) ?? '')?.[1] ?? '';
            return {
              toolCalls: [{ name: 'SendMessage', input: { to: childId, message: 'Please also fix src/retry.ts', summary: 'fix retry' } }],
            };
          }
          if (request.step === 2) {
            // SendMessage resumes the child in the background; the orchestrator advances once its stop is measured.
            await until(w, (run) => run.status === 'paused');
            return { toolCalls: [shell('claude-code', `${w.baton} task 01 advance`)] };
          }
          if (request.step === 3) return human.revert(request.toolResults.at(-1) ?? '');
          if (request.step === 4) human.again(request.toolResults.at(-1) ?? '');
          return { text: 'done' };
        },
        reviewer: reviewer.script,
      },
      150_000,
      // The user accepts edits (claude -p denies an Edit its permissions do not allow): baton's restriction does not rest on them.
      { extraArgs: ACCEPT_EDITS['claude-code'] },
    );
    expect(childId).not.toBe('');
    expect(stoppedChildIds(w)).toEqual([childId, childId]);
    expectRefusedThenConsumed(w, reviewer.edit.answer(), human.seen);
  });

  it(`${codex!.label}: a reviewer's follow-up turn (send_input) edits code; the orchestrator's advance is refused; reverted, the next advance consumes the review`, async (context) => {
    const w = await worldFor(context, codex!, { record: true });
    expect((await preparedReview(w)).next).toMatchObject({ stage: 'review-analysis', role: 'reviewer' });
    const reviewer = reviewerThatFixesCode(w);
    const human = refusedThenReverted(w);
    await w.run(
      'Review the analysis of task 01.',
      {
        parent: (request) => {
          if (request.step === 0) return { toolCalls: [spawn('codex', REVIEWER, 'Run review-analysis for task 01.')] };
          if (request.step === 1 || request.step === 3) return waitForChildren(request);
          if (request.step === 2) return sendInput(request, 'Please also fix src/retry.ts');
          if (request.step === 4) return { toolCalls: [shell('codex', `${w.baton} task 01 advance`)] };
          if (request.step === 5) return human.revert(request.toolResults.at(-1) ?? '');
          if (request.step === 6) human.again(request.toolResults.at(-1) ?? '');
          return { text: 'done' };
        },
        reviewer: reviewer.script,
      },
      150_000,
    );
    const stops = recordedPayloads(w).filter((hook) => hook.event === 'SubagentStop');
    expect(stops).toHaveLength(2);
    expect(new Set(stops.map((hook) => hook.payload.turn_id)).size).toBe(2);
    expectRefusedThenConsumed(w, reviewer.edit.answer(), human.seen);
  });

  it(`${copilot!.label}: a background reviewer's later turn (write_agent) edits code; the orchestrator's advance is refused; reverted, the next advance consumes the review`, async (context) => {
    const w = await worldFor(context, copilot!, { record: true });
    expect((await preparedReview(w)).next).toMatchObject({ stage: 'review-analysis', role: 'reviewer' });
    const reviewer = reviewerThatFixesCode(w);
    const human = refusedThenReverted(w);
    const parent = copilotBackgroundParent(w, spawn('copilot-cli', REVIEWER, 'Run review-analysis for task 01.'), [
      (_request, childId) => ({
        toolCalls: [{ name: 'write_agent', input: { agent_id: childId, message: 'Please also fix src/retry.ts' } }],
      }),
      async () => {
        // The later turn's stop measured the edit.
        await until(w, (run) => run.status === 'paused');
        return { toolCalls: [shell('copilot-cli', `${w.baton} task 01 advance`)] };
      },
      (request) => human.revert(lastBatonResult(request)),
      (request) => {
        human.again(lastBatonResult(request));
        return { text: 'done' };
      },
    ]);
    await w.run('Review the analysis of task 01.', { parent: parent.script, reviewer: reviewer.script }, 150_000);
    const childId = parent.childId();
    expect(childId).not.toBe('');
    // No turn id: the two turns are two subagentStop payloads of the same agentId.
    expect(stoppedChildIds(w)).toEqual([childId, childId]);
    expectRefusedThenConsumed(w, reviewer.edit.answer(), human.seen);
  });

  it(`${codex!.label}: an executor's turn after its delegation was consumed writes a file; the orchestrator's begin-or-resume is refused and nothing is prepared`, async (context) => {
    const w = await worldFor(context, codex!, { record: true });
    // The later turn writes LEFT-OUT.md with Codex's own apply_patch.
    const { edit, executor } = await lateTurnExecutor(w);
    const outputs: string[] = [];
    await w.run(
      'Drive task 01 through its analysis stage.',
      {
        parent: (request) => {
          // The results of begin-or-resume (step 5) and prepare (step 6) come with the next request.
          if (request.step === 6 || request.step === 7) outputs.push(request.toolResults.at(-1) ?? '');
          if (request.step === 0) return { toolCalls: [spawn('codex', EXECUTOR, 'Run analyze-task for task 01.')] };
          if (request.step === 1 || request.step === 4) return waitForChildren(request);
          if (request.step === 2) return { toolCalls: [shell('codex', `${w.baton} task 01 advance`)] };
          if (request.step === 3) return sendInput(request, 'Write down what you left out.');
          if (request.step === 5) return { toolCalls: [shell('codex', `${w.baton} task 01 begin-or-resume`)] };
          if (request.step === 6) return { toolCalls: [shell('codex', `${w.baton} task 01 prepare --client codex`)] };
          return { text: 'done' };
        },
        executor,
      },
      150_000,
    );
    expectLeftOut(w, edit);
    expectTurnAfterConsumedRefused(w, outputs);
  });

  it(`${copilot!.label}: a background executor's later turn (write_agent) after its delegation was consumed creates a file; the orchestrator's begin-or-resume is refused and nothing is prepared`, async (context) => {
    const w = await worldFor(context, copilot!, { record: true });
    // The later turn writes LEFT-OUT.md with Copilot's own create tool.
    const { edit, executor } = await lateTurnExecutor(w);
    const outputs: string[] = [];
    const stops = () => recordedPayloads(w).filter((hook) => hook.event === 'subagentStop').length;
    const parent = copilotBackgroundParent(w, spawn('copilot-cli', EXECUTOR, 'Run analyze-task for task 01.'), [
      () => ({ toolCalls: [shell('copilot-cli', `${w.baton} task 01 advance`)] }),
      (_request, childId) => ({
        toolCalls: [{ name: 'write_agent', input: { agent_id: childId, message: 'Write down what you left out.' } }],
      }),
      async () => {
        // The later turn has stopped (its hook enqueued the stop before the intents that follow).
        await context.expect.poll(stops, { timeout: 60_000, interval: 200 }).toBe(2);
        return { toolCalls: [shell('copilot-cli', `${w.baton} task 01 begin-or-resume`)] };
      },
      (request) => {
        outputs.push(lastBatonResult(request));
        return { toolCalls: [shell('copilot-cli', `${w.baton} task 01 prepare --client copilot-cli`)] };
      },
      (request) => {
        outputs.push(lastBatonResult(request));
        return { text: 'done' };
      },
    ]);
    await w.run('Drive task 01 through its analysis stage.', { parent: parent.script, executor }, 150_000);
    const childId = parent.childId();
    expectLeftOut(w, edit);
    expect(stoppedChildIds(w)).toEqual([childId, childId]);
    expectTurnAfterConsumedRefused(w, outputs);
  });
});

/** Codex's send_input to the first child spawned: a follow-up turn of that child. */
function sendInput(request: ModelRequest, message: string): Turn {
  return { toolCalls: [{ name: 'multi_agent_v1.send_input', input: { target: spawnedIds(request)[0], message } }] };
}

describe.concurrent("real clients: a blocked spawn's claim holds nothing", { timeout: 180_000 }, () => {
  for (const version of [claude!, codex!, copilot!]) {
    it(`${version.label}: no worker blocks the spawn; a worker started right after applies nothing of it; the next spawn passes`, async (context) => {
      const w = await worldFor(context, version, { worker: false, record: true });
      const inline = ['--worker', 'inline'];
      expect((await w.task('begin-or-resume', ...inline)).status).toBe('running');
      expect((await w.task('prepare', '--client', version.client, ...inline)).status).toBe('running');
      // A long hook budget: a claim left queued by the blocked hook would still be within its
      // lifetime when the worker starts (0.9.2-era behaviour: it was then applied).
      w.env.BATON_HOOK_BUDGET_MS = '60000';
      const spawnCall = spawn(version.client, EXECUTOR, 'Run analyze-task for task 01.');
      await w.run('Drive task 01 through its analysis stage.', { parent: parentThatSpawns(version.client, spawnCall) });
      const blocked = recordedPayloads(w);
      // Copilot CLI takes the refusal as a deny on stdout with exit 0 (docs/clients.md "Output contract per event").
      expect(blocked.map((hook) => [hook.event.toLowerCase(), hook.code])).toEqual([['pretooluse', version === copilot ? 0 : 2]]);
      if (version === copilot)
        expect(JSON.parse(blocked[0]!.stdout)).toEqual({ permissionDecision: 'deny', permissionDecisionReason: blocked[0]!.stderr.trim() });
      expect(w.server.byRole('executor')).toEqual([]);

      await w.startWorker();
      await w.run('Drive task 01 through its analysis stage.', {
        parent: parentThatSpawns(version.client, spawnCall, [`${w.baton} task 01 advance`]),
        executor: executorThatCompletes(version.client, w.baton),
      });
      const hooks = recordedPayloads(w).slice(1);
      expect(
        hooks.map((hook) => [hook.event.toLowerCase(), hook.code]),
        hooks.map((hook) => hook.stderr).join(''),
      ).toEqual([
        ['pretooluse', 0],
        ['subagentstart', 0],
        ['subagentstop', 0],
      ]);
      const run = w.runFile();
      expect(run).toMatchObject({ status: 'running', pause: null, pendingDelegation: null });
      expect(run.receipts[0]).toMatchObject({ stage: 'analysis', status: 'consumed' });
      // What the blocked call was told: the truth about its claim.
      expect(blocked[0]!.stderr).toContain('was not claimed, so it is blocked: no worker serves');
      expect(blocked[0]!.stderr).toContain(
        'it was withdrawn before any worker took it: it is never applied, so nothing holds the delegation',
      );
    });
  }
});
