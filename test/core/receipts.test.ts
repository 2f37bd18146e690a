import fs from 'node:fs';
import { describe, expect, it } from 'vitest';

import {
  abortDelegation,
  activateDelegation,
  claimDelegationSpawn,
  releaseDelegationSpawn,
  extendSealedDelegation,
  completeDelegationStage,
  consumeDelegation,
  managedDelegationRole,
  prepareDelegation,
  reviewerAllowedPaths,
  sealDelegation,
} from '../../src/core/receipts.ts';
import type { ActivationEvent, PrepareDelegationInput } from '../../src/core/receipts.ts';
import type { DelegationReceipt, ReceiptOutcome } from '../../src/core/types.ts';
import { EXAMPLE_TASK_DIR } from '../support/fixturePaths.ts';
import { RECEIPT_KEYS, preparedReceiptRecord } from '../support/runRecords.ts';

const EXAMPLE_RUN = `${EXAMPLE_TASK_DIR}/orchestration.json`;
const TASK = 'TASK-20260101-000001';
const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:01:00.000Z';
const T2 = '2026-01-01T00:02:00.000Z';
const T3 = '2026-01-01T00:03:00.000Z';

const ids = { id: () => 'delegation-1', now: () => T0 };
const at = (time: string) => ({ now: () => time });

function input(overrides: Partial<PrepareDelegationInput> = {}): PrepareDelegationInput {
  return {
    taskId: TASK,
    runId: 'run-1',
    role: 'reviewer',
    stage: 'review-code',
    round: 1,
    artifact: 'review-code.md',
    client: 'codex',
    requestedModel: 'review-model',
    beforeFingerprint: 'before-tree',
    ...overrides,
  };
}

function start(overrides: Partial<ActivationEvent> = {}): ActivationEvent {
  return {
    nativeAgent: 'agent-infra-lifecycle-reviewer',
    childId: 'child-1',
    parentId: 'parent-1',
    spawnMode: 'fresh',
    actualModel: 'review-model',
    ...overrides,
  };
}

/** The receipt of a successful outcome (fails the test otherwise). */
function receiptOf(outcome: ReceiptOutcome): DelegationReceipt {
  if (!outcome.ok) throw new Error(`expected success, got ${outcome.code}: ${outcome.message}`);
  return outcome.receipt;
}

/** The outcome of a refused receipt transition. */
function refused(code: string, message: string) {
  return { ok: false, code, message };
}

function prepared(overrides: Partial<PrepareDelegationInput> = {}): DelegationReceipt {
  return prepareDelegation(input(overrides), ids);
}

function activated(overrides: Partial<PrepareDelegationInput> = {}): DelegationReceipt {
  const receipt = prepared(overrides);
  const agent = receipt.role === 'executor' ? 'agent-infra-lifecycle-executor' : 'agent-infra-lifecycle-reviewer';
  return receiptOf(activateDelegation(receipt, start({ nativeAgent: agent, actualModel: receipt.requestedModel }), at(T1)));
}

function completed(overrides: Partial<PrepareDelegationInput> = {}): DelegationReceipt {
  const receipt = activated(overrides);
  const agent = receipt.client === 'claude-code' ? 'claude' : receipt.client;
  return receiptOf(
    completeDelegationStage(receipt, { stage: receipt.stage, round: receipt.round, artifact: receipt.artifact, agent }, at(T0)),
  );
}

function sealed(overrides: Partial<PrepareDelegationInput> = {}): DelegationReceipt {
  const receipt = completed(overrides);
  return receiptOf(sealDelegation(receipt, { childId: 'child-1', exitCode: 0, afterFingerprint: 'after-tree', changedPaths: [] }, at(T2)));
}

describe('managedDelegationRole', () => {
  it('maps exactly the two managed agents', () => {
    expect(managedDelegationRole('agent-infra-lifecycle-executor')).toBe('executor');
    expect(managedDelegationRole('agent-infra-lifecycle-reviewer')).toBe('reviewer');
    for (const other of [
      'general-purpose',
      'agent-infra-lifecycle-',
      'agent-infra-lifecycle-Executor',
      ' agent-infra-lifecycle-executor',
      'toString',
      '__proto__',
      '',
      null,
      undefined,
    ]) {
      expect(managedDelegationRole(other)).toBeNull();
    }
  });
});

