import { describe, expect, it } from 'vitest';
import type { TestContext } from 'vitest';
import { clientVersions } from '../support/agentClients.ts';
import type { ClientVersion } from '../support/agentClients.ts';
import { EXECUTOR, asOffered, executorThatCompletes, spawn } from '../support/agentScripts.ts';
import { expectCleanRun, recordedPayloads, worldFor } from '../support/agentWorld.ts';
import type { AgentWorld } from '../support/agentWorld.ts';
import type { ModelRequest, Turn } from '../support/modelServer.ts';

// Issue 25, evidence first, with the real Claude Code (newest and oldest pinned): a background lifecycle
// subagent killed with TaskStop sends no SubagentStop (anthropics/claude-code#92716). The
// PostToolUse of TaskStop is the client's own report that the child is gone, and baton reconciles
// the delegation at once from it, long before the --stop-grace (10 min here): an unfinished stage
// pauses the run with BATON_DELEGATION_STALLED, a completed one is sealed as its stop would seal it.
// The receipt's mark names the evidence. docs/architecture.md "Reconciliation".

const STOP_GRACE_MS = 10 * 60_000;
const WORKER_ARGS = ['--stop-grace', '10m'];
const ANALYSIS = '.agents/workspace/active/TASK-20260101-000001/analysis.md';
// Far below the grace: a hook, a queued job and a fingerprint on a loaded machine.
const SOON_MS = 60_000;

async function preparedAnalysis(w: AgentWorld): Promise<void> {
  expect((await w.task('begin-or-resume')).status).toBe('running');
  expect((await w.task('prepare', '--client', w.client)).run.pendingDelegation.status).toBe('prepared');
}

/** Polls the run file until `test` holds of it. */
async function runFileWhere(
  context: TestContext,
  w: AgentWorld,
  test: (run: Record<string, any>) => boolean,
): Promise<Record<string, any>> {
  await context.expect.poll(() => test(w.runFile()), { timeout: SOON_MS, interval: 100 }).toBe(true);
  return w.runFile();
}

/**
 * The parent: spawns the executor in the background, waits until `stopWhen` holds of the run file,
 * stops the child with TaskStop (the child id baton recorded from SubagentStart), waits until
 * `settled` holds, then ends its turn.
 */
function parentThatStops(
  context: TestContext,
  w: AgentWorld,
  stopWhen: (run: Record<string, any>) => boolean,
  settled: (run: Record<string, any>) => boolean,
  seen: { taskStop?: string; settledRun?: Record<string, any> },
  stopped: () => void,
): (request: ModelRequest) => Promise<Turn> {
  return async (request) => {
    if (request.step === 0) {
      return {
        toolCalls: [asOffered(spawn('claude-code', EXECUTOR, 'Run analyze-task for task 01.', { run_in_background: true }), request)],
      };
    }
    if (request.step === 1) {
      const run = await runFileWhere(context, w, stopWhen);
      return { toolCalls: [{ name: 'TaskStop', input: { task_id: run.pendingDelegation.childId } }] };
    }
    if (request.step === 2) {
      seen.taskStop = request.toolResults.at(-1);
      seen.settledRun = await runFileWhere(context, w, settled);
      // The stopped child's pending model request is let go.
      stopped();
    }
    return { text: 'done' };
  };
}

/**
 * The world of `version` with its analysis prepared, run to its end: the parent stops the child once
 * `stopWhen` holds of the run and waits until `settled` (parentThatStops); the child answers with the
 * script `executor` makes, given `released`, which resolves once the parent has seen the run settle.
 */
async function stoppedChild(
  context: TestContext,
  version: ClientVersion,
  stopWhen: (run: Record<string, any>) => boolean,
  settled: (run: Record<string, any>) => boolean,
  executor: (w: AgentWorld, released: Promise<void>) => (request: ModelRequest) => Turn | Promise<Turn>,
) {
  const w = await worldFor(context, version, { record: true, workerArgs: WORKER_ARGS });
  await preparedAnalysis(w);
  const seen: { taskStop?: string; settledRun?: Record<string, any> } = {};
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const run = await w.run(
    'Drive task 01 through its analysis stage.',
    { parent: parentThatStops(context, w, stopWhen, settled, seen, () => release()), executor: executor(w, released) },
    150_000,
  );
  release();
  expectCleanRun(w, run);
  return { w, seen, hooks: recordedPayloads(w) };
}

/** A child's model request left unanswered until the child is stopped (`released`), or 90 s. */
async function untilStopped(released: Promise<void>): Promise<Turn> {
  await Promise.race([released, new Promise((resolve) => setTimeout(resolve, 90_000))]);
  return { text: 'stopped' };
}

/** How long after the TaskStop hook ran the mark was made, and after the clock's start (BATON_PRINT_FIGURES=1). */
function figures(hookAt: number, receipt: Record<string, any>): string {
  const [mark] = receipt.reconciliations as Array<{ kind: string; since: string; at: string }>;
  return `${mark!.kind}: ${Date.parse(mark!.at) - hookAt} ms after the TaskStop hook, ${Date.parse(mark!.at) - Date.parse(mark!.since)} ms after ${mark!.since} (grace ${STOP_GRACE_MS} ms)`;
}

