import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { TestContext } from 'vitest';
import { BLOCK_BEGIN } from '../../src/install/instructions.ts';
import { clientVersions } from '../support/agentClients.ts';
import type { ClientVersion } from '../support/agentClients.ts';
import { EXECUTOR, asOffered, executorThatCompletes, parentThatSpawns, shell, spawn } from '../support/agentScripts.ts';
import { recordedPayloads, worldFor } from '../support/agentWorld.ts';
import type { WorldOptions } from '../support/agentWorld.ts';

// With the real clients (newest of each): what `install-hooks`
// sets up reaches them — trust, the artifact hand-over, the orchestrator instructions — and what
// baton answers an orchestrator that does not wait for a background subagent.

const [claude] = clientVersions('claude-code');
const [codex] = clientVersions('codex');
const [copilot] = clientVersions('copilot-cli');

/**
 * A world of `version` installed without --trust (install-hooks exits 0), run through its analysis:
 * the parent spawns the executor, and the executor (or any subagent) does nothing. With what
 * install-hooks said.
 */
async function untrustedAnalysis(context: TestContext, version: ClientVersion, options: WorldOptions = {}) {
  const w = await worldFor(context, version, { ...options, installArgs: [] });
  expect(w.installed!.code).toBe(0);
  expect((await w.task('begin-or-resume')).status).toBe('running');
  expect((await w.task('prepare', '--client', version.client)).status).toBe('running');
  await w.run('Drive task 01 through its analysis stage.', {
    parent: parentThatSpawns(version.client, spawn(version.client, EXECUTOR, 'Run analyze-task for task 01.')),
    executor: () => ({ text: 'nothing done' }),
    subagent: () => ({ text: 'nothing done' }),
  });
  return { w, said: `${w.installed!.stdout}${w.installed!.stderr}` };
}