describe('prepareDelegation', () => {
  it('creates a prepared receipt in agent-infra key order', () => {
    const receipt = prepared();
    expect(receipt).toEqual(
      preparedReceiptRecord({
        taskId: TASK,
        role: 'reviewer',
        stage: 'review-code',
        artifact: 'review-code.md',
        requestedModel: 'review-model',
        beforeFingerprint: 'before-tree',
        id: 'delegation-1',
        createdAt: T0,
      }),
    );
    expect(Object.keys(receipt)).toEqual(RECEIPT_KEYS);
    expect(Object.isFrozen(receipt)).toBe(true);
    expect(Object.isFrozen(receipt.changedPaths)).toBe(true);
  });

  it('serialises exactly like the example orchestration.json pending delegation', () => {
    const example = JSON.parse(fs.readFileSync(EXAMPLE_RUN, 'utf8')) as { pendingDelegation: DelegationReceipt };
    const pending = example.pendingDelegation;
    const receipt = prepareDelegation(
      {
        // Deliberately scrambled input order: the output order must not depend on it.
        beforeFingerprint: pending.beforeFingerprint,
        requestedModel: pending.requestedModel,
        client: pending.client,
        artifact: pending.artifact,
        round: pending.round,
        stage: pending.stage,
        role: pending.role,
        runId: pending.runId,
        taskId: pending.taskId,
      },
      { id: () => pending.id, now: () => pending.createdAt },
    );
    expect(JSON.stringify(receipt, null, 2)).toBe(JSON.stringify(pending, null, 2));
  });

  it('does not copy unknown input fields', () => {
    const receipt = prepareDelegation({ ...input(), extra: 'x' } as PrepareDelegationInput, ids);
    expect(Object.keys(receipt)).toEqual(RECEIPT_KEYS);
  });
});

describe('the delegation lifecycle', () => {
  it('28: prepare → activate → complete → seal → consume, then consuming again is a replay', () => {
    const receipt = prepared();
    const active = receiptOf(activateDelegation(receipt, start(), at(T1)));
    expect(active).toMatchObject({
      status: 'activated',
      parentId: 'parent-1',
      childId: 'child-1',
      spawnMode: 'fresh',
      actualModel: 'review-model',
      modelFallbackReason: null,
      activatedAt: T1,
    });
    const done = receiptOf(
      completeDelegationStage(active, { stage: 'review-code', round: 1, artifact: 'review-code.md', agent: 'codex' }, at(T1)),
    );
    // baton: the completion time starts the stop grace (docs/architecture.md "Reconciliation").
    expect(done).toMatchObject({ status: 'stage-completed', agent: 'codex', stageCompletedAt: T1 });
    const changedPaths = [`.agents/workspace/active/${TASK}/review-code.md`];
    const seal = receiptOf(sealDelegation(done, { childId: 'child-1', exitCode: 0, afterFingerprint: 'after-tree', changedPaths }, at(T2)));
    expect(seal).toMatchObject({ status: 'sealed', afterFingerprint: 'after-tree', changedPaths, sealedAt: T2 });
    const consumed = receiptOf(consumeDelegation(seal, at(T3)));
    expect(consumed).toEqual({
      ...receipt,
      status: 'consumed',
      parentId: 'parent-1',
      childId: 'child-1',
      spawnMode: 'fresh',
      actualModel: 'review-model',
      agent: 'codex',
      afterFingerprint: 'after-tree',
      changedPaths,
      activatedAt: T1,
      sealedAt: T2,
      consumedAt: T3,
      stageCompletedAt: T1,
    });
    // 0.9.2's keys in its order, then baton's.
    expect(Object.keys(consumed)).toEqual([...RECEIPT_KEYS, 'stageCompletedAt']);
    expect(consumeDelegation(consumed, at(T3))).toEqual(refused('DELEGATION_REPLAY', 'delegation delegation-1 was already consumed'));
  });

  it('every transition returns a new frozen receipt and leaves its input untouched', () => {
    const receipt = prepared();
    const copy = JSON.stringify(receipt);
    const outcome = activateDelegation(receipt, start(), at(T1));
    expect(JSON.stringify(receipt)).toBe(copy);
    expect(Object.isFrozen(outcome)).toBe(true);
    const active = receiptOf(outcome);
    expect(active).not.toBe(receipt);
    expect(Object.isFrozen(active)).toBe(true);
    const paths = ['a'];
    const seal = receiptOf(
      sealDelegation(
        completed({ role: 'executor', stage: 'code', artifact: 'code.md' }),
        { childId: 'child-1', exitCode: 0, afterFingerprint: 'x', changedPaths: paths },
        at(T2),
      ),
    );
    paths.push('b');
    expect(seal.changedPaths).toEqual(['a']);
    expect(Object.isFrozen(seal.changedPaths)).toBe(true);
  });

  it("keeps the key order and the unknown keys of a receipt read back from a file (as upstream's spread)", () => {
    const scrambled = {
      future: { nested: [1] },
      ...Object.fromEntries(Object.entries(prepared()).reverse()),
    } as unknown as DelegationReceipt;
    const activated = receiptOf(activateDelegation(scrambled, start(), at(T1)));
    expect(Object.keys(activated)).toEqual(Object.keys(scrambled));
    expect((activated as unknown as { future: unknown }).future).toEqual({ nested: [1] });
    expect(activated.status).toBe('activated');
  });
});

