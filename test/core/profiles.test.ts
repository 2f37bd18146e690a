import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PROFILE, LATER_PROFILE, PROFILE_NAMES, parseProfileName, profileRules } from '../../src/core/profile.ts';
import { PROFILE_FILE, ProfileError, profileRecordText, readRepositoryProfile } from '../../src/core/profiles/file.ts';
import { listRuns } from '../../src/runs/runList.ts';
import {
  TASK_ID,
  TASK_ID_2,
  claimEvent,
  engineHarness,
  fakeFingerprinter,
  readRun,
  useTaskPerTest,
  writeArtifact,
  writeTask,
} from '../support/fixtures.ts';
import type { Fixture } from '../support/fixtures.ts';
import { preparedReceiptRecord, runRecord } from '../support/runRecords.ts';
import { claimSpawn, completeStage, nativeStart, nativeStop } from '../support/engineEvents.ts';

// The lifecycle profiles (src/core/profile.ts): one engine, whose later upstream behaviours are rules
// switched by the profile. One block per rule; each runs under both profiles.

let fixture: Fixture;
let dir: string;
/** A model policy: required by the later profile, ignored (with a warning) under 0.9.2. */
const policy = { executorModel: 'gpt-exec', reviewerModel: 'gpt-review' };
useTaskPerTest((made) => ({ fixture, dir } = made));

describe('profiles', () => {
  it('the default is agent-infra-0.9.2, every later rule off; the later profile has each on', () => {
    expect(PROFILE_NAMES).toEqual(['agent-infra-0.9.2', 'agent-infra-0.11.3']);
    expect(DEFAULT_PROFILE).toBe('agent-infra-0.9.2');
    expect(profileRules()).toEqual({
      name: 'agent-infra-0.9.2',
      pausedRunReleasesGuard: false,
      activationDeadlineMs: null,
      modelSeparation: false,
      recoveryFromEvidence: false,
      laterUpstreamRuns: false,
      reviewerVendorPolicy: false,
    });
    expect(profileRules(LATER_PROFILE)).toEqual({
      name: 'agent-infra-0.11.3',
      pausedRunReleasesGuard: true,
      activationDeadlineMs: 60_000,
      modelSeparation: true,
      recoveryFromEvidence: true,
      laterUpstreamRuns: true,
      reviewerVendorPolicy: true,
    });
  });

  it('an unknown profile is BATON_PROFILE_INVALID naming the known ones', () => {
    expect(parseProfileName('agent-infra-0.10.0', '--profile')).toEqual({
      ok: false,
      code: 'BATON_PROFILE_INVALID',
      message: '--profile: unknown profile "agent-infra-0.10.0"; baton knows agent-infra-0.9.2 and agent-infra-0.11.3',
    });
    expect(parseProfileName(LATER_PROFILE, '--profile')).toEqual({ ok: true, name: LATER_PROFILE });
  });

  it('the repository records its profile in .agents/baton.json; none is the default, a bad one is refused', async () => {
    expect(readRepositoryProfile(fixture.root)).toBe(DEFAULT_PROFILE);
    const file = path.join(fixture.root, PROFILE_FILE);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, profileRecordText(LATER_PROFILE));
    expect(readRepositoryProfile(fixture.root)).toBe(LATER_PROFILE);
    fs.writeFileSync(file, '{"profile":"agent-infra-9"}');
    expect(() => readRepositoryProfile(fixture.root)).toThrow(ProfileError);
    // The engine changes nothing under a profile it cannot read.
    const result = await engineHarness(fixture).apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    expect(result.error?.code).toBe('BATON_PROFILE_INVALID');
    expect(result.error?.message).toContain('unknown profile "agent-infra-9"');
    expect(fs.existsSync(path.join(dir, 'orchestration.json'))).toBe(false);
  });
});

