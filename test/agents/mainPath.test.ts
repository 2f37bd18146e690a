import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clientVersions, networkIsolation } from '../support/agentClients.ts';
import type { ClientName, ClientVersion } from '../support/agentClients.ts';
import { clientAdapter } from '../../src/clients/registry.ts';
import { EXECUTOR, agentName, batonResult, executorThatCompletes, parentThatSpawns, spawn } from '../support/agentScripts.ts';
import { recordedPayloads, worldFor } from '../support/agentWorld.ts';
import type { AgentWorld } from '../support/agentWorld.ts';
import { writeObservedPayloads } from '../support/observedPayloads.ts';
import { requireHere } from '../support/requirements.ts';

// The main path with the real clients (newest tested and oldest supported of each), driven by
// the scripted model server, with the hooks and profiles `baton install-hooks` writes, a real
// worker and a private Redis. What is asserted is what baton recorded.

const CLIENTS: ClientName[] = ['claude-code', 'codex', 'copilot-cli'];

/** A recorded payload in baton's field names (Copilot CLI's camelCase read as the hook reads it). */
function inBatonNames(client: ClientName, payload: Record<string, any>): Record<string, any> {
  return clientAdapter(client)?.hook.payload?.(payload) ?? payload;
}

/** The hook events a run recorded, as the settings name them (Copilot's payloads carry no event name). */
function eventsOf(w: AgentWorld): string[] {
  return recordedPayloads(w).map((entry) => entry.event.toLowerCase());
}
const cases = CLIENTS.flatMap((client) => clientVersions(client));

function toolResultsOf(w: AgentWorld, role: 'parent' | 'executor'): string[] {
  const last = w.server.byRole(role).at(-1);
  return last?.toolResults ?? [];
}