describe('activateDelegation', () => {
  it('29: an unmanaged subagent is ignored', () => {
    expect(activateDelegation(prepared(), start({ nativeAgent: 'general-purpose' }), at(T1))).toEqual(
      refused('DELEGATION_IGNORED', "subagent 'general-purpose' is not lifecycle-managed"),
    );
  });

  it('30: childId === parentId → DELEGATION_IDENTITY_INVALID', () => {
    expect(activateDelegation(prepared(), start({ childId: 'same', parentId: 'same' }), at(T1))).toEqual(
      refused('DELEGATION_IDENTITY_INVALID', 'native parent/child identity does not match the prepared delegation'),
    );
  });

  it.each([
    ['an empty parent id', { parentId: '' }],
    ['an empty child id', { childId: '' }],
  ])('30: %s → DELEGATION_IDENTITY_INVALID', (_label, overrides) => {
    expect(activateDelegation(prepared(), start(overrides), at(T1))).toMatchObject({ ok: false, code: 'DELEGATION_IDENTITY_INVALID' });
  });

  it('30: a parent id different from a recorded one → DELEGATION_IDENTITY_INVALID', () => {
    const withParent = { ...prepared(), parentId: 'parent-0' } as DelegationReceipt;
    expect(activateDelegation(withParent, start(), at(T1))).toMatchObject({ ok: false, code: 'DELEGATION_IDENTITY_INVALID' });
    expect(activateDelegation(withParent, start({ parentId: 'parent-0' }), at(T1))).toMatchObject({ ok: true });
  });

  it('30: spawn mode fork → DELEGATION_FORK_FORBIDDEN', () => {
    expect(activateDelegation(prepared(), start({ spawnMode: 'fork' }), at(T1))).toEqual(
      refused('DELEGATION_FORK_FORBIDDEN', "spawn mode 'fork' is not fresh"),
    );
  });

  it('30: an executor agent on a reviewer receipt → DELEGATION_ROLE_MISMATCH', () => {
    expect(activateDelegation(prepared(), start({ nativeAgent: 'agent-infra-lifecycle-executor' }), at(T1))).toEqual(
      refused('DELEGATION_ROLE_MISMATCH', 'managed role executor does not match reviewer'),
    );
  });

  it('31: a missing actual model is recorded as null', () => {
    const { actualModel: _omitted, ...event } = start();
    expect(receiptOf(activateDelegation(prepared(), event, at(T1))).actualModel).toBeNull();
    expect(receiptOf(activateDelegation(prepared(), start({ actualModel: null }), at(T1))).actualModel).toBeNull();
    expect(receiptOf(activateDelegation(prepared(), start({ actualModel: '' }), at(T1))).actualModel).toBeNull();
  });

  it('31: a different actual model without a reason → DELEGATION_MODEL_FALLBACK_UNRECORDED', () => {
    expect(activateDelegation(prepared(), start({ actualModel: 'fallback-model' }), at(T1))).toEqual(
      refused('DELEGATION_MODEL_FALLBACK_UNRECORDED', 'actual model differs from requested model without a fallback reason'),
    );
    expect(activateDelegation(prepared(), start({ actualModel: 'fallback-model', modelFallbackReason: '' }), at(T1))).toMatchObject({
      ok: false,
      code: 'DELEGATION_MODEL_FALLBACK_UNRECORDED',
    });
  });

  it('31: a different actual model with a reason is recorded', () => {
    expect(
      receiptOf(activateDelegation(prepared(), start({ actualModel: 'fallback-model', modelFallbackReason: 'quota' }), at(T1))),
    ).toMatchObject({
      actualModel: 'fallback-model',
      modelFallbackReason: 'quota',
    });
  });

  it('31: an equal model is recorded; no requested model accepts any actual model', () => {
    expect(receiptOf(activateDelegation(prepared(), start(), at(T1))).actualModel).toBe('review-model');
    expect(receiptOf(activateDelegation(prepared({ requestedModel: null }), start({ actualModel: 'anything' }), at(T1))).actualModel).toBe(
      'anything',
    );
  });

  it('34: activating a non-prepared receipt → DELEGATION_STATE_INVALID', () => {
    expect(activateDelegation(activated(), start(), at(T2))).toEqual(
      refused('DELEGATION_STATE_INVALID', 'delegation delegation-1 is activated, expected prepared'),
    );
  });

  it('checks in §6.2 order: managed, state, role, identity, spawn mode, model', () => {
    const everythingWrong = start({
      nativeAgent: 'agent-infra-lifecycle-executor',
      childId: 'x',
      parentId: 'x',
      spawnMode: 'fork',
      actualModel: 'other',
    });
    expect(activateDelegation(activated(), { ...everythingWrong, nativeAgent: 'general-purpose' }, at(T1))).toMatchObject({
      code: 'DELEGATION_IGNORED',
    });
    expect(activateDelegation(activated(), everythingWrong, at(T1))).toMatchObject({ code: 'DELEGATION_STATE_INVALID' });
    expect(activateDelegation(prepared(), everythingWrong, at(T1))).toMatchObject({ code: 'DELEGATION_ROLE_MISMATCH' });
    expect(activateDelegation(prepared(), { ...everythingWrong, nativeAgent: 'agent-infra-lifecycle-reviewer' }, at(T1))).toMatchObject({
      code: 'DELEGATION_IDENTITY_INVALID',
    });
    expect(
      activateDelegation(prepared(), { ...everythingWrong, nativeAgent: 'agent-infra-lifecycle-reviewer', childId: 'c' }, at(T1)),
    ).toMatchObject({
      code: 'DELEGATION_FORK_FORBIDDEN',
    });
  });
});

