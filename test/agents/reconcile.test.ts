import { describe, expect, it } from 'vitest';
import type { TestContext } from 'vitest';
import { clientVersions } from '../support/agentClients.ts';
import type { ClientVersion } from '../support/agentClients.ts';
import {
  EXECUTOR,
  asOffered,
  batonResult,
  executorThatCompletes,
  parentThatSpawns,
  spawn,
  waitForChildren,
} from '../support/agentScripts.ts';
import { expectCleanRun, recordedPayloads, worldFor } from '../support/agentWorld.ts';
import type { AgentWorld } from '../support/agentWorld.ts';
import type { ModelRequest, Turn } from '../support/modelServer.ts';
import { URL_PATTERN } from '../support/services.ts';

// Issue 20, with the real clients (the newest of each, Copilot CLI included): a delegation whose SubagentStop never
// comes is sealed by the worker once its stop-grace has passed, and `advance` consumes it; a
// child that does stop after that seal changes nothing; a child slower than the grace pauses the
// run and still finishes. docs/architecture.md "Reconciliation", docs/hooks.md.

const [claude] = clientVersions('claude-code');
const [codex] = clientVersions('codex');
const [copilot] = clientVersions('copilot-cli');

const STOP_GRACE_MS = 5_000;
// Short enough to keep the test quick, long enough that the child's next model request (right
// after its complete-stage) arrives well within it on a loaded machine.
const WORKER_ARGS = ['--stop-grace', `${STOP_GRACE_MS / 1000}s`];
const ANALYSIS = '.agents/workspace/active/TASK-20260101-000001/analysis.md';

/** A prepared analysis delegation for the world's client. */
async function preparedAnalysis(w: AgentWorld): Promise<void> {
  expect((await w.task('begin-or-resume')).status).toBe('running');
  expect((await w.task('prepare', '--client', w.client)).run.pendingDelegation.status).toBe('prepared');
}

/** Polls the run file until its pending delegation is sealed (by the worker: no stop arrives). */
async function sealedByWorker(context: TestContext, w: AgentWorld): Promise<Record<string, any>> {
  await context.expect.poll(() => w.runFile().pendingDelegation?.status, { timeout: STOP_GRACE_MS + 30_000, interval: 100 }).toBe('sealed');
  return w.runFile().pendingDelegation as Record<string, any>;
}

/** The worker's seal: after the grace since complete-stage, measured as a stop would measure it. */
function expectSealedAfterGrace(receipt: Record<string, any>): void {
  expect(receipt).toMatchObject({
    status: 'sealed',
    stage: 'analysis',
    reconciliations: [{ kind: 'sealed', since: receipt.stageCompletedAt, graceMs: STOP_GRACE_MS }],
  });
  const [reconciled] = receipt.reconciliations as Array<{ since: string; at: string }>;
  const waited = Date.parse(reconciled!.at) - Date.parse(receipt.stageCompletedAt);
  expect(waited).toBeGreaterThanOrEqual(STOP_GRACE_MS);
  // Scanned every quarter of the grace: one scan, a queued job and a fingerprint later at most.
  expect(waited).toBeLessThan(STOP_GRACE_MS + 10_000);
  expect(Date.parse(receipt.sealedAt)).toBeGreaterThanOrEqual(Date.parse(reconciled!.at));
  expect(receipt.changedPaths).toContain(ANALYSIS);
  expect(receipt.afterFingerprint).not.toBe(receipt.beforeFingerprint);
}

/** `baton task 01 advance` consumes the worker's seal, which the consumed receipt keeps. */
async function expectAdvanceConsumes(w: AgentWorld): Promise<void> {
  const advanced = await w.task('advance');
  expect(advanced, JSON.stringify(advanced)).toMatchObject({ status: 'running', error: null });
  const run = w.runFile();
  expect(run).toMatchObject({ status: 'running', pause: null, pendingDelegation: null });
  expect(run.receipts).toHaveLength(1);
  expect(run.receipts[0]).toMatchObject({ stage: 'analysis', status: 'consumed', reconciliations: [{ kind: 'sealed' }] });
  expect(w.readTaskFile('analysis.md')).toBe('# Analysis\n\nDone.\n');
}

/**
 * An executor that hands its artifact over with complete-stage, then, at its next model request
 * (complete-stage has answered, the turn is not over), calls `atNextRequest` before it reports.
 */
function executorThatCompletesThen(w: AgentWorld, atNextRequest: () => Promise<void>): (request: ModelRequest) => Promise<Turn> {
  const complete = executorThatCompletes(w.client, w.baton);
  return async (request) => {
    if (request.step === 1) {
      expect(batonResult(request.toolResults.at(-1))).toMatchObject({
        status: 'running',
        run: { pendingDelegation: { status: 'stage-completed' } },
      });
      await atNextRequest();
    }
    return complete(request);
  };
}

/** The Codex parent: spawns the executor and waits for it, then ends its turn. */
function codexParent(request: ModelRequest): Turn {
  if (request.step === 0) return { toolCalls: [spawn('codex', EXECUTOR, 'Run analyze-task for task 01.')] };
  if (request.step === 1) return waitForChildren(request);
  return { text: 'done' };
}

