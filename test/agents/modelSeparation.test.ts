import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestContext } from 'vitest';
import { CLAUDE_MODEL, CODEX_MODEL, COPILOT_MODEL, clientVersions } from '../support/agentClients.ts';
import type { ClientVersion } from '../support/agentClients.ts';
import { REVIEWER, parentThatSpawns, shell, spawn } from '../support/agentScripts.ts';
import { expectCleanRun, recordedPayloads, reviewHandOver, worldFor } from '../support/agentWorld.ts';
import type { AgentWorld } from '../support/agentWorld.ts';
import type { ModelRequest } from '../support/modelServer.ts';

// Issue 24, model separation with the real clients (the newest and the oldest of each) under agent-infra-0.11.3:
// the run's policy names an executor and a reviewer model; the reviewer's own agent profile sets
// its model (Claude Code: `model:` in the frontmatter of .claude/agents/agent-infra-lifecycle-reviewer.md;
// Codex: `model = "…"` in .codex/agents/agent-infra-lifecycle-reviewer.toml). On the executor's
// model it is refused with ORCHESTRATION_MODEL_SEPARATION_REQUIRED and a message naming that
// setting; on its own model it runs, and the model each client really used is the one the scripted
// model server saw in the reviewer's requests. docs/differences.md "Profiles".

const MODELS: Record<ClientVersion['client'], { executor: string; reviewer: string }> = {
  'claude-code': { executor: CLAUDE_MODEL, reviewer: 'claude-opus-5-5' },
  codex: { executor: CODEX_MODEL, reviewer: 'gpt-5.1-codex' },
  'copilot-cli': { executor: COPILOT_MODEL, reviewer: 'gpt-5.1' },
};

/** Sets the model of the installed reviewer profile, as a user would edit it. */
function setReviewerModel(w: AgentWorld, model: string): string {
  if (w.client === 'claude-code') {
    const file = path.join(w.repo.root, '.claude/agents', `${REVIEWER}.md`);
    const text = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, text.replace(/^---\n/, `---\nmodel: ${model}\n`));
    return file;
  }
  const file = path.join(w.repo.root, '.codex/agents', `${REVIEWER}.toml`);
  fs.writeFileSync(file, `model = "${model}"\n${fs.readFileSync(file, 'utf8')}`);
  return file;
}

/** A world under agent-infra-0.11.3 whose run (analysis.md written) has its analysis review prepared under the policy. */
async function laterWorld(context: TestContext, version: ClientVersion, reviewerProfileModel: string): Promise<AgentWorld> {
  const w = await worldFor(context, version, { record: true, worker: false });
  fs.writeFileSync(path.join(w.repo.root, '.agents/baton.json'), `${JSON.stringify({ profile: 'agent-infra-0.11.3' })}\n`);
  setReviewerModel(w, reviewerProfileModel);
  await w.startWorker();
  const models = MODELS[w.client];
  fs.writeFileSync(path.join(w.repo.taskDir, 'analysis.md'), '# Analysis\n\nDone.\n');
  const begun = await w.task('begin-or-resume', '--executor-model', models.executor, '--reviewer-model', models.reviewer);
  expect(begun, JSON.stringify(begun)).toMatchObject({ status: 'running', error: null });
  const prepared = await w.task('prepare', '--client', w.client);
  expect(prepared.run.pendingDelegation, JSON.stringify(prepared)).toMatchObject({
    status: 'prepared',
    role: 'reviewer',
    requestedModel: models.reviewer,
  });
  return w;
}

/** The parent spawns the reviewer and waits for it; the reviewer hands its review over as its profile says. */
function reviewScript(w: AgentWorld) {
  return {
    parent: parentThatSpawns(w.client, spawn(w.client, REVIEWER, 'Run review-analysis for task 01, round 1.')),
    reviewer: (request: ModelRequest) => (request.step === 0 ? { toolCalls: [shell(w.client, reviewHandOver(w))] } : { text: 'reviewed' }),
  };
}

/** The model named in each request the scripted server answered for `role` (what the client really asked for). */
function modelsSeen(w: AgentWorld, role: 'parent' | 'reviewer'): string[] {
  return [...new Set(w.server.byRole(role).map((request) => String(request.body.model)))];
}