describe('completeDelegationStage', () => {
  it('32: a claude-code receipt accepts agent claude (and claude-code)', () => {
    const receipt = activated({ client: 'claude-code' });
    const event = { stage: receipt.stage, round: receipt.round, artifact: receipt.artifact };
    expect(receiptOf(completeDelegationStage(receipt, { ...event, agent: 'claude' }, at(T0))).agent).toBe('claude');
    expect(receiptOf(completeDelegationStage(receipt, { ...event, agent: 'claude-code' }, at(T0))).agent).toBe('claude-code');
    expect(completeDelegationStage(receipt, { ...event, agent: 'codex' }, at(T0))).toEqual(
      refused('DELEGATION_AGENT_MISMATCH', "stage agent 'codex' does not match client 'claude-code'"),
    );
  });

  it('34: completing a prepared receipt → DELEGATION_STATE_INVALID', () => {
    expect(
      completeDelegationStage(prepared(), { stage: 'review-code', round: 1, artifact: 'review-code.md', agent: 'codex' }, at(T0)),
    ).toEqual(refused('DELEGATION_STATE_INVALID', 'delegation delegation-1 is prepared, expected activated'));
  });

  it.each([
    ['a wrong round', { stage: 'review-code', round: 2, artifact: 'review-code.md' }],
    ['a wrong stage', { stage: 'code', round: 1, artifact: 'review-code.md' }],
    ['a wrong artifact', { stage: 'review-code', round: 1, artifact: 'review-code-r2.md' }],
  ])('34: %s → DELEGATION_STAGE_MISMATCH', (_label, event) => {
    // Upstream's message, then the values expected and given (baton).
    expect(completeDelegationStage(activated(), { ...event, agent: 'codex' }, at(T0))).toEqual(
      refused(
        'DELEGATION_STAGE_MISMATCH',
        'stage completion identity does not match the active delegation ' +
          `(expected --stage review-code --round 1 --artifact review-code.md; given --stage ${event.stage} --round ${event.round} --artifact ${event.artifact})`,
      ),
    );
  });

  it('34: agent claude on a codex receipt → DELEGATION_AGENT_MISMATCH', () => {
    expect(
      completeDelegationStage(activated(), { stage: 'review-code', round: 1, artifact: 'review-code.md', agent: 'claude' }, at(T0)),
    ).toEqual(refused('DELEGATION_AGENT_MISMATCH', "stage agent 'claude' does not match client 'codex'"));
  });
});