describe('rule pausedRunReleasesGuard (agent-infra #828)', () => {
  async function pausedOther(profile: typeof DEFAULT_PROFILE) {
    writeTask(fixture, TASK_ID_2);
    const h = engineHarness(fixture, { profile });
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, ...policy });
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID_2, ...policy });
    expect((await h.apply({ intent: 'prepare', taskRef: TASK_ID_2, client: 'codex' })).status).toBe('running');
    await h.apply({ intent: 'pause', taskRef: TASK_ID_2, code: 'HUMAN', message: 'wait', recoverable: true });
    return h;
  }

  it('0.9.2: a paused run with a pending delegation still blocks every other task', async () => {
    const h = await pausedOther('agent-infra-0.9.2');
    const blocked = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    expect(blocked.error).toEqual({
      code: 'ORCHESTRATION_DELEGATION_BUSY',
      message: 'the repository already has a pending lifecycle delegation',
    });
  });

  it('later profile: paused run releases the guard; a running one still holds it', async () => {
    const h = await pausedOther(LATER_PROFILE);
    const freed = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    expect(freed.error).toBeNull();
    expect(readRun(dir).pendingDelegation?.status).toBe('prepared');
    // The other task, resumed once its delegation is gone, is blocked by this running one.
    await h.apply({ intent: 'abort', taskRef: TASK_ID_2 });
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID_2 });
    const blocked = await h.apply({ intent: 'prepare', taskRef: TASK_ID_2, client: 'codex' });
    expect(blocked.error?.code).toBe('ORCHESTRATION_DELEGATION_BUSY');
  });
});