describe.concurrent.each(cases)('$label', { timeout: 120_000 }, (version: ClientVersion) => {
  const { client } = version;

  it('runs in a private network namespace (loopback only)', (context) => {
    // Plain loopback only when asked for (BATON_AGENT_TESTS_NETNS=0): then this test is reported as skipped, by name.
    const isolation = networkIsolation();
    if (isolation.kind === 'loopback') requireHere(context, `the clients run on plain loopback: ${isolation.why}`);
    expect(isolation).toEqual({ kind: 'netns' });
  });

  it('prepared delegation: activated, completed, sealed, consumed', async (context) => {
    const w = await worldFor(context, version, { record: true });
    expect((await w.task('begin-or-resume')).status).toBe('running');
    const prepared = await w.task('prepare', '--client', client);
    expect(prepared.run.pendingDelegation.status).toBe('prepared');

    const run = await w.run('Drive task 01 through its analysis stage.', {
      parent: parentThatSpawns(client, spawn(client, EXECUTOR, 'Run analyze-task for task 01.'), [`${w.baton} task 01 advance`]),
      executor: executorThatCompletes(client, w.baton),
    });
    expect(w.server.scriptErrors).toEqual([]);
    expect(run.timedOut).toBe(false);
    expect(run.code, `${run.stderr}\n${run.stdout.slice(-3000)}`).toBe(0);

    // The executor's complete-stage and the parent's advance both answered `running`.
    expect(batonResult(toolResultsOf(w, 'executor').at(-1)).status).toBe('running');
    const advanced = batonResult(toolResultsOf(w, 'parent').at(-1));
    expect(advanced.status).toBe('running');
    expect(advanced.run.pendingDelegation).toBeNull();

    // The output contract (docs/hooks.md): every hook exits 0 and prints nothing, or one
    // hook-output object both clients accept.
    for (const hook of recordedPayloads(w)) {
      expect(hook.code, `${hook.event}: ${hook.stderr}`).toBe(0);
      if (hook.stdout.trim() !== '')
        expect(Object.keys(JSON.parse(hook.stdout) as object), `${hook.event} printed ${hook.stdout}`).toEqual(['systemMessage']);
    }
    const recorded = recordedPayloads(w);
    const payloadOf = (event: string) => inBatonNames(client, recorded.find((entry) => entry.event.toLowerCase() === event)!.payload);
    const start = payloadOf('subagentstart');
    const stop = payloadOf('subagentstop');
    expect(eventsOf(w)).toEqual(['pretooluse', 'subagentstart', 'subagentstop']);

    const runFile = w.runFile();
    expect(runFile.status).toBe('running');
    expect(runFile.pendingDelegation).toBeNull();
    expect(runFile.receipts).toHaveLength(1);
    const receipt = runFile.receipts[0];
    expect(receipt).toMatchObject({
      status: 'consumed',
      role: 'executor',
      stage: 'analysis',
      round: 1,
      artifact: 'analysis.md',
      client,
      childId: start.agent_id,
      parentId: start.session_id,
      spawnMode: 'fresh',
      agent: agentName(client),
    });
    expect(stop.agent_id).toBe(start.agent_id);
    expect(receipt.changedPaths).toContain('.agents/workspace/active/TASK-20260101-000001/analysis.md');
    expect(receipt.activatedAt && receipt.sealedAt && receipt.consumedAt).toBeTruthy();
    // Codex reports the child's model; Claude Code and Copilot CLI report none.
    expect(receipt.actualModel).toBe(client === 'codex' ? start.model : null);
    expect(w.readTaskFile('analysis.md')).toBe('# Analysis\n\nDone.\n');

    if (process.env.BATON_WRITE_OBSERVED_PAYLOADS === '1') writeObservedPayloads(version, recordedPayloads(w), w.repo.root);
  });

  it('nothing prepared: the spawn is blocked with baton’s reason and no subagent runs', async (context) => {
    const w = await worldFor(context, version);
    expect((await w.task('begin-or-resume')).status).toBe('running');
    const run = await w.run('Spawn the executor.', {
      parent: parentThatSpawns(client, spawn(client, EXECUTOR, 'Run analyze-task for task 01.')),
      executor: executorThatCompletes(client, w.baton),
    });
    expect(run.code, `${run.stderr}\n${run.stdout.slice(-3000)}`).toBe(0);
    expect(w.server.byRole('executor')).toEqual([]);
    const refusal = toolResultsOf(w, 'parent').join('\n');
    expect(refusal).toMatch(
      new RegExp(`baton: (ORCHESTRATION_DELEGATION_MISSING: )?no lifecycle delegation is prepared for ${EXECUTOR} in ${w.repo.root}`),
    );
    const runFile = w.runFile();
    expect(runFile.pendingDelegation).toBeNull();
    expect(runFile.receipts).toEqual([]);
  });

  it('unmanaged repository: the hooks stay silent for an ordinary subagent', async (context) => {
    const w = await worldFor(context, version, { managed: false, record: true });
    // Claude Code's general-purpose agent; Codex's default agent (no agent_type); Copilot CLI's explore agent.
    const ordinary =
      client === 'codex'
        ? { name: 'multi_agent_v1.spawn_agent', input: { message: 'Look around.' } }
        : spawn(client, client === 'claude-code' ? 'general-purpose' : 'explore', 'Look around.');
    const run = await w.run('Spawn a helper.', {
      parent: parentThatSpawns(client, ordinary),
      subagent: () => ({ text: 'looked around: nothing to report' }),
    });
    expect(run.code, `${run.stderr}\n${run.stdout.slice(-3000)}`).toBe(0);
    expect(w.server.byRole('subagent').length, JSON.stringify(toolResultsOf(w, 'parent'))).toBe(1);
    expect(toolResultsOf(w, 'parent').join('\n')).toContain('looked around: nothing to report');
    // baton's PreToolUse hook ran on the spawning tool (the recorder shares its matcher group)…
    // Copilot CLI 1.0.102 applies a matcher to subagentStart but not to subagentStop: that hook runs for
    // every subagent, and baton exits 0 silently for one that is not a lifecycle agent.
    expect(eventsOf(w)).toEqual(client === 'copilot-cli' ? ['pretooluse', 'subagentstop'] : ['pretooluse']);
    for (const hook of recordedPayloads(w)) expect([hook.code, hook.stdout, hook.stderr]).toEqual([0, '', '']);
    // …and nothing of baton's reached the agent, and no lifecycle state appeared.
    expect(JSON.stringify(w.server.byRole('parent').at(-1)!.toolResults)).not.toMatch(/baton|orchestration|delegation|hook error/i);
    expect(fs.existsSync(path.join(w.repo.root, '.agents'))).toBe(false);
    expect(fs.existsSync(path.join(w.repo.root, '.git', 'baton', 'spool'))).toBe(false);
  });
});