describe('sealDelegation', () => {
  const stop = (overrides: Partial<{ childId: string; exitCode: number; changedPaths: string[] }> = {}) => ({
    childId: 'child-1',
    exitCode: 0,
    afterFingerprint: 'after-tree',
    changedPaths: [] as string[],
    ...overrides,
  });

  it('34: sealing before stage completion → DELEGATION_STATE_INVALID', () => {
    expect(sealDelegation(activated(), stop(), at(T2))).toEqual(
      refused('DELEGATION_STATE_INVALID', 'delegation delegation-1 is activated, expected stage-completed'),
    );
  });

  it('34: another child id or a non-zero exit code → DELEGATION_STOP_INVALID', () => {
    const expected = { ok: false, code: 'DELEGATION_STOP_INVALID', message: 'native stop identity or exit status is invalid' };
    expect(sealDelegation(completed(), stop({ childId: 'child-2' }), at(T2))).toEqual(expected);
    expect(sealDelegation(completed(), stop({ exitCode: 1 }), at(T2))).toEqual(expected);
  });

  it('28: a reviewer may change its artifact, task.md and orchestration.json', () => {
    const changedPaths = reviewerAllowedPaths({ taskId: TASK, artifact: 'review-code.md' });
    expect(changedPaths).toEqual([
      `.agents/workspace/active/${TASK}/review-code.md`,
      `.agents/workspace/active/${TASK}/task.md`,
      `.agents/workspace/active/${TASK}/orchestration.json`,
    ]);
    expect(receiptOf(sealDelegation(completed(), stop({ changedPaths: [...changedPaths] }), at(T2))).changedPaths).toEqual(changedPaths);
  });

  it.each([
    ['business code', 'src/index.ts'],
    ['another review artifact', `.agents/workspace/active/${TASK}/review-code-r2.md`],
    ['another task', '.agents/workspace/active/TASK-20260202-000002/task.md'],
    ['a path with a leading ./', `./.agents/workspace/active/${TASK}/task.md`],
    ['a backslash path', `.agents\\workspace\\active\\${TASK}\\task.md`],
  ])('a reviewer changing %s → DELEGATION_REVIEWER_WRITE_FORBIDDEN', (_label, forbidden) => {
    const allowed = `.agents/workspace/active/${TASK}/review-code.md`;
    expect(sealDelegation(completed(), stop({ changedPaths: [allowed, forbidden, 'later.ts'] }), at(T2))).toEqual(
      refused('DELEGATION_REVIEWER_WRITE_FORBIDDEN', `reviewer changed forbidden path '${forbidden}'`),
    );
  });

  it('34: an executor may change arbitrary paths', () => {
    const receipt = completed({ role: 'executor', stage: 'code', artifact: 'code.md' });
    const changedPaths = ['src/index.ts', 'package.json', `.agents/workspace/active/${TASK}/code.md`];
    expect(receiptOf(sealDelegation(receipt, stop({ changedPaths }), at(T2)))).toMatchObject({
      status: 'sealed',
      changedPaths,
      sealedAt: T2,
    });
  });
});