describe('rule activationDeadlineMs (agent-infra #854, #870)', () => {
  const claimedAt = '2026-01-01T00:00:00.000Z';
  async function claimed(profile: typeof DEFAULT_PROFILE) {
    const h = engineHarness(fixture, { profile, ids: ['run-1', 'receipt-1'], now: claimedAt });
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, ...policy });
    await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    const claim = await h.apply(claimSpawn('toolu_1'));
    expect(claim.error).toBeNull();
    return h;
  }
  const start = nativeStart();

  it('later profile: the spawn claim sets activationDeadlineAt 60 s on; a start within it activates', async () => {
    await claimed(LATER_PROFILE);
    expect(readRun(dir).pendingDelegation?.activationDeadlineAt).toBe('2026-01-01T00:01:00.000Z');
    const late = engineHarness(fixture, { profile: LATER_PROFILE, now: '2026-01-01T00:01:00.000Z' });
    expect((await late.apply(start)).error).toBeNull();
    expect(readRun(dir).pendingDelegation?.status).toBe('activated');
  });

  it('later profile: a start after the deadline → DELEGATION_ACTIVATION_TIMEOUT, the delegation released, the run going on', async () => {
    await claimed(LATER_PROFILE);
    const late = engineHarness(fixture, { profile: LATER_PROFILE, now: '2026-01-01T00:01:00.001Z' });
    const result = await late.apply(start);
    expect(result.error?.code).toBe('DELEGATION_ACTIVATION_TIMEOUT');
    expect(result.error?.message).toMatch(
      /^delegation receipt-1 activation evidence arrived after its deadline \(2026-01-01T00:01:00.000Z\)/,
    );
    const run = readRun(dir);
    expect(run.status).toBe('running');
    expect(run.pendingDelegation).toBeNull();
    expect(run.receipts.map((receipt: { status: string }) => receipt.status)).toEqual(['aborted']);
    // Released: the next delegation can be prepared at once.
    expect((await late.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' })).error).toBeNull();
  });

  it('later profile: recover-prepared releases a delegation not activated by its deadline, with upstream codes before it may', async () => {
    await claimed(LATER_PROFILE);
    const recover = { intent: 'recover-prepared', taskRef: TASK_ID } as const;
    const early = await engineHarness(fixture, { profile: LATER_PROFILE, now: '2026-01-01T00:01:00.000Z' }).apply(recover);
    expect(early.error).toEqual({
      code: 'ORCHESTRATION_PREPARED_RECOVERY_EARLY',
      message: 'prepared receipt activation deadline has not elapsed: delegation receipt-1 may still start until 2026-01-01T00:01:00.000Z',
    });
    // Work nobody measured since the receipt was prepared: refused, naming it.
    const drifted = engineHarness(fixture, {
      profile: LATER_PROFILE,
      now: '2026-01-01T00:01:00.001Z',
      fingerprinter: fakeFingerprinter({ capture: () => 'after-tree', diff: () => ['src/app.ts'] }),
    });
    const drift = await drifted.apply(recover);
    expect(drift.error?.code).toBe('ORCHESTRATION_PREPARED_RECOVERY_DRIFT');
    expect(drift.error?.message).toContain('workspace changed after delegation preparation (src/app.ts)');
    expect(readRun(dir).pendingDelegation?.status).toBe('prepared');
    const late = engineHarness(fixture, { profile: LATER_PROFILE, now: '2026-01-01T00:01:00.001Z' });
    const released = await late.apply(recover);
    expect(released).toMatchObject({ status: 'running', changed: true, error: null });
    const run = readRun(dir);
    expect(run).toMatchObject({ status: 'running', pause: null, nextStage: null, pendingDelegation: null });
    expect(run.receipts.map((receipt: { id: string; status: string }) => [receipt.id, receipt.status])).toEqual([['receipt-1', 'aborted']]);
    // Nothing left to recover; the next delegation is prepared at once.
    expect((await late.apply(recover)).error).toEqual({
      code: 'ORCHESTRATION_DELEGATION_MISSING',
      message: 'no pending delegation exists',
    });
    expect((await late.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' })).error).toBeNull();
  });

  it('later profile: recover-prepared refuses an activated delegation (ORCHESTRATION_PREPARED_RECOVERY_UNSAFE)', async () => {
    await claimed(LATER_PROFILE);
    const h = engineHarness(fixture, { profile: LATER_PROFILE, now: '2026-01-01T00:00:30.000Z' });
    expect((await h.apply(start)).error).toBeNull();
    const later = engineHarness(fixture, { profile: LATER_PROFILE, now: '2026-01-01T00:05:00.000Z' });
    expect((await later.apply({ intent: 'recover-prepared', taskRef: TASK_ID })).error).toEqual({
      code: 'ORCHESTRATION_PREPARED_RECOVERY_UNSAFE',
      message: 'only a never-activated prepared receipt can recover: delegation receipt-1 is activated',
    });
    expect(readRun(dir).pendingDelegation?.status).toBe('activated');
  });

  it('0.9.2: recover-prepared is not an intent of the profile; abort is the way out', async () => {
    await claimed('agent-infra-0.9.2');
    const late = engineHarness(fixture, { profile: 'agent-infra-0.9.2', now: '2026-01-01T01:00:00.000Z' });
    const result = await late.apply({ intent: 'recover-prepared', taskRef: TASK_ID });
    expect(result.error?.code).toBe('BATON_INTENT_NOT_IN_PROFILE');
    expect(result.error?.message).toContain('recover-prepared belongs to profile agent-infra-0.11.3');
    expect(readRun(dir).pendingDelegation?.status).toBe('prepared');
  });

  it('0.9.2: no deadline is recorded, and a start an hour later activates', async () => {
    await claimed('agent-infra-0.9.2');
    expect(readRun(dir).pendingDelegation).not.toHaveProperty('activationDeadlineAt');
    const late = engineHarness(fixture, { profile: 'agent-infra-0.9.2', now: '2026-01-01T01:00:00.000Z' });
    expect((await late.apply(start)).error).toBeNull();
    expect(readRun(dir).pendingDelegation?.status).toBe('activated');
  });
});

describe('rule modelSeparation (agent-infra #783): model separation', () => {
  it('later profile: begin-or-resume requires a policy, with upstream codes and messages', async () => {
    const h = engineHarness(fixture, { profile: LATER_PROFILE, ids: ['run-1'] });
    const cases: Array<[Record<string, string>, string, string]> = [
      [{}, 'ORCHESTRATION_MODEL_POLICY_REQUIRED', 'executor and reviewer model identities are required'],
      [{ executorModel: 'm' }, 'ORCHESTRATION_MODEL_POLICY_REQUIRED', 'executor and reviewer model identities are required'],
      [
        { executorModel: 'm', reviewerModel: 'm' },
        'ORCHESTRATION_MODEL_SEPARATION_REQUIRED',
        'using the same executor and reviewer model requires a reason',
      ],
      [
        { ...policy, sameModelReason: 'why' },
        'ORCHESTRATION_MODEL_POLICY_INVALID',
        'same-model reason must be null when executor and reviewer models differ',
      ],
    ];
    for (const [given, code, message] of cases) {
      const result = await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, ...given });
      expect(result.error, JSON.stringify(given)).toEqual({ code, message });
    }
    expect(fs.existsSync(path.join(dir, 'orchestration.json'))).toBe(false);
    const begun = await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, ...policy });
    expect(begun.run?.modelPolicy).toEqual({ executor: 'gpt-exec', reviewer: 'gpt-review', sameModelReason: null });
    const other = await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, executorModel: 'a', reviewerModel: 'b' });
    expect(other.error?.code).toBe('ORCHESTRATION_MODEL_POLICY_MISMATCH');
    // Resuming without the policy again is fine: the run keeps its own.
    expect((await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID })).error).toBeNull();
    // One model for both, with a reason.
    writeTask(fixture, TASK_ID_2);
    const same = await h.apply({
      intent: 'begin-or-resume',
      taskRef: TASK_ID_2,
      executorModel: 'm',
      reviewerModel: 'm',
      sameModelReason: 'one model here',
    });
    expect(same.run?.modelPolicy).toEqual({ executor: 'm', reviewer: 'm', sameModelReason: 'one model here' });
  });

  it("later profile: prepare requests the role's model, and refuses another", async () => {
    const h = engineHarness(fixture, { profile: LATER_PROFILE, ids: ['run-1', 'receipt-1'] });
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, ...policy });
    const wrong = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'codex', requestedModel: 'gpt-review' });
    expect(wrong.error).toEqual({
      code: 'ORCHESTRATION_REQUESTED_MODEL_MISMATCH',
      message: 'requested model does not match the persisted executor model',
    });
    expect((await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'codex' })).error).toBeNull();
    expect(readRun(dir).pendingDelegation?.requestedModel).toBe('gpt-exec');
  });

  it("later profile: route's next carries requestedModel, the role's model of the policy; 0.9.2's next has no such field", async () => {
    const later = engineHarness(fixture, { profile: LATER_PROFILE });
    // No run yet: nothing to request.
    expect((await later.apply({ intent: 'route', taskRef: TASK_ID })).next?.requestedModel).toBeNull();
    await later.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, ...policy });
    expect((await later.apply({ intent: 'route', taskRef: TASK_ID })).next).toMatchObject({ role: 'executor', requestedModel: 'gpt-exec' });
    writeArtifact(dir, 'analysis.md', '# Analysis\n', 60);
    expect((await later.apply({ intent: 'route', taskRef: TASK_ID })).next).toMatchObject({
      role: 'reviewer',
      requestedModel: 'gpt-review',
    });
    const old = await engineHarness(fixture, { profile: DEFAULT_PROFILE }).apply({ intent: 'route', taskRef: TASK_ID });
    expect(old.next).toEqual({
      action: 'review-analysis',
      role: 'reviewer',
      stage: 'review-analysis',
      round: 1,
      artifact: 'review-analysis.md',
    });
  });

  async function reviewerPrepared(profile: typeof DEFAULT_PROFILE, client: 'codex' | 'claude-code') {
    writeArtifact(dir, 'analysis.md', '# Analysis\n', 60);
    const h = engineHarness(fixture, { profile, ids: ['run-1', 'receipt-1'] });
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, ...policy });
    expect((await h.apply({ intent: 'prepare', taskRef: TASK_ID, client })).next?.role).toBe('reviewer');
    return h;
  }
  const reviewerStart = (actualModel: string) =>
    ({
      intent: 'hook-start',
      taskRef: 'auto',
      client: 'codex',
      nativeAgent: 'agent-infra-lifecycle-reviewer',
      childId: 'child-1',
      parentId: 'parent-1',
      spawnMode: 'fresh',
      actualModel,
      fallbackReason: 'the profile sets it',
    }) as const;

  it("later profile: Codex reports the reviewer on the executor's model → refused, naming the setting to change", async () => {
    const h = await reviewerPrepared(LATER_PROFILE, 'codex');
    await h.apply(reviewerStart('gpt-exec'));
    const run = readRun(dir);
    expect(run.status).toBe('paused');
    expect(run.pause?.code).toBe('ORCHESTRATION_MODEL_SEPARATION_REQUIRED');
    expect(run.pause?.message).toContain('runs on gpt-exec (reported by its client at SubagentStart)');
    expect(run.pause?.message).toContain('Set model = "gpt-review" in .codex/agents/agent-infra-lifecycle-reviewer.toml');
    expect(run.pendingDelegation?.status).toBe('prepared');
  });

  it('later profile: the reviewer on its own model activates', async () => {
    const h = await reviewerPrepared(LATER_PROFILE, 'codex');
    expect((await h.apply({ ...reviewerStart('gpt-review'), fallbackReason: undefined })).error).toBeNull();
    expect(readRun(dir).pendingDelegation?.actualModel).toBe('gpt-review');
  });

  it("later profile: Claude Code's spawning call asking for the executor's model is refused at the claim", async () => {
    const h = await reviewerPrepared(LATER_PROFILE, 'claude-code');
    const refused = await h.apply(claimEvent('claude-code', 'reviewer', 'gpt-exec'));
    expect(refused.error?.code).toBe('ORCHESTRATION_MODEL_SEPARATION_REQUIRED');
    expect(refused.error?.message).toContain('(asked by the spawning call, or set by its agent profile)');
    expect(refused.error?.message).toContain(
      'Set model: gpt-review in the frontmatter of .claude/agents/agent-infra-lifecycle-reviewer.md',
    );
    expect(readRun(dir).pendingDelegation?.spawnClaim).toBeUndefined();
    expect((await h.apply(claimEvent('claude-code', 'reviewer', 'gpt-review'))).error).toBeNull();
  });

  it('0.9.2: no policy is asked for or kept, and a reviewer on any model activates', async () => {
    const h = await reviewerPrepared('agent-infra-0.9.2', 'codex');
    const run = readRun(dir);
    expect(run).not.toHaveProperty('modelPolicy');
    expect(run.pendingDelegation?.requestedModel).toBeNull();
    expect((await h.apply(reviewerStart('gpt-exec'))).error).toBeNull();
    expect(readRun(dir).pendingDelegation?.status).toBe('activated');
  });
});

