import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PROFILE, LATER_PROFILE } from '../../src/core/profile.ts';
import type { ProfileName } from '../../src/core/profile.ts';
import { PROFILE_FILE, profileRecordText, readRepositoryRecord } from '../../src/core/profiles/file.ts';
import { modelVendor, vendorOf } from '../../src/core/vendors.ts';
import { TASK_ID, claimEvent, engineHarness, readRun, startEvent, useTaskPerTest, writeArtifact } from '../support/fixtures.ts';
import type { EngineHarness, Fixture } from '../support/fixtures.ts';

// Issue 43, the reviewer-vendor policy (src/core/orchestration/vendorPolicy.ts): recorded beside the
// profile in .agents/baton.json, enforced by the engine under the later profile from the facts of the
// receipts: the executor's client and reported model against the reviewer's, at prepare, at the
// spawn claim and at activation. A headless review and a subagent one are the same receipt.

let fixture: Fixture;
let dir: string;
useTaskPerTest((made) => ({ fixture, dir } = made));

/** Model names of no known family: the vendor is the client's. */
const policy = { executorModel: 'exec-model', reviewerModel: 'review-model' };

function record(profile: ProfileName, reviewerVendor: unknown): void {
  const file = path.join(fixture.root, PROFILE_FILE);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, profileRecordText(profile, { reviewerVendor }));
}

/** The analysis done by a delegated `client` executor (activated on exec-model, sealed, consumed): the next stage is its review. */
async function analysedBy(client: 'codex' | 'claude-code', profile: ProfileName = LATER_PROFILE): Promise<EngineHarness> {
  const h = engineHarness(fixture, { ids: ['run-1', 'receipt-exec', 'receipt-review'] });
  expect((await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, ...(profile === LATER_PROFILE ? policy : {}) })).error).toBeNull();
  expect((await h.apply({ intent: 'prepare', taskRef: TASK_ID, client })).error).toBeNull();
  const started = await h.apply(
    startEvent(client, 'executor', 'child-exec', profile === LATER_PROFILE ? { actualModel: 'exec-model' } : {}),
  );
  expect(started.error).toBeNull();
  writeArtifact(dir, 'analysis.md', '# Analysis\n');
  const stageAgent = client === 'codex' ? 'codex' : 'claude';
  await h.apply({ intent: 'complete-stage', taskRef: TASK_ID, stage: 'analysis', round: 1, artifact: 'analysis.md', agent: stageAgent });
  await h.apply({ intent: 'hook-stop', taskRef: 'auto', client, nativeAgent: 'agent-infra-lifecycle-executor', childId: 'child-exec' });
  expect((await h.apply({ intent: 'advance', taskRef: TASK_ID })).error).toBeNull();
  return h;
}

describe('modelVendor, vendorOf: the vendor of a client running a model', () => {
  it("a model maker's client is its maker; Copilot CLI is the maker of the model's family or provider prefix, else github", () => {
    expect(modelVendor('claude-sonnet-4-5')).toBe('anthropic');
    expect(modelVendor('us.anthropic.claude-opus-4-1')).toBe('anthropic');
    expect(modelVendor('gpt-5-codex')).toBe('openai');
    expect(modelVendor('openai/o4-mini')).toBe('openai');
    expect(modelVendor('gemini-2.5-pro')).toBe('google');
    expect(modelVendor('exec-model')).toBeNull();
    expect(vendorOf('codex', 'exec-model')).toEqual({ vendor: 'openai', from: 'client' });
    // Claude Code runs Anthropic's models, whatever name it is given.
    expect(vendorOf('claude-code', 'gpt-5')).toEqual({ vendor: 'anthropic', from: 'client' });
    expect(vendorOf('copilot-cli', null)).toEqual({ vendor: 'github', from: 'client' });
    expect(vendorOf('copilot-cli', 'claude-sonnet-4-5')).toEqual({ vendor: 'anthropic', from: 'model' });
  });
});

describe('readRepositoryRecord: reviewerVendor beside the profile', () => {
  it('reads different, a client or a vendor; anything else is BATON_PROFILE_INVALID', () => {
    expect(readRepositoryRecord(fixture.root)).toEqual({ profile: DEFAULT_PROFILE, reviewerVendor: null });
    for (const value of ['different', 'codex', 'anthropic']) {
      record(LATER_PROFILE, value);
      expect(readRepositoryRecord(fixture.root)).toEqual({ profile: LATER_PROFILE, reviewerVendor: value });
    }
    record(LATER_PROFILE, 'same');
    expect(() => readRepositoryRecord(fixture.root)).toThrow(/unknown reviewer-vendor policy "same"; baton knows "different"/);
  });
});