describe('consumeDelegation', () => {
  it('34: consuming a stage-completed receipt → DELEGATION_STATE_INVALID', () => {
    expect(consumeDelegation(completed(), at(T3))).toEqual(
      refused('DELEGATION_STATE_INVALID', 'delegation delegation-1 is stage-completed, expected sealed'),
    );
  });

  it('consumes a sealed receipt once', () => {
    const consumed = receiptOf(consumeDelegation(sealed(), at(T3)));
    expect(consumed).toMatchObject({ status: 'consumed', consumedAt: T3 });
    expect(consumeDelegation(consumed, at(T3))).toMatchObject({ ok: false, code: 'DELEGATION_REPLAY' });
  });
});

describe('abortDelegation (baton addition)', () => {
  it.each([
    ['prepared', prepared],
    ['activated', activated],
    ['stage-completed', completed],
    ['sealed', sealed],
  ] as const)('aborts a %s receipt without adding fields', (_status, make) => {
    const receipt = make();
    const aborted = receiptOf(abortDelegation(receipt, at(T3)));
    expect(aborted).toEqual({ ...receipt, status: 'aborted' });
    expect(Object.keys(aborted)).toEqual(Object.keys(receipt));
    expect(Object.isFrozen(aborted)).toBe(true);
  });

  it('a consumed receipt is a replay', () => {
    const consumed = receiptOf(consumeDelegation(sealed(), at(T3)));
    expect(abortDelegation(consumed, at(T3))).toEqual(refused('DELEGATION_REPLAY', 'delegation delegation-1 was already consumed'));
  });

  it.each(['aborted', 'expired'] as const)('an %s receipt cannot be aborted', (status) => {
    const receipt = { ...prepared(), status } as DelegationReceipt;
    expect(abortDelegation(receipt, at(T3))).toEqual(
      refused('DELEGATION_STATE_INVALID', `delegation delegation-1 is ${status}, expected prepared, activated, stage-completed or sealed`),
    );
  });

  it('an aborted receipt accepts no further transition', () => {
    const aborted = receiptOf(abortDelegation(activated(), at(T3)));
    expect(
      completeDelegationStage(aborted, { stage: 'review-code', round: 1, artifact: 'review-code.md', agent: 'codex' }, at(T0)),
    ).toMatchObject({
      code: 'DELEGATION_STATE_INVALID',
      message: 'delegation delegation-1 is aborted, expected activated',
    });
    expect(consumeDelegation(aborted, at(T3))).toMatchObject({
      code: 'DELEGATION_STATE_INVALID',
      message: 'delegation delegation-1 is aborted, expected sealed',
    });
    expect(activateDelegation(aborted, start(), at(T3))).toMatchObject({ code: 'DELEGATION_STATE_INVALID' });
  });
});