// The outages exercise baton, not the client: they run on the newest version of each client only
// (registered for those versions alone, so nothing is left out quietly).
const newestCases = CLIENTS.map((client) => clientVersions(client)[0]!);

describe.concurrent.each(newestCases)('$label: outages', { timeout: 120_000 }, (version: ClientVersion) => {
  const { client } = version;

  it('worker down: the SubagentStop stays queued and is applied when a worker starts', async (context) => {
    const w = await worldFor(context, version, { record: true });
    expect((await w.task('begin-or-resume')).status).toBe('running');
    expect((await w.task('prepare', '--client', client)).status).toBe('running');
    const complete = executorThatCompletes(client, w.baton, { extraTaskArgs: '--worker inline' });
    const run = await w.run('Drive task 01 through its analysis stage.', {
      parent: parentThatSpawns(client, spawn(client, EXECUTOR, 'Run analyze-task for task 01.')),
      executor: async (request) => {
        // The worker goes away while the child works; the child's own command serves the queue
        // until its event is applied (`--worker inline`).
        if (request.step === 0) await w.stopWorker();
        return complete(request);
      },
    });
    expect(run.code, `${run.stderr}\n${run.stdout.slice(-3000)}`).toBe(0);
    const stop = recordedPayloads(w).find((hook) => hook.event.toLowerCase() === 'subagentstop')!;
    expect(stop.code).toBe(0);
    expect(stop.stderr).toContain(`no worker serves ${w.repo.root}`);
    // Nobody serves the repository: the SubagentStop is still queued.
    expect(w.runFile().pendingDelegation.status).toBe('stage-completed');
    await w.startWorker();
    await context.expect.poll(() => w.runFile().pendingDelegation?.status, { timeout: 60_000 }).toBe('sealed');
    expect(w.runFile().pendingDelegation.changedPaths).toContain('.agents/workspace/active/TASK-20260101-000001/analysis.md');
  });

  it('Redis down: the SubagentStart is spooled and applied, in order, once Redis is back', async (context) => {
    const w = await worldFor(context, version);
    expect((await w.task('begin-or-resume')).status).toBe('running');
    expect((await w.task('prepare', '--client', client)).status).toBe('running');
    await w.stopWorker();
    await w.redis.stop();
    const spool = path.join(w.repo.root, '.git', 'baton', 'spool');
    const spooledWhileDown: string[] = [];
    const complete = executorThatCompletes(client, w.baton);
    const run = await w.run('Drive task 01 through its analysis stage.', {
      parent: parentThatSpawns(client, spawn(client, EXECUTOR, 'Run analyze-task for task 01.'), [`${w.baton} task 01 advance`]),
      executor: async (request) => {
        if (request.step === 0) {
          // The SubagentStart hook ran with Redis down: its event waits in the spool.
          const seen = path.join(w.repo.root, '.git', 'baton', 'spool-seen');
          fs.mkdirSync(seen, { recursive: true });
          for (const file of fs.existsSync(spool) ? fs.readdirSync(spool) : []) {
            fs.copyFileSync(path.join(spool, file), path.join(seen, file));
            spooledWhileDown.push(file);
          }
          await w.redis.start();
          await w.startWorker();
        }
        return complete(request);
      },
    });
    expect(run.code, `${run.stderr}\n${run.stdout.slice(-3000)}`).toBe(0);
    // The SubagentStart event waited in the spool (next to whatever else the hooks spooled).
    expect(
      spooledWhileDown.some((file) =>
        fs.readFileSync(path.join(w.repo.root, '.git', 'baton', 'spool-seen', file), 'utf8').includes('"hook-start"'),
      ),
      JSON.stringify(spooledWhileDown),
    ).toBe(true);
    expect(fs.existsSync(spool) ? fs.readdirSync(spool) : []).toEqual([]);
    const runFile = w.runFile();
    expect(runFile.pendingDelegation).toBeNull();
    expect(runFile.receipts[0]).toMatchObject({ status: 'consumed', stage: 'analysis' });
  });
});