describe('run files across profiles', () => {
  it('a run written under the later profile is read under 0.9.2 without loss, and back', async () => {
    const later = engineHarness(fixture, { profile: LATER_PROFILE, ids: ['run-1', 'receipt-1'] });
    await later.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, ...policy });
    await later.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    await later.apply(claimSpawn('toolu_1'));
    const written = readRun(dir);
    expect(written.modelPolicy).toEqual({ executor: 'gpt-exec', reviewer: 'gpt-review', sameModelReason: null });
    // A 0.9.2 worker applies the next event: every later field is kept where it was.
    const old = engineHarness(fixture, { profile: 'agent-infra-0.9.2' });
    await old.apply(nativeStart());
    const after = readRun(dir);
    expect(after.modelPolicy).toEqual(written.modelPolicy);
    expect(after.pendingDelegation?.activationDeadlineAt).toBe(written.pendingDelegation?.activationDeadlineAt);
    expect(Object.keys(after)).toEqual(Object.keys(written));
    // And the later profile reads it back, policy in force.
    const back = await later.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, executorModel: 'x', reviewerModel: 'y' });
    expect(back.error?.code).toBe('ORCHESTRATION_MODEL_POLICY_MISMATCH');
  });

  it('a run written under 0.9.2 is read under the later profile: it keeps no policy until begin-or-resume gives one', async () => {
    const old = engineHarness(fixture, { profile: 'agent-infra-0.9.2', ids: ['run-1'] });
    await old.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    const later = engineHarness(fixture, { profile: LATER_PROFILE, ids: ['receipt-1'] });
    const resumed = await later.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    expect(resumed.error).toBeNull();
    expect(resumed.run).not.toHaveProperty('modelPolicy');
    const adopted = await later.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, ...policy });
    expect(adopted.run?.modelPolicy).toEqual({ executor: 'gpt-exec', reviewer: 'gpt-review', sameModelReason: null });
    expect(adopted.warnings).toContain('the run had no model policy (written under agent-infra-0.9.2); it now keeps the one given');
  });

  it('a later upstream policy shape (per-role model and reasoning effort) is an error naming the field; 0.9.2 reads it as before', async () => {
    // The shape of upstream's second policy (docs/differences.md "Profiles"), written by hand.
    const file = path.join(dir, 'orchestration.json');
    const upstream = runRecord({
      modelPolicy: { executor: { model: 'm1', reasoningEffort: 'high' }, reviewer: { model: 'm2', reasoningEffort: 'high' } },
    });
    fs.writeFileSync(file, `${JSON.stringify(upstream, null, 2)}\n`);
    const later = await engineHarness(fixture, { profile: LATER_PROFILE }).apply({ intent: 'prepare', taskRef: TASK_ID, client: 'codex' });
    expect(later.error?.code).toBe('ORCHESTRATION_MODEL_POLICY_INVALID');
    expect(later.error?.message).toMatch(
      /^orchestration\.json modelPolicy\.executor\.reasoningEffort: profile agent-infra-0\.11\.3 honours/,
    );
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(upstream);
    const old = await engineHarness(fixture, { profile: 'agent-infra-0.9.2' }).apply({
      intent: 'prepare',
      taskRef: TASK_ID,
      client: 'codex',
    });
    expect(old.error).toBeNull();
    expect(readRun(dir).modelPolicy).toEqual(upstream.modelPolicy);
  });
});