describe.concurrent('real clients: what install-hooks sets up', { timeout: 120_000 }, () => {
  it(`${codex!.label} without --trust loads nothing of the project (hooks, profiles) without a word; install-hooks says so`, async (context) => {
    const { w, said } = await untrustedAnalysis(context, codex!);
    expect(said).toContain("Codex skips a project's hooks and its .codex/config.toml without a word until they are trusted");
    expect(said).toContain('the project is not trusted');
    // Nothing of the project is loaded: not its hooks (no refusal, no activation), not its
    // subagent profiles (Codex does not know the lifecycle agent types).
    expect(w.server.byRole('parent').at(-1)!.toolResults).toEqual(["unknown agent_type 'agent-infra-lifecycle-executor'"]);
    expect(w.server.byRole('executor')).toEqual([]);
    expect(w.runFile().pendingDelegation).toMatchObject({ status: 'prepared', childId: null });
  });

  it(`${copilot!.label} without --trust runs none of the folder's hooks, without a word: its lifecycle agent runs unmeasured; install-hooks says so`, async (context) => {
    const { w, said } = await untrustedAnalysis(context, copilot!, { record: true });
    expect(said).toContain("Copilot CLI skips a folder's hooks and skills without a word until the folder is trusted");
    // Copilot 1.0.102 offers the folder's custom agents untrusted, and the executor runs; but no hook
    // ran (no claim, no activation, no stop), so baton never saw it: the delegation stays prepared.
    expect(w.server.byRole('executor').length).toBeGreaterThan(0);
    expect(recordedPayloads(w)).toEqual([]);
    expect(w.runFile().pendingDelegation).toMatchObject({ status: 'prepared', childId: null });
  });

  for (const version of [claude!, codex!]) {
    it(`${version.label}: the parent agent receives baton's orchestrator instructions`, async (context) => {
      const w = await worldFor(context, version);
      await w.run('What do you know about this repository?', { parent: () => ({ text: 'noted' }) });
      const parent = w.server.byRole('parent')[0]!;
      // Claude Code puts CLAUDE.md in a user message, Codex puts AGENTS.md in one of its own.
      const seen = `${parent.system}\n${parent.userText}`;
      // Claude Code drops HTML comments from CLAUDE.md, so the block's delimiters do not reach
      // the model; its heading does.
      if (version.client === 'codex') expect(seen).toContain(BLOCK_BEGIN);
      expect(seen).toContain('## Agent-infra task lifecycle (driven by baton)');
      expect(seen).toContain(`${w.baton} task <task> prepare --client ${version.client}`);
      // The lifecycle subagents are not told to orchestrate: the block names them as exempt.
      expect(seen).toContain(`A subagent of type \`${EXECUTOR}\``);
    });

    it(`${version.label}: the executor's artifact: ${version.client === 'claude-code' ? 'Write refused, handed over on stdin' : 'the installed sandbox settings let it write and reach Redis'}; the hooks seal it`, async (context) => {
      const w = await worldFor(context, version, { record: true });
      expect((await w.task('begin-or-resume')).status).toBe('running');
      expect((await w.task('prepare', '--client', version.client)).status).toBe('running');
      const artifact = path.join(w.repo.taskDir, 'analysis.md');
      let writableByChild: boolean | null = null;
      const complete = executorThatCompletes(version.client, w.baton);
      await w.run('Drive task 01 through its analysis stage.', {
        parent: parentThatSpawns(version.client, spawn(version.client, EXECUTOR, 'Run analyze-task for task 01.')),
        executor: (request) => {
          // What the child's own write attempt got (Codex: its sandbox; Claude Code: the Write rule).
          if (request.step === 1 && writableByChild === null) writableByChild = fs.existsSync(path.join(w.repo.taskDir, 'direct.md'));
          if (request.step === 0) {
            return version.client === 'claude-code'
              ? { toolCalls: [{ name: 'Write', input: { file_path: artifact, content: '# Analysis\n\nWritten directly.\n' } }] }
              : { toolCalls: [shell('codex', `printf 'direct' > '${w.repo.taskDir}/direct.md'`)] };
          }
          return complete({ ...request, step: request.step - 1 });
        },
      });
      const executor = w.server.byRole('executor');
      const firstResult = executor[1]!.toolResults.at(-1)!;
      // Claude Code refuses a subagent's Write of analysis.md; under Codex's workspace-write
      // sandbox, the project config install-hooks wrote makes `.agents/` writable.
      if (version.client === 'claude-code') expect(firstResult).toContain('Subagents should return findings as text');
      else expect(writableByChild).toBe(true);
      // The hand-over through complete-stage --content - (Redis reached from inside the sandbox).
      expect(fs.readFileSync(artifact, 'utf8')).toBe('# Analysis\n\nDone.\n');
      // A hook queues its event and exits without waiting for the result: the worker seals it after.
      await context.expect.poll(() => w.runFile().pendingDelegation?.status, { timeout: 60_000 }).toBe('sealed');
      expect(w.runFile().pendingDelegation).toMatchObject({ status: 'sealed', stage: 'analysis' });
      expect(recordedPayloads(w).map((hook) => hook.event)).toEqual(['PreToolUse', 'SubagentStart', 'SubagentStop']);
    });
  }

  it(`${claude!.label}: an advance before a background subagent has stopped says what to do`, async (context) => {
    const w = await worldFor(context, claude!);
    expect((await w.task('begin-or-resume')).status).toBe('running');
    expect((await w.task('prepare', '--client', 'claude-code')).status).toBe('running');
    const background = spawn('claude-code', EXECUTOR, 'Run analyze-task for task 01.', { run_in_background: true });
    let releaseChild: () => void = () => undefined;
    const childMayFinish = new Promise<void>((resolve) => (releaseChild = resolve));
    let childStarted: () => void = () => undefined;
    const childIsWorking = new Promise<void>((resolve) => (childStarted = resolve));
    const complete = executorThatCompletes('claude-code', w.baton);
    await w.run('Drive task 01 through its analysis stage.', {
      parent: async (request) => {
        if (request.step === 0) return { toolCalls: [asOffered(background, request)] };
        if (request.step === 1) {
          // The background child has asked for its first turn, and the worker has applied its
          // SubagentStart (the hook queues it and exits): the advance meets a started, unfinished child.
          await childIsWorking;
          await vi.waitFor(() => expect(w.runFile().pendingDelegation?.status).toBe('activated'), { timeout: 30_000, interval: 50 });
          return { toolCalls: [shell('claude-code', `${w.baton} task 01 advance`)] };
        }
        releaseChild();
        return { text: 'advanced' };
      },
      executor: async (request) => {
        // The child is still working when the parent advances.
        if (request.step === 0) {
          childStarted();
          await childMayFinish;
        }
        return complete(request);
      },
    });
    const advanced = w.server.byRole('parent')[2]!.toolResults.at(-1)!;
    expect(advanced).toContain('DELEGATION_STATE_INVALID');
    expect(advanced).toContain('wait for the subagent to return (spawn it in the foreground, never in the background)');
    expect(advanced).toContain('then advance again');
  });
});