/** The Copilot CLI parent: spawns the executor with `mode: "sync"` (its call returns when the child has stopped), then ends its turn. */
function copilotParent(request: ModelRequest): Turn {
  if (request.step === 0) return { toolCalls: [spawn('copilot-cli', EXECUTOR, 'Run analyze-task for task 01.')] };
  return { text: 'done' };
}

/** Each recorded hook's event (lower-cased: Copilot's settings name them camelCase) and exit status. */
function hookEvents(w: AgentWorld): Array<[string, number]> {
  return recordedPayloads(w).map((hook) => [hook.event.toLowerCase(), hook.code]);
}

/** The result a verbose hook printed on stderr (`baton: <result JSON>`). */
function verboseResult(stderr: string): Record<string, any> {
  const line = stderr.split('\n').find((text) => text.startsWith('baton: {'));
  if (!line) throw new Error(`no result on stderr: ${stderr}`);
  return JSON.parse(line.slice('baton: '.length)) as Record<string, any>;
}

describe.concurrent('real clients: a delegation whose stop never comes is sealed by the worker', { timeout: 180_000 }, () => {
  for (const version of [claude!, codex!, copilot!] as ClientVersion[]) {
    it(`${version.label}: the parent is killed after the child's complete-stage; no SubagentStop reaches baton; the worker seals after the stop-grace; advance consumes it`, async (context) => {
      const w = await worldFor(context, version, {
        record: true,
        keepSessions: true,
        workerArgs: [...WORKER_ARGS, '--dashboard', '--port', '0'],
      });
      await preparedAnalysis(w);
      const kill = new AbortController();
      let atKill: Record<string, any> | null = null;
      let launched = '';
      const killed = new Promise<void>((resolve) => kill.signal.addEventListener('abort', () => resolve(), { once: true }));
      // Claude Code: a background subagent, the parent busy with its next turn when it dies.
      // Codex: spawn_agent runs the child in the background; the parent waits in wait_agent.
      // Copilot CLI: a sync task; the parent waits in it.
      const parent =
        version.client === 'copilot-cli'
          ? copilotParent
          : version.client === 'claude-code'
            ? async (request: ModelRequest): Promise<Turn> => {
                if (request.step === 0)
                  return {
                    toolCalls: [
                      asOffered(spawn('claude-code', EXECUTOR, 'Run analyze-task for task 01.', { run_in_background: true }), request),
                    ],
                  };
                launched = request.toolResults.at(-1) ?? '';
                await killed;
                return { text: 'done' };
              }
            : codexParent;
      const run = await w.run(
        'Drive task 01 through its analysis stage.',
        {
          parent,
          executor: executorThatCompletesThen(w, async () => {
            // The child's turn is not over: its client dies (SIGKILL, the whole process group).
            atKill = w.runFile();
            kill.abort();
          }),
        },
        120_000,
        { signal: kill.signal },
      );
      expect(w.server.scriptErrors).toEqual([]);
      expect(run.timedOut).toBe(false);
      expect(run.signal, `${run.stderr}\n${run.stdout.slice(-3000)}`).toBe('SIGKILL');
      // When the client died the child had completed its stage and was not sealed.
      expect(atKill!.pendingDelegation).toMatchObject({ status: 'stage-completed', stage: 'analysis' });
      if (version.client === 'claude-code') expect(launched).toMatch(/^Async agent launched/);
      // No SubagentStop ever reached baton.
      const hooks = recordedPayloads(w);
      expect(hookEvents(w)).toEqual([
        ['pretooluse', 0],
        ['subagentstart', 0],
      ]);
      expect(atKill!.pendingDelegation.stageCompletedAt).toEqual(expect.any(String));
      const receipt = await sealedByWorker(context, w);
      expect(receipt.childId).toBe(hooks[1]!.payload.agent_id ?? hooks[1]!.payload.agentId);
      expectSealedAfterGrace(receipt);
      // Its cost from the record SubagentStart named (docs/run-view.md "What a stage cost"). A client killed
      // with SIGKILL may not have written all of it (Copilot CLI writes its events file in batches).
      const format = { 'claude-code': 'claude-code-transcript', codex: 'codex-rollout', 'copilot-cli': 'copilot-events' }[version.client];
      expect(receipt.usageRecord).toMatchObject({ format });
      expect(receipt.cost).toMatchObject({ format, file: receipt.usageRecord.file });
      if (version.client === 'claude-code') {
        expect(receipt.cost).toMatchObject({ read: true, note: null, models: [{ model: w.server.byRole('executor')[0]!.model }] });
        expect(receipt.cost.requests).toBeGreaterThanOrEqual(1);
      }
      expect(w.runFile()).toMatchObject({ status: 'running', pause: null });
      // The worker's /metrics counts it.
      const metrics = new URL('/metrics', URL_PATTERN.exec(w.worker!.output())![1]);
      await context.expect
        .poll(
          async () => /^baton_reconciliations_total\{[^}]*kind="sealed"[^}]*\} (\d+)$/m.exec(await (await fetch(metrics)).text())?.[1],
          { timeout: 15_000 },
        )
        .toBe('1');
      await expectAdvanceConsumes(w);
    });

    it(`${version.label}: a child that stops after the worker sealed it, having changed nothing more, changes nothing; advance consumes the seal`, async (context) => {
      const w = await worldFor(context, version, { record: true, workerArgs: WORKER_ARGS });
      await preparedAnalysis(w);
      // The late SubagentStop hook waits for its result and prints it (docs/hooks.md "Output contract").
      w.env.BATON_HOOK_VERBOSE = '1';
      w.env.BATON_HOOK_BUDGET_MS = '60000';
      let sealedBeforeStop: Record<string, any> | null = null;
      const run = await w.run(
        'Drive task 01 through its analysis stage.',
        {
          // Claude Code: a foreground subagent; the parent gets its turn back when the child stops.
          parent:
            version.client === 'claude-code'
              ? (request) =>
                  request.step === 0
                    ? { toolCalls: [asOffered(spawn('claude-code', EXECUTOR, 'Run analyze-task for task 01.'), request)] }
                    : { text: 'done' }
              : version.client === 'codex'
                ? codexParent
                : copilotParent,
          // The child's turn outlasts the stop-grace: the worker seals it before the child stops.
          executor: executorThatCompletesThen(w, async () => {
            sealedBeforeStop = await sealedByWorker(context, w);
          }),
        },
        120_000,
      );
      expectCleanRun(w, run);
      expectSealedAfterGrace(sealedBeforeStop!);
      const hooks = recordedPayloads(w);
      expect(hookEvents(w)).toEqual([
        ['pretooluse', 0],
        ['subagentstart', 0],
        ['subagentstop', 0],
      ]);
      // The late stop was applied (the hook waited for its result): nothing changed, no pause.
      const stopped = verboseResult(hooks[2]!.stderr);
      expect(stopped, hooks[2]!.stderr).toMatchObject({ status: 'running', error: null });
      const run2 = w.runFile();
      expect(run2).toMatchObject({ status: 'running', pause: null });
      expect(run2.pendingDelegation).toEqual(sealedBeforeStop);
      await expectAdvanceConsumes(w);
    });

    it(`${version.label}: a child still working after the stop-grace pauses the run (BATON_DELEGATION_STALLED); it still completes and stops, and the orchestrator's advance consumes its seal`, async (context) => {
      const w = await worldFor(context, version, { record: true, workerArgs: WORKER_ARGS });
      await preparedAnalysis(w);
      const complete = executorThatCompletes(w.client, w.baton);
      let stalled: Record<string, any> | null = null;
      let completed: Record<string, any> | null = null;
      const run = await w.run(
        'Drive task 01 through its analysis stage.',
        {
          parent: parentThatSpawns(w.client, spawn(w.client, EXECUTOR, 'Run analyze-task for task 01.'), [`${w.baton} task 01 advance`]),
          executor: async (request) => {
            if (request.step === 0) {
              // The child works past the grace before it hands its artifact over.
              await context.expect
                .poll(() => w.runFile().pause?.code, { timeout: STOP_GRACE_MS + 30_000, interval: 100 })
                .toBe('BATON_DELEGATION_STALLED');
              stalled = w.runFile();
            }
            if (request.step === 1) completed = batonResult(request.toolResults.at(-1));
            return complete(request);
          },
        },
        120_000,
      );
      expectCleanRun(w, run);
      expect(stalled!).toMatchObject({
        status: 'paused',
        pendingDelegation: { status: 'activated' },
        pause: { code: 'BATON_DELEGATION_STALLED', recoverable: true },
      });
      expect(stalled!.pause.message).toContain('baton task TASK-20260101-000001 abort --reason');
      // The slow child's completion is taken and lifts the stall: what it reads says so, not "paused".
      expect(completed!).toMatchObject({
        status: 'running',
        error: null,
        run: { pause: null, pendingDelegation: { status: 'stage-completed' } },
      });
      expect(completed!.warnings).toEqual(expect.arrayContaining([expect.stringContaining('pause BATON_DELEGATION_STALLED is lifted')]));
      expect(hookEvents(w)).toEqual([
        ['pretooluse', 0],
        ['subagentstart', 0],
        ['subagentstop', 0],
      ]);
      const advanced = batonResult(w.server.byRole('parent').at(-1)!.toolResults.at(-1));
      expect(advanced, JSON.stringify(advanced)).toMatchObject({ status: 'running', error: null });
      const after = w.runFile();
      expect(after).toMatchObject({ status: 'running', pause: null, pendingDelegation: null });
      expect(after.receipts[0]).toMatchObject({ stage: 'analysis', status: 'consumed' });
      // Sealed by the child's own stop: the only mark is the stall.
      const receipt = after.receipts[0];
      expect(receipt.reconciliations).toEqual([
        { kind: 'stalled', since: receipt.activatedAt, graceMs: STOP_GRACE_MS, at: expect.any(String) },
      ]);
      expect(receipt.changedPaths).toContain(ANALYSIS);
    });
  }
});