describe.concurrent('real clients: model separation under agent-infra-0.11.3', { timeout: 180_000 }, () => {
  // The newest and the oldest pinned release of each client.
  for (const version of [...clientVersions('claude-code'), ...clientVersions('codex')]) {
    const models = MODELS[version.client];
    const setting =
      version.client === 'claude-code'
        ? `Set model: ${models.reviewer} in the frontmatter of .claude/agents/${REVIEWER}.md`
        : `Set model = "${models.reviewer}" in .codex/agents/${REVIEWER}.toml`;

    it(`${version.label}: model separation refuses a reviewer whose agent profile sets the executor's model (ORCHESTRATION_MODEL_SEPARATION_REQUIRED, naming the setting)`, async (context) => {
      const w = await laterWorld(context, version, models.executor);
      const run = await w.run('Drive task 01 through its analysis review.', reviewScript(w), 120_000);
      expectCleanRun(w, run);
      const hooks = recordedPayloads(w);
      const state = w.runFile();
      if (version.client === 'claude-code') {
        // Claude Code reports no model on its hooks: the profile's `model:` is read at the spawn
        // claim, and the spawn is blocked before any reviewer runs.
        expect(hooks.map((hook) => [hook.event, hook.code])).toEqual([['PreToolUse', 2]]);
        expect(hooks[0]!.payload.tool_input.model).toBeUndefined();
        expect(hooks[0]!.stderr).toContain('ORCHESTRATION_MODEL_SEPARATION_REQUIRED');
        expect(hooks[0]!.stderr).toContain(
          `runs on ${models.executor} (asked by the spawning call, or set by its agent profile), the executor's model`,
        );
        expect(hooks[0]!.stderr).toContain(setting);
        expect(w.server.byRole('reviewer')).toEqual([]);
        // The run goes on: nothing was claimed, so fixing the profile and spawning again is the way on.
        expect(state).toMatchObject({ status: 'running', pause: null, pendingDelegation: { status: 'prepared' } });
        expect(state.pendingDelegation.spawnClaim).toBeUndefined();
        return;
      }
      // Codex reports the child's model at SubagentStart: the model its agent TOML set, and the one
      // the scripted server saw the reviewer ask for.
      expect(hooks.map((hook) => [hook.event, hook.payload.model])).toEqual([
        ['PreToolUse', models.executor],
        ['SubagentStart', models.executor],
        ['SubagentStop', models.executor],
      ]);
      expect(modelsSeen(w, 'reviewer')).toEqual([models.executor]);
      expect(state).toMatchObject({
        status: 'paused',
        pause: { code: 'ORCHESTRATION_MODEL_SEPARATION_REQUIRED', recoverable: true },
        pendingDelegation: { status: 'prepared', actualModel: null, childId: null },
      });
      expect(state.pause.message).toContain(`runs on ${models.executor} (reported by its client at SubagentStart), the executor's model`);
      expect(state.pause.message).toContain(setting);
      // The refused child's own hand-over was answered with that refusal, which stays in place.
      const handOver = w.server.byRole('reviewer')[1]!.toolResults.at(-1) ?? '';
      expect(handOver).toContain('ORCHESTRATION_MODEL_SEPARATION_REQUIRED');
      expect(w.readTaskFile('review-analysis.md')).toBeNull();
      // The way on the message names: abort, then the run goes on with no pending delegation.
      expect(await w.task('abort', '--reason', "reviewer on the executor's model")).toMatchObject({
        error: null,
        run: { pendingDelegation: null },
      });
      expect(await w.task('begin-or-resume')).toMatchObject({ status: 'running', error: null });
    });

    // Claude Code 2.1.26 takes no full model id from an agent profile (below): it has no passing case.
    if (version.packageName === 'claude-code-oldest') continue;

    it(`${version.label}: model separation passes a reviewer whose agent profile sets its own model; the client runs it on that model`, async (context) => {
      const w = await laterWorld(context, version, models.reviewer);
      const run = await w.run('Drive task 01 through its analysis review.', reviewScript(w), 120_000);
      expectCleanRun(w, run);
      const hooks = recordedPayloads(w);
      expect(hooks.map((hook) => [hook.event, hook.code])).toEqual([
        ['PreToolUse', 0],
        ['SubagentStart', 0],
        ['SubagentStop', 0],
      ]);
      // What each client really asked the model server for: the parent on its own model, the reviewer on its profile's.
      expect(modelsSeen(w, 'parent')).toEqual([models.executor]);
      expect(modelsSeen(w, 'reviewer')).toEqual([models.reviewer]);
      // A hook queues its event and exits without waiting for the result: the worker seals it after.
      await context.expect.poll(() => w.runFile().pendingDelegation?.status, { timeout: 60_000 }).toBe('sealed');
      const receipt = w.runFile().pendingDelegation;
      expect(receipt).toMatchObject({ status: 'sealed', role: 'reviewer', requestedModel: models.reviewer });
      // Codex reports the child's model at SubagentStart; Claude Code reports none.
      expect(hooks[1]!.payload.model).toBe(version.client === 'codex' ? models.reviewer : undefined);
      expect(receipt.actualModel).toBe(version.client === 'codex' ? models.reviewer : null);
      expect(await w.task('advance')).toMatchObject({ status: 'running', error: null });
    });
  }
});

