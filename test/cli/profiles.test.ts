import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { activeTaskDir } from '../../src/core/taskLayout.ts';
import { TASK_ID, TASK_ID_2, uniquePrefix, writeArtifact, writeTask } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { Fixture } from '../support/fixtures.ts';
import { batonEnv, jsonOf, runBaton, startWorkerProcess } from '../support/processes.ts';
import type { WorkerProcess } from '../support/processes.ts';
import { nativeStart, nativeStop, taskArgv } from '../support/engineEvents.ts';

// The lifecycle profiles through the real commands: `baton init --profile` records it, `baton doctor`
// shows it, and `baton task` (applied by a real `baton worker` serving the test's repository) follows
// its rules. The worker reads the profile for each event it applies, so a profile chosen (or broken)
// while it runs counts at once. One test per behaviour, each against both profiles where the
// behaviour differs.

const redisUrl = inject('redisUrl');
let fixture: Fixture;
let prefix: string;
let worker: WorkerProcess | null = null;

async function tearDown(): Promise<void> {
  await worker?.stop();
  worker = null;
  fixture?.cleanup();
}
afterEach(tearDown);

/** A committed git repository (the worker measures real fingerprints) with task TASK_ID, and its worker. */
async function setUp(): Promise<string> {
  const repo = gitRepoWithTask(TASK_ID);
  fixture = { root: repo.root, taskDir: (taskId = TASK_ID) => activeTaskDir(repo.root, taskId), cleanup: repo.cleanup };
  prefix = uniquePrefix('prof');
  worker = await startWorkerProcess(['--repo', repo.root], { env: batonEnv({ redisUrl, prefix }) });
  return repo.taskDir;
}

function baton(args: readonly string[]) {
  return runBaton(args, { cwd: fixture.root, env: batonEnv({ redisUrl, prefix }) });
}

async function task(args: readonly string[]): Promise<Record<string, any>> {
  return jsonOf(await baton(['task', ...args]));
}

const POLICY = ['--executor-model', 'gpt-exec', '--reviewer-model', 'gpt-review'];

async function choose(profile: string): Promise<void> {
  const init = await baton(['init', '--client', 'codex', '--profile', profile]);
  expect(init.code, init.stderr).toBe(0);
  expect(init.stdout).toContain(`profile: ${profile} (recorded in .agents/baton.json`);
}

/** A new set-up under `profile` whose task TASK_ID is begun (with the model policy) and prepared for Codex. */
async function preparedUnder(profile: string): Promise<void> {
  await setUp();
  await choose(profile);
  await task([TASK_ID, 'begin-or-resume', ...POLICY]);
  expect((await task([TASK_ID, 'prepare', '--client', 'codex'])).error, profile).toBeNull();
}