describe('rule laterUpstreamRuns: an upstream run file of the later shape (test/fixtures/upstream)', () => {
  const UPSTREAM = path.resolve(__dirname, '../fixtures/upstream/codex-unsupported-pause-v2.json');
  const file = () => path.join(dir, 'orchestration.json');
  function place(edit: (run: Record<string, any>) => void = () => {}): string {
    const run = JSON.parse(fs.readFileSync(UPSTREAM, 'utf8'));
    edit(run);
    const text = edit.length === 0 ? fs.readFileSync(UPSTREAM, 'utf8') : `${JSON.stringify(run, null, 2)}\n`;
    fs.writeFileSync(file(), text);
    return text;
  }

  it('later profile: status reads it as it is; what baton honours works (its pause, abort), its reasoning effort is refused naming the field', async () => {
    const text = place();
    const h = engineHarness(fixture, { profile: LATER_PROFILE });
    const shown = await h.apply({ intent: 'status', taskRef: TASK_ID });
    expect(shown).toMatchObject({ status: 'paused', error: null, run: { schemaVersion: 2, runId: 'run-codex-unsupported' } });
    expect(shown.run).toEqual(JSON.parse(text));
    // A policy of one model and one reasoning effort per role: refused, naming the field, never dropped.
    for (const event of [
      { intent: 'begin-or-resume', taskRef: TASK_ID },
      { intent: 'route', taskRef: TASK_ID },
    ] as const) {
      const refused = await h.apply(event);
      expect(refused.error?.code, event.intent).toBe('ORCHESTRATION_MODEL_POLICY_INVALID');
      expect(refused.error?.message, event.intent).toMatch(/^orchestration\.json modelPolicy\.executor\.reasoningEffort: /);
    }
    expect(fs.readFileSync(file(), 'utf8')).toBe(text);
    // Its pause is honoured: prepare needs a running run; nothing is pending, so abort says so.
    expect((await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'codex' })).error?.code).toBe('ORCHESTRATION_RUN_NOT_RUNNING');
    expect((await h.apply({ intent: 'abort', taskRef: TASK_ID })).error?.code).toBe('ORCHESTRATION_DELEGATION_MISSING');
    const paused = await h.apply({ intent: 'pause', taskRef: TASK_ID, code: 'HUMAN', message: 'look at it', recoverable: true });
    expect(paused).toMatchObject({ status: 'paused', error: null });
    const kept = JSON.parse(fs.readFileSync(file(), 'utf8'));
    expect(kept).toMatchObject({
      schemaVersion: 2,
      pause: { code: 'HUMAN' },
      modelPolicySource: { client: 'codex' },
      completionEvidence: null,
    });
    expect(Object.keys(kept)).toEqual(Object.keys(JSON.parse(text)));
  });

  it('later profile: each later field baton cannot honour is an error naming it, and the file is left unchanged', async () => {
    const cases: [string, (run: Record<string, any>) => void][] = [
      ['recoveryHistory', (run) => run.recoveryHistory.push({ code: 'CLIENT_CAPABILITY_ENABLED' })],
      ['completionEvidence', (run) => (run.completionEvidence = { kind: 'reviewed-head-clean' })],
      [
        'pendingDelegation.workspaceSnapshotScope',
        (run) => {
          run.status = 'running';
          run.pause = null;
          run.pendingDelegation = { ...receiptOf(run), workspaceSnapshotScope: 'task' };
        },
      ],
      [
        'pendingDelegation.requestedReasoningEffort',
        (run) => {
          run.status = 'running';
          run.pause = null;
          run.pendingDelegation = { ...receiptOf(run), requestedReasoningEffort: 'high' };
        },
      ],
    ];
    for (const [field, edit] of cases) {
      const text = place(edit);
      const result = await engineHarness(fixture, { profile: LATER_PROFILE }).apply({ intent: 'abort', taskRef: TASK_ID });
      expect(result.error?.code, field).toBe('ORCHESTRATION_STATE_INVALID');
      expect(result.error?.message, field).toMatch(
        new RegExp(
          `^orchestration\\.json ${field.replace('.', '\\.')}: profile agent-infra-0\\.11\\.3 reads this later upstream run but cannot honour`,
        ),
      );
      expect(fs.readFileSync(file(), 'utf8'), field).toBe(text);
    }
  });

  it('the run list reads it as the repository profile does: a paused run under the later profile, corrupt under 0.9.2', async () => {
    place();
    const profileFile = path.join(fixture.root, PROFILE_FILE);
    fs.mkdirSync(path.dirname(profileFile), { recursive: true });
    fs.writeFileSync(profileFile, profileRecordText(LATER_PROFILE));
    expect((await listRuns(fixture.root)).map((row) => [row.taskId, row.status])).toEqual([[TASK_ID, 'paused']]);
    fs.writeFileSync(profileFile, profileRecordText(DEFAULT_PROFILE));
    const [row] = await listRuns(fixture.root);
    expect(row).toMatchObject({ taskId: TASK_ID, status: 'corrupt', error: `${file()} has unsupported schemaVersion 2` });
  });

  it('0.9.2: the file is an unsupported schemaVersion, as before', async () => {
    place();
    const result = await engineHarness(fixture, { profile: 'agent-infra-0.9.2' }).apply({ intent: 'status', taskRef: TASK_ID });
    expect(result.error).toEqual({
      code: 'ORCHESTRATION_STATE_INVALID',
      message: `${file()} has unsupported schemaVersion 2`,
    });
  });
});