// What the oldest Claude Code lacks: its agent profiles take a model alias only (sonnet, opus, haiku,
// inherit); a full id such as the policy names is ignored and the subagent inherits the parent's
// model. It reports no model on any hook either, so baton, which reads the profile as written, lets
// the reviewer start, and the model server sees it on the executor's model (docs/differences.md).
describe('real clients: what Claude Code 2.1.26 lacks for model separation', { timeout: 180_000 }, () => {
  const version = clientVersions('claude-code').find((candidate) => candidate.packageName === 'claude-code-oldest')!;
  it(`${version.label}: a reviewer profile naming a full model id runs on the parent's model, which no hook reports`, async (context) => {
    const w = await laterWorld(context, version, MODELS['claude-code'].reviewer);
    const run = await w.run('Drive task 01 through its analysis review.', reviewScript(w), 120_000);
    expectCleanRun(w, run);
    const hooks = recordedPayloads(w);
    expect(hooks.map((hook) => [hook.event, hook.code, hook.payload.model])).toEqual([
      ['PreToolUse', 0, undefined],
      ['SubagentStart', 0, undefined],
      ['SubagentStop', 0, undefined],
    ]);
    expect(modelsSeen(w, 'reviewer')).toEqual([MODELS['claude-code'].executor]);
  });
});

// Upstream's later policy also names a reasoning effort per role. What the real clients let baton
// see of it (docs/differences.md "Profiles", why baton still refuses that policy shape): the
// reviewer's agent profile sets an effort and the client sends it to the model; Codex reports it on
// no hook, Claude Code only on the reviewer's SubagentStop, after the review was done.
describe.concurrent('real clients: a reviewer profile reasoning effort reaches the model, not the start hooks', {
  timeout: 180_000,
}, () => {
  for (const version of [clientVersions('claude-code')[0]!, clientVersions('codex')[0]!]) {
    const models = MODELS[version.client];
    it(`${version.label}: the effort set in the reviewer's agent profile is in its model requests; no hook before its stop reports it`, async (context) => {
      const w = await laterWorld(context, version, models.reviewer);
      const file =
        version.client === 'claude-code'
          ? path.join(w.repo.root, '.claude/agents', `${REVIEWER}.md`)
          : path.join(w.repo.root, '.codex/agents', `${REVIEWER}.toml`);
      const text = fs.readFileSync(file, 'utf8');
      fs.writeFileSync(
        file,
        version.client === 'claude-code' ? text.replace(/^---\n/, '---\neffort: low\n') : `model_reasoning_effort = "low"\n${text}`,
      );
      const run = await w.run('Drive task 01 through its analysis review.', reviewScript(w), 120_000);
      expectCleanRun(w, run);
      // The request body field each client uses for the effort: Responses' reasoning.effort, Messages' output_config.effort.
      const efforts = w.server
        .byRole('reviewer')
        .map((request) => (request.body as Record<string, any>)[version.client === 'codex' ? 'reasoning' : 'output_config']?.effort);
      expect(new Set(efforts)).toEqual(new Set(['low']));
      const hooks = recordedPayloads(w);
      const reporting = hooks.filter((hook) => 'effort' in hook.payload).map((hook) => [hook.event, hook.payload.effort]);
      expect(reporting).toEqual(version.client === 'codex' ? [] : [['SubagentStop', expect.objectContaining({ level: 'low' })]]);
    });
  }
});