describe('claimDelegationSpawn (baton: PreToolUse spawn claim)', () => {
  it('one tool call claims a prepared delegation; the same call again is idempotent; another is refused', () => {
    const claimed = receiptOf(
      claimDelegationSpawn(prepared(), { nativeAgent: 'agent-infra-lifecycle-reviewer', toolCallId: 'toolu_1' }, at(T1)) as ReceiptOutcome,
    );
    expect(claimed.spawnClaim).toEqual({ toolCallId: 'toolu_1', claimedAt: T1 });
    expect(Object.keys(claimed).at(-1)).toBe('spawnClaim');
    expect(claimDelegationSpawn(claimed, { nativeAgent: 'agent-infra-lifecycle-reviewer', toolCallId: 'toolu_1' }, at(T2))).toEqual({
      ok: true,
      receipt: claimed,
      unchanged: true,
    });
    expect(claimDelegationSpawn(claimed, { nativeAgent: 'agent-infra-lifecycle-reviewer', toolCallId: 'toolu_2' }, at(T2))).toEqual(
      refused(
        'DELEGATION_SPAWN_CLAIMED',
        `delegation delegation-1 was already claimed by tool call toolu_1 at ${T1}; one prepared delegation starts one subagent`,
      ),
    );
    expect(claimDelegationSpawn(prepared(), { nativeAgent: 'agent-infra-lifecycle-executor', toolCallId: 'x' }, at(T1))).toMatchObject({
      code: 'DELEGATION_ROLE_MISMATCH',
    });
    expect(claimDelegationSpawn(activated(), { nativeAgent: 'agent-infra-lifecycle-reviewer', toolCallId: 'x' }, at(T1))).toMatchObject({
      code: 'DELEGATION_STATE_INVALID',
      message: 'delegation delegation-1 is activated, expected prepared',
    });
  });

  it('a receipt without a claim has no spawnClaim key (0.9.2 files stay byte-compatible)', () => {
    expect(Object.hasOwn(prepared(), 'spawnClaim')).toBe(false);
  });

  it('releasing the claim of a blocked tool call leaves the receipt as it was before the claim; only that call, only while prepared', () => {
    const claimed = receiptOf(
      claimDelegationSpawn(prepared(), { nativeAgent: 'agent-infra-lifecycle-reviewer', toolCallId: 'toolu_1' }, at(T1)) as ReceiptOutcome,
    );
    const released = receiptOf(releaseDelegationSpawn(claimed, { toolCallId: 'toolu_1' }));
    expect(released).toEqual(prepared());
    expect(Object.keys(released)).toEqual(Object.keys(prepared()));
    expect(
      receiptOf(
        claimDelegationSpawn(released, { nativeAgent: 'agent-infra-lifecycle-reviewer', toolCallId: 'toolu_2' }, at(T2)) as ReceiptOutcome,
      ).spawnClaim,
    ).toEqual({ toolCallId: 'toolu_2', claimedAt: T2 });
    expect(releaseDelegationSpawn(claimed, { toolCallId: 'toolu_9' })).toEqual(
      refused('ORCHESTRATION_DELEGATION_MISSING', 'delegation delegation-1 is not claimed by tool call toolu_9; nothing to release'),
    );
    expect(releaseDelegationSpawn(prepared(), { toolCallId: 'toolu_1' })).toMatchObject({ code: 'ORCHESTRATION_DELEGATION_MISSING' });
    expect(
      releaseDelegationSpawn({ ...activated(), spawnClaim: { toolCallId: 'toolu_1', claimedAt: T1 } }, { toolCallId: 'toolu_1' }),
    ).toMatchObject({
      code: 'DELEGATION_STATE_INVALID',
      message: 'delegation delegation-1 is activated, expected prepared',
    });
  });
});

describe('extendSealedDelegation (baton: later turns of a sealed child)', () => {
  it('a reviewer writing outside its allow-list in a later turn: upstream code and message', () => {
    expect(extendSealedDelegation(sealed(), { childId: 'child-1', afterFingerprint: 'later', changedPaths: ['src/app.js'] })).toEqual(
      refused('DELEGATION_REVIEWER_WRITE_FORBIDDEN', "reviewer changed forbidden path 'src/app.js'"),
    );
  });

  it("an executor's later turn extends the changed paths and the after-fingerprint, keeping the seal time", () => {
    const receipt = sealed({ role: 'executor', stage: 'code', artifact: 'code.md' });
    const extended = receiptOf(
      extendSealedDelegation(receipt, { childId: 'child-1', afterFingerprint: 'later', changedPaths: ['NOTES.md'] }),
    );
    expect(extended).toMatchObject({ status: 'sealed', afterFingerprint: 'later', changedPaths: ['NOTES.md'], sealedAt: T2 });
    expect(extendSealedDelegation(receipt, { childId: 'other', afterFingerprint: 'x', changedPaths: [] })).toMatchObject({
      code: 'DELEGATION_STOP_INVALID',
    });
    expect(extendSealedDelegation(completed(), { childId: 'child-1', afterFingerprint: 'x', changedPaths: [] })).toMatchObject({
      code: 'DELEGATION_STATE_INVALID',
    });
  });
});