describe('profiles through the CLI', () => {
  it('baton init --profile records it, baton doctor shows it; an unknown one is BATON_PROFILE_INVALID', async () => {
    await setUp();
    const bad = await baton(['init', '--profile', 'agent-infra-1.0.0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('BATON_PROFILE_INVALID: --profile: unknown profile "agent-infra-1.0.0"');
    await choose('agent-infra-0.11.3');
    expect(JSON.parse(fs.readFileSync(path.join(fixture.root, '.agents/baton.json'), 'utf8'))).toEqual({ profile: 'agent-infra-0.11.3' });
    const doctor = jsonOf(await baton(['doctor', '--json']));
    expect(doctor.checks.find((check: { check: string }) => check.check === 'profile')).toEqual({
      check: 'profile',
      status: 'ok',
      message: 'agent-infra-0.11.3 (recorded in .agents/baton.json)',
    });
    fs.writeFileSync(path.join(fixture.root, '.agents/baton.json'), '{"profile":7}');
    const broken = await task([TASK_ID, 'begin-or-resume', ...POLICY]);
    expect(broken.error.code).toBe('BATON_PROFILE_INVALID');
  }, 60_000);

  it('baton doctor shows the reviewerVendor policy, warns where agent-infra-0.9.2 does not enforce it; baton init --profile keeps it', async () => {
    await setUp();
    const file = path.join(fixture.root, '.agents/baton.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '{"profile":"agent-infra-0.9.2","reviewerVendor":"different"}');
    const profileCheck = async () =>
      jsonOf(await baton(['doctor', '--json'])).checks.find((check: { check: string }) => check.check === 'profile');
    expect(await profileCheck()).toEqual({
      check: 'profile',
      status: 'warn',
      message:
        'agent-infra-0.9.2 (recorded in .agents/baton.json); its reviewerVendor "different" is not enforced under agent-infra-0.9.2: run baton init --profile agent-infra-0.11.3',
    });
    await choose('agent-infra-0.11.3');
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ profile: 'agent-infra-0.11.3', reviewerVendor: 'different' });
    expect(await profileCheck()).toEqual({
      check: 'profile',
      status: 'ok',
      message:
        "agent-infra-0.11.3 (recorded in .agents/baton.json); reviewer vendor: different (a review runs in another vendor than its stage's executor, else BATON_REVIEWER_VENDOR_REQUIRED)",
    });
    fs.writeFileSync(file, '{"profile":"agent-infra-0.11.3","reviewerVendor":"elsewhere"}');
    expect(await profileCheck()).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('unknown reviewer-vendor policy "elsewhere"'),
    });
  }, 60_000);

  it('paused run releases the guard under agent-infra-0.11.3, not under agent-infra-0.9.2', async () => {
    for (const profile of ['agent-infra-0.9.2', 'agent-infra-0.11.3']) {
      await setUp();
      writeTask(fixture, TASK_ID_2);
      await choose(profile);
      await task([TASK_ID_2, 'begin-or-resume', ...POLICY]);
      expect((await task([TASK_ID_2, 'prepare', '--client', 'codex'])).error).toBeNull();
      await task([TASK_ID_2, 'pause', '--code', 'HUMAN', '--message', 'wait', '--recoverable', 'true']);
      await task([TASK_ID, 'begin-or-resume', ...POLICY]);
      const prepared = await task([TASK_ID, 'prepare', '--client', 'codex']);
      if (profile === 'agent-infra-0.9.2') expect(prepared.error?.code, profile).toBe('ORCHESTRATION_DELEGATION_BUSY');
      else expect(prepared.error, profile).toBeNull();
      await tearDown();
    }
  }, 120_000);

  it('baton task <task> recover-prepared releases a never-activated delegation under agent-infra-0.11.3; under 0.9.2 it is not an intent of the profile', async () => {
    for (const profile of ['agent-infra-0.9.2', 'agent-infra-0.11.3']) {
      await preparedUnder(profile);
      const recovered = await task([TASK_ID, 'recover-prepared']);
      if (profile === 'agent-infra-0.9.2') {
        expect(recovered.error?.code, profile).toBe('BATON_INTENT_NOT_IN_PROFILE');
      } else {
        // Never claimed: no deadline runs, so nothing can start it and it is released at once.
        expect(recovered, profile).toMatchObject({ status: 'running', error: null, run: { pendingDelegation: null } });
        expect(recovered.run.receipts.map((receipt: { status: string }) => receipt.status)).toEqual(['aborted']);
      }
      await tearDown();
    }
  }, 120_000);

  it('baton task <task> recover-started releases a delegation whose child stopped before completing its stage under agent-infra-0.11.3; under 0.9.2 it is not an intent of the profile', async () => {
    for (const profile of ['agent-infra-0.9.2', 'agent-infra-0.11.3']) {
      await preparedUnder(profile);
      const start = await task(taskArgv(nativeStart({ client: 'codex', actualModel: 'gpt-exec' })));
      expect(start.error, profile).toBeNull();
      // Quiet is not evidence: before the child stops, nothing is recovered.
      const early = await task([TASK_ID, 'recover-started']);
      const stopped = await task(taskArgv(nativeStop({ client: 'codex' })));
      const recovered = await task([TASK_ID, 'recover-started']);
      if (profile === 'agent-infra-0.9.2') {
        expect(early.error?.code, profile).toBe('BATON_INTENT_NOT_IN_PROFILE');
        expect(stopped.run.pause.code, profile).toBe('DELEGATION_STATE_INVALID');
        expect(recovered.error?.code, profile).toBe('BATON_INTENT_NOT_IN_PROFILE');
      } else {
        expect(early.error?.code, profile).toBe('RECOVERY_STOP_EVIDENCE_MISSING');
        expect(stopped.run.pause.code, profile).toBe('ORCHESTRATION_LIFECYCLE_RECOVERY_INCOMPLETE');
        expect(stopped.run.pause.message, profile).toContain(`baton task ${TASK_ID} recover-started releases the delegation`);
        expect(recovered, profile).toMatchObject({ status: 'running', error: null, run: { pause: null, pendingDelegation: null } });
        expect(recovered.run.receipts.map((receipt: { status: string }) => receipt.status)).toEqual(['aborted']);
        expect(recovered.warnings.join('\n')).toContain('was recovered from the stop of child child-1');
      }
      await tearDown();
    }
  }, 120_000);

  it("an upstream run file of the later shape (upstream's own fixture) is read under agent-infra-0.11.3, its reasoning effort refused naming the field; 0.9.2 refuses its schemaVersion as before", async () => {
    const upstream = fs.readFileSync(path.resolve(__dirname, '../fixtures/upstream/codex-unsupported-pause-v2.json'), 'utf8');
    for (const profile of ['agent-infra-0.9.2', 'agent-infra-0.11.3']) {
      const dir = await setUp();
      await choose(profile);
      fs.writeFileSync(path.join(dir, 'orchestration.json'), upstream);
      const shown = await task([TASK_ID, 'status']);
      const begun = await task([TASK_ID, 'begin-or-resume']);
      if (profile === 'agent-infra-0.9.2') {
        expect(shown.error.message, profile).toMatch(/orchestration\.json has unsupported schemaVersion 2$/);
        expect(begun.error.code, profile).toBe('ORCHESTRATION_STATE_INVALID');
      } else {
        expect(shown, profile).toMatchObject({
          status: 'paused',
          error: null,
          run: { pause: { code: 'ORCHESTRATION_CLIENT_UNSUPPORTED' } },
        });
        expect(begun.error.code, profile).toBe('ORCHESTRATION_MODEL_POLICY_INVALID');
        expect(begun.error.message, profile).toContain('modelPolicy.executor.reasoningEffort');
      }
      expect(fs.readFileSync(path.join(dir, 'orchestration.json'), 'utf8'), profile).toBe(upstream);
      await tearDown();
    }
  }, 120_000);

  it('model separation: begin-or-resume needs the policy; a reviewer Codex reports on the executor model is refused', async () => {
    const dir = await setUp();
    await choose('agent-infra-0.11.3');
    expect((await task([TASK_ID, 'begin-or-resume'])).error.code).toBe('ORCHESTRATION_MODEL_POLICY_REQUIRED');
    const same = await task([TASK_ID, 'begin-or-resume', '--executor-model', 'm', '--reviewer-model', 'm']);
    expect(same.error).toEqual({
      code: 'ORCHESTRATION_MODEL_SEPARATION_REQUIRED',
      message: 'using the same executor and reviewer model requires a reason',
    });
    expect((await task([TASK_ID, 'begin-or-resume', ...POLICY])).run.modelPolicy).toEqual({
      executor: 'gpt-exec',
      reviewer: 'gpt-review',
      sameModelReason: null,
    });
    writeArtifact(dir, 'analysis.md', '# Analysis\n', 60);
    const prepared = await task([TASK_ID, 'prepare', '--client', 'codex']);
    expect(prepared.run.pendingDelegation.requestedModel).toBe('gpt-review');
    const started = await task(taskArgv(nativeStart({ client: 'codex', role: 'reviewer', actualModel: 'gpt-exec' })));
    expect(started.status).toBe('paused');
    expect(started.run.pause.code).toBe('ORCHESTRATION_MODEL_SEPARATION_REQUIRED');
    expect(started.run.pause.message).toContain('Set model = "gpt-review" in .codex/agents/agent-infra-lifecycle-reviewer.toml');
  }, 60_000);

  it('the 0.9.2 profile keeps the result of begin-or-resume without a policy as before', async () => {
    await setUp();
    await choose('agent-infra-0.9.2');
    const begun = await task([TASK_ID, 'begin-or-resume']);
    expect(begun.error).toBeNull();
    expect(begun.run).not.toHaveProperty('modelPolicy');
    expect(Object.keys(begun.run)).toEqual([
      'schemaVersion',
      'taskId',
      'runId',
      'status',
      'nextStage',
      'stepCount',
      'maxSteps',
      'baseline',
      'pendingDelegation',
      'receipts',
      'pause',
      'commitAuthorization',
      'createdAt',
      'updatedAt',
    ]);
  }, 60_000);
});