describe.concurrent('real Claude Code: a subagent killed with TaskStop is reconciled from that evidence', { timeout: 180_000 }, () => {
  for (const version of clientVersions('claude-code')) {
    it(`${version.label}: TaskStop before complete-stage pauses the run (BATON_DELEGATION_STALLED) at once, the evidence on the receipt`, async (context) => {
      const { w, seen, hooks } = await stoppedChild(
        context,
        version,
        (r) => r.pendingDelegation?.status === 'activated',
        (r) => r.pause?.code === 'BATON_DELEGATION_STALLED',
        // The child is still thinking (its model request unanswered) when it is stopped.
        (_w, released) => () => untilStopped(released),
      );
      const events = hooks.map((hook) => [hook.event, hook.payload.tool_name ?? hook.payload.agent_type ?? null, hook.code]);
      expect(events, JSON.stringify(hooks.map((hook) => hook.payload))).toEqual([
        ['PreToolUse', expect.stringMatching(/^(Agent|Task)$/), 0],
        ['SubagentStart', EXECUTOR, 0],
        ['PostToolUse', 'TaskStop', 0],
      ]);
      const stop = hooks[2]!.payload;
      const childId = hooks[1]!.payload.agent_id as string;
      // The field names baton reads, as this client sends them: the stopped task is the subagent's agent_id.
      expect(stop).toMatchObject({ hook_event_name: 'PostToolUse', tool_name: 'TaskStop', tool_input: { task_id: childId } });
      expect(stop.tool_response).toMatchObject({ task_id: childId, task_type: 'local_agent' });
      const paused = seen.settledRun!;
      if (process.env.BATON_PRINT_FIGURES) console.log(figures(hooks[2]!.at, paused.pendingDelegation));
      expect(paused).toMatchObject({
        status: 'paused',
        pause: { code: 'BATON_DELEGATION_STALLED', recoverable: true },
        pendingDelegation: { status: 'activated', childId, reconciliations: [{ kind: 'stalled', graceMs: 0, evidence: 'TaskStop' }] },
      });
      expect(paused.pause.message).toContain(`the client reported child ${childId} gone (TaskStop)`);
      expect(paused.pause.message).toContain('baton task TASK-20260101-000001 abort --reason');
      const receipt = paused.pendingDelegation;
      const [mark] = receipt.reconciliations as Array<{ since: string; at: string }>;
      expect(mark!.since).toBe(receipt.activatedAt);
      // At once, not after the grace: the mark comes within seconds of the TaskStop hook.
      expect(Date.parse(mark!.at) - hooks[2]!.at).toBeLessThan(SOON_MS);
      expect(Date.parse(mark!.at) - Date.parse(receipt.activatedAt)).toBeLessThan(STOP_GRACE_MS / 4);
      // The way on that the pause names: abort, then begin-or-resume frees the run for a new delegation.
      expect(await w.task('abort', '--reason', 'stopped with TaskStop')).toMatchObject({ error: null, run: { pendingDelegation: null } });
      expect(await w.task('begin-or-resume')).toMatchObject({ status: 'running', error: null });
    });

    it(`${version.label}: TaskStop after complete-stage seals the delegation at once (measured as a stop would); advance consumes it`, async (context) => {
      const { w, seen, hooks } = await stoppedChild(
        context,
        version,
        (r) => r.pendingDelegation?.status === 'stage-completed',
        (r) => r.pendingDelegation?.status === 'sealed',
        // complete-stage, then the child's next model request hangs until it is stopped.
        (w, released) => {
          const complete = executorThatCompletes(w.client, w.baton);
          return (request) => (request.step === 1 ? untilStopped(released) : complete(request));
        },
      );
      expect(hooks.map((hook) => [hook.event, hook.code])).toEqual([
        ['PreToolUse', 0],
        ['SubagentStart', 0],
        ['PostToolUse', 0],
      ]);
      const receipt = seen.settledRun!.pendingDelegation;
      if (process.env.BATON_PRINT_FIGURES) console.log(figures(hooks[2]!.at, receipt));
      expect(receipt).toMatchObject({
        status: 'sealed',
        stage: 'analysis',
        reconciliations: [{ kind: 'sealed', since: receipt.stageCompletedAt, graceMs: 0, evidence: 'TaskStop' }],
      });
      expect(receipt.changedPaths).toContain(ANALYSIS);
      // Its cost from the subagent's transcript the TaskStop led to: the request that completed the stage (the next one never ended).
      const [first] = w.server.byRole('executor');
      expect(receipt.cost).toMatchObject({ format: 'claude-code-transcript', read: true, requests: 1, models: [{ model: first!.model }] });
      expect(receipt.cost.tokens.input).toBe(first!.reported!.input);
      expect(Date.parse(receipt.reconciliations[0].at) - hooks[2]!.at).toBeLessThan(SOON_MS);
      const advanced = await w.task('advance');
      expect(advanced, JSON.stringify(advanced)).toMatchObject({ status: 'running', error: null });
      expect(w.runFile().receipts[0]).toMatchObject({ stage: 'analysis', status: 'consumed', reconciliations: [{ evidence: 'TaskStop' }] });
      expect(w.readTaskFile('analysis.md')).toBe('# Analysis\n\nDone.\n');
    });
  }
});
