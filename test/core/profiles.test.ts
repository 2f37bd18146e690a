import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PROFILE, LATER_PROFILE, PROFILE_NAMES, parseProfileName, profileRules } from '../../src/core/profile.ts';
import { PROFILE_FILE, ProfileError, profileRecordText, readRepositoryProfile } from '../../src/core/profiles/file.ts';
import { TASK_ID, TASK_ID_2, engineHarness, readRun, useTaskPerTest, writeTask } from '../support/fixtures.ts';
import type { Fixture } from '../support/fixtures.ts';

// The lifecycle profiles (src/core/profile.ts): one engine, whose later upstream behaviours are rules
// switched by the profile. One block per rule; each runs under both profiles.

let fixture: Fixture;
let dir: string;
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
    });
    expect(profileRules(LATER_PROFILE)).toEqual({
      name: 'agent-infra-0.11.3',
      pausedRunReleasesGuard: true,
      activationDeadlineMs: 60_000,
      modelSeparation: true,
      recoveryFromEvidence: true,
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
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID_2 });
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
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID });
    await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    const claim = await h.apply({
      intent: 'claim-spawn',
      taskRef: 'auto',
      client: 'claude-code',
      nativeAgent: 'agent-infra-lifecycle-executor',
      toolCallId: 'toolu_1',
    });
    expect(claim.error).toBeNull();
    return h;
  }
  const start = {
    intent: 'hook-start',
    taskRef: 'auto',
    client: 'claude-code',
    nativeAgent: 'agent-infra-lifecycle-executor',
    childId: 'child-1',
    parentId: 'parent-1',
    spawnMode: 'fresh',
  } as const;

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

  it('0.9.2: no deadline is recorded, and a start an hour later activates', async () => {
    await claimed('agent-infra-0.9.2');
    expect(readRun(dir).pendingDelegation).not.toHaveProperty('activationDeadlineAt');
    const late = engineHarness(fixture, { profile: 'agent-infra-0.9.2', now: '2026-01-01T01:00:00.000Z' });
    expect((await late.apply(start)).error).toBeNull();
    expect(readRun(dir).pendingDelegation?.status).toBe('activated');
  });
});