/** A prepared receipt of `run`, in baton's shape (the fields upstream's later receipts add are set by each case). */
function receiptOf(run: Record<string, any>) {
  return preparedReceiptRecord({ taskId: run.taskId, runId: run.runId, requestedModel: 'executor-model', createdAt: run.createdAt });
}

describe('rule recoveryFromEvidence (agent-infra #993, #994)', () => {
  const T0 = '2026-01-01T00:00:00.000Z';
  const LATER = '2026-01-01T01:00:00.000Z';
  async function completedWithoutStop(profile: typeof DEFAULT_PROFILE) {
    const h = engineHarness(fixture, { profile, ids: ['run-1', 'receipt-1'], now: T0 });
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, ...policy });
    await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    const start = nativeStart();
    expect((await h.apply(start)).error).toBeNull();
    writeArtifact(dir, 'analysis.md', '# Analysis\n');
    const completed = await h.apply(completeStage());
    expect(completed.error).toBeNull();
    const receipt = readRun(dir).pendingDelegation;
    expect(receipt?.status).toBe('stage-completed');
    // The worker's reconcile job for the stop that did not come (docs/architecture.md "Reconciliation").
    const later = engineHarness(fixture, { profile, now: LATER });
    const reconciled = await later.apply({
      intent: 'reconcile',
      taskRef: TASK_ID,
      receiptId: 'receipt-1',
      kind: 'sealed',
      since: receipt?.stageCompletedAt ?? '',
      graceMs: 600_000,
    });
    expect(reconciled.error).toBeNull();
    return later;
  }

  it('0.9.2: a completed stage whose stop never came is sealed by the worker after the stop grace', async () => {
    await completedWithoutStop('agent-infra-0.9.2');
    const run = readRun(dir);
    expect(run.status).toBe('running');
    expect(run.pendingDelegation?.status).toBe('sealed');
  });

  it('later profile: no seal without the stop: ORCHESTRATION_LIFECYCLE_RECOVERY_INCOMPLETE, lifted by the stop itself', async () => {
    const later = await completedWithoutStop(LATER_PROFILE);
    const paused = readRun(dir);
    expect(paused.status).toBe('paused');
    expect(paused.pause?.code).toBe('ORCHESTRATION_LIFECYCLE_RECOVERY_INCOMPLETE');
    expect(paused.pause?.message).toContain('recovers a delegation only from its completion and its stop');
    expect(paused.pendingDelegation?.status).toBe('stage-completed');
    const stopped = await later.apply(nativeStop());
    expect(stopped.error).toBeNull();
    const sealed = readRun(dir);
    expect(sealed.status).toBe('running');
    expect(sealed.pause).toBeNull();
    expect(sealed.pendingDelegation?.status).toBe('sealed');
    expect((await later.apply({ intent: 'advance', taskRef: TASK_ID })).status).toBe('running');
  });
});