describe('prepare, claim-spawn, hook-start under reviewerVendor (issue 43)', () => {
  it("prepare: reviewerVendor different refuses a review in the executor's vendor (BATON_REVIEWER_VENDOR_REQUIRED), nothing prepared; another vendor prepares", async () => {
    record(LATER_PROFILE, 'different');
    const h = await analysedBy('codex');
    expect(readRun(dir).receipts[0]).toMatchObject({ client: 'codex', status: 'consumed', vendor: 'openai' });
    const refused = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'codex' });
    expect(refused.error?.code).toBe('BATON_REVIEWER_VENDOR_REQUIRED');
    expect(refused.error?.message).toBe(
      `the review-analysis would run in openai, the vendor of its executor (delegation receipt-exec: codex on exec-model): codex on review-model (prepared for it); the repository's policy (${PROFILE_FILE} "reviewerVendor": "different") asks for a reviewer of another vendor; have another vendor review it: baton task ${TASK_ID} review --client claude-code; nothing was prepared`,
    );
    expect(readRun(dir).pendingDelegation).toBeNull();
    // Claude Code is another vendor.
    expect((await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' })).error).toBeNull();
    expect(readRun(dir).pendingDelegation).toMatchObject({ role: 'reviewer', client: 'claude-code', status: 'prepared' });
  });

  it("hook-start: a reviewer whose client reports a model of the executor's vendor pauses the run (BATON_REVIEWER_VENDOR_REQUIRED)", async () => {
    record(LATER_PROFILE, 'different');
    const h = await analysedBy('codex');
    // Copilot CLI serves several vendors' models: the model requested names none, so it prepares.
    expect((await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'copilot-cli' })).error).toBeNull();
    await h.apply(startEvent('copilot-cli', 'reviewer', 'child-review', { actualModel: 'gpt-5', fallbackReason: 'its default' }));
    const run = readRun(dir);
    expect(run).toMatchObject({ status: 'paused', pause: { code: 'BATON_REVIEWER_VENDOR_REQUIRED', recoverable: true } });
    expect(run.pause?.message).toContain('copilot-cli on gpt-5 (reported at its start)');
    expect(run.pause?.message).toContain(`child child-review does not count: stop it, then baton task ${TASK_ID} abort`);
    expect(run.pendingDelegation?.status).toBe('prepared');
  });

  it("claim-spawn: a reviewer spawn asking for a model of the executor's vendor is refused, nothing claimed", async () => {
    record(LATER_PROFILE, 'different');
    const h = await analysedBy('codex');
    await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'copilot-cli' });
    const refused = await h.apply(claimEvent('copilot-cli', 'reviewer', 'gpt-5'));
    expect(refused.error?.code).toBe('BATON_REVIEWER_VENDOR_REQUIRED');
    expect(refused.error?.message).toContain('(asked by the spawning call)');
    expect(readRun(dir).pendingDelegation?.spawnClaim).toBeUndefined();
    expect((await h.apply(claimEvent('copilot-cli', 'reviewer', 'claude-sonnet-4-5'))).error).toBeNull();
  });

  it('prepare: reviewerVendor naming a client refuses a review by any other client', async () => {
    record(LATER_PROFILE, 'codex');
    const h = await analysedBy('claude-code');
    const refused = await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' });
    expect(refused.error?.code).toBe('BATON_REVIEWER_VENDOR_REQUIRED');
    expect(refused.error?.message).toContain(`has reviews run by codex: baton task ${TASK_ID} review --client codex`);
    expect((await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'codex' })).error).toBeNull();
  });

  it('prepare: a review with no delegated executor (its artifact written before the run) has no vendor to compare and prepares', async () => {
    record(LATER_PROFILE, 'different');
    writeArtifact(dir, 'analysis.md', '# Analysis\n', 60);
    const h = engineHarness(fixture, { ids: ['run-1', 'receipt-review'] });
    await h.apply({ intent: 'begin-or-resume', taskRef: TASK_ID, ...policy });
    expect((await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' })).error).toBeNull();
  });

  it('agent-infra-0.9.2: a recorded reviewerVendor is not enforced and no vendor is recorded', async () => {
    record(DEFAULT_PROFILE, 'different');
    const h = await analysedBy('codex', DEFAULT_PROFILE);
    expect(readRun(dir).receipts[0]).not.toHaveProperty('vendor');
    expect((await h.apply({ intent: 'prepare', taskRef: TASK_ID, client: 'codex' })).error).toBeNull();
  });
});