describe('recover-started (agent-infra #993, #994): recovery from positive evidence', () => {
  const start = nativeStart();
  const stop = nativeStop();
  const recover = { intent: 'recover-started', taskRef: TASK_ID } as const;

  async function started(profile: typeof DEFAULT_PROFILE) {
    const h = engineHarness(fixture, { profile, ids: ['run-1', 'receipt-1'], now: '2026-01-01T00:00:00.000Z' });
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, ...policy });
    await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    expect((await h.apply(start)).error).toBeNull();
    return h;
  }

  it('later profile: a child that stops before completing its stage is recorded and pauses the run; recover-started releases the delegation', async () => {
    const h = await started(LATER_PROFILE);
    expect((await h.apply(stop)).error).toBeNull();
    const paused = readRun(dir);
    expect(paused.status).toBe('paused');
    expect(paused.pause?.code).toBe('ORCHESTRATION_LIFECYCLE_RECOVERY_INCOMPLETE');
    expect(paused.pause?.message).toContain('child child-1 stopped at 2026-01-01T00:00:00.000Z without completing its stage');
    expect(paused.pendingDelegation).toMatchObject({ status: 'activated', childStoppedAt: '2026-01-01T00:00:00.000Z' });
    const recovered = await h.apply(recover);
    expect(recovered).toMatchObject({ status: 'running', changed: true, error: null });
    const run = readRun(dir);
    expect(run).toMatchObject({ status: 'running', pause: null, nextStage: null, pendingDelegation: null });
    expect(run.receipts.map((receipt: { id: string; status: string }) => [receipt.id, receipt.status])).toEqual([['receipt-1', 'aborted']]);
    // Nothing left to recover; the stage goes to a fresh child.
    expect((await h.apply(recover)).error).toEqual({ code: 'ORCHESTRATION_DELEGATION_MISSING', message: 'no pending delegation exists' });
    expect((await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' })).error).toBeNull();
  });

  it('later profile: never from quiet: a child that has not stopped is RECOVERY_STOP_EVIDENCE_MISSING, and nothing changes', async () => {
    const h = await started(LATER_PROFILE);
    const before = fs.readFileSync(path.join(dir, 'orchestration.json'), 'utf8');
    const refused = await h.apply(recover);
    expect(refused.error?.code).toBe('RECOVERY_STOP_EVIDENCE_MISSING');
    expect(refused.error?.message).toMatch(
      /^matching lifecycle stop evidence is missing: child child-1 of delegation receipt-1 has not stopped/,
    );
    expect(fs.readFileSync(path.join(dir, 'orchestration.json'), 'utf8')).toBe(before);
    // A client reporting the child gone (TaskStop) is not its stop either: the run pauses as stalled, still unrecovered.
    await h.apply({ intent: 'child-gone', taskRef: 'auto', client: 'claude-code', childId: 'child-1', evidence: 'TaskStop' });
    expect(readRun(dir).pause?.code).toBe('BATON_DELEGATION_STALLED');
    expect((await h.apply(recover)).error?.code).toBe('RECOVERY_STOP_EVIDENCE_MISSING');
    expect(readRun(dir).pendingDelegation?.status).toBe('activated');
  });

  it('later profile: a prepared delegation, or a stop while another pause holds the run, is ORCHESTRATION_RECOVERY_UNSAFE', async () => {
    const h = engineHarness(fixture, { profile: LATER_PROFILE, ids: ['run-1', 'receipt-1'] });
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, ...policy });
    await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    const prepared = await h.apply(recover);
    expect(prepared.error?.code).toBe('ORCHESTRATION_RECOVERY_UNSAFE');
    expect(prepared.error?.message).toContain('recover-prepared releases it');
    expect((await h.apply(start)).error).toBeNull();
    await h.apply({ intent: 'pause', taskRef: TASK_ID, code: 'HUMAN', message: 'wait', recoverable: true });
    expect((await h.apply(stop)).error).toBeNull();
    const run = readRun(dir);
    expect(run.pause?.code).toBe('HUMAN');
    expect(run.pendingDelegation?.childStoppedAt).toBeTruthy();
    expect((await h.apply(recover)).error).toEqual({
      code: 'ORCHESTRATION_RECOVERY_UNSAFE',
      message: `activated recovery cannot replace an unrelated orchestration pause (HUMAN): resolve it, or baton task ${TASK_ID} abort --reason "…"`,
    });
  });

  it('0.9.2: recover-started is not an intent of the profile, and a stop before the completion pauses as before', async () => {
    const h = await started('agent-infra-0.9.2');
    await h.apply(stop);
    const run = readRun(dir);
    expect(run.pause?.code).toBe('DELEGATION_STATE_INVALID');
    expect(run.pendingDelegation).not.toHaveProperty('childStoppedAt');
    const result = await h.apply(recover);
    expect(result.error?.code).toBe('BATON_INTENT_NOT_IN_PROFILE');
    expect(result.error?.message).toContain('recover-started belongs to profile agent-infra-0.11.3');
    expect(readRun(dir).pendingDelegation?.status).toBe('activated');
  });
});

describe('no lock in the task directory (agent-infra #790)', () => {
  it('under both profiles a delegation leaves only task.md and orchestration.json in the task directory', async () => {
    for (const profile of PROFILE_NAMES) {
      const h = engineHarness(fixture, { profile });
      await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, ...policy });
      await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
      await h.apply({
        intent: 'claim-spawn',
        taskRef: 'auto',
        client: 'claude-code',
        nativeAgent: 'agent-infra-lifecycle-executor',
        toolCallId: `toolu_${profile}`,
      });
      // baton serializes a repository's events in its worker (docs/architecture.md); its own files are under .git/baton/.
      expect(fs.readdirSync(dir).sort(), profile).toEqual(['orchestration.json', 'task.md']);
      await h.apply({ intent: 'abort', taskRef: TASK_ID });
      fs.rmSync(path.join(dir, 'orchestration.json'));
    }
  });
});
