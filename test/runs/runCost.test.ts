import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StageCost } from '../../src/core/stageCost.ts';
import { unrecordedCost } from '../../src/core/stageCost.ts';
import type { DelegationReceipt, OrchestrationRun } from '../../src/core/types.ts';
import { formatRunCost, formatRunsCost } from '../../src/runs/costTable.ts';
import { priceOf, readPriceTable } from '../../src/runs/prices.ts';
import type { PriceTable } from '../../src/runs/prices.ts';
import { describeRunCost } from '../../src/runs/runCost.ts';

// What a run cost, from its receipts' figures: per round, stage, role, model and run, the review
// rounds that did not pass, and prices only from the user's table.

function cost(models: Array<[string, number, number, number, number, number]>, wallMs = 1000): StageCost {
  const list = models.map(([model, requests, input, output, cacheRead, cacheCreation]) => ({
    model,
    requests,
    input,
    output,
    cacheRead,
    cacheCreation,
  }));
  const sum = (key: 'input' | 'output' | 'cacheRead' | 'cacheCreation') => list.reduce((total, model) => total + model[key], 0);
  return {
    format: 'claude-code-transcript',
    file: '/t.jsonl',
    read: true,
    note: null,
    requests: list.reduce((total, model) => total + model.requests, 0),
    tokens: { input: sum('input'), output: sum('output'), cacheRead: sum('cacheRead'), cacheCreation: sum('cacheCreation') },
    models: list,
    firstAt: '2026-01-01T00:00:00.000Z',
    lastAt: new Date(Date.parse('2026-01-01T00:00:00.000Z') + wallMs).toISOString(),
    wallMs,
  };
}

let ids = 0;
function receipt(
  stage: DelegationReceipt['stage'],
  round: number,
  role: DelegationReceipt['role'],
  stageCost: StageCost | undefined,
): DelegationReceipt {
  ids += 1;
  return {
    taskId: 'TASK-20260101-000001',
    runId: 'run',
    role,
    stage,
    round,
    artifact: role === 'reviewer' ? `${stage}-r${round}.md` : `${stage}.md`,
    client: 'claude-code',
    requestedModel: null,
    beforeFingerprint: 'a',
    id: `r${ids}`,
    actualModel: null,
    modelFallbackReason: null,
    parentId: 'p',
    childId: `c${ids}`,
    spawnMode: 'fresh',
    agent: 'claude',
    status: 'consumed',
    afterFingerprint: 'b',
    changedPaths: [],
    createdAt: '2026-01-01T00:00:00.000Z',
    activatedAt: '2026-01-01T00:00:01.000Z',
    sealedAt: '2026-01-01T00:00:02.000Z',
    consumedAt: '2026-01-01T00:00:03.000Z',
    ...(stageCost ? { cost: stageCost } : {}),
  };
}

function runOf(receipts: DelegationReceipt[]): OrchestrationRun {
  return {
    schemaVersion: 1,
    taskId: 'TASK-20260101-000001',
    runId: 'run',
    status: 'running',
    nextStage: 'plan',
    stepCount: receipts.length,
    maxSteps: 24,
    baseline: 'a',
    pendingDelegation: null,
    receipts,
    pause: null,
    commitAuthorization: { issuedAt: null, consumedAt: null },
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
  };
}

const SONNET = 'claude-sonnet-4-5';
const PRICES: PriceTable = {
  currency: 'USD',
  perMillionTokens: { [SONNET]: { input: 3, output: 15, cacheRead: 0.3, cacheCreation: 3.75 } },
};

/** analysis r1, its review r1 (changes requested), analysis r2, its review r2 (approved, one request on another model). */
function twoRounds(): OrchestrationRun {
  return runOf([
    receipt('analysis', 1, 'executor', cost([[SONNET, 2, 1000, 100, 300, 40]])),
    receipt('review-analysis', 1, 'reviewer', cost([[SONNET, 1, 500, 50, 0, 0]], 2000)),
    receipt('analysis', 2, 'executor', cost([[SONNET, 3, 2000, 200, 600, 80]])),
    receipt(
      'review-analysis',
      2,
      'reviewer',
      cost([
        [SONNET, 1, 400, 40, 0, 0],
        ['claude-haiku-4-5', 1, 10, 1, 0, 0],
      ]),
    ),
  ]);
}

const verdicts: Record<string, string> = { 'review-analysis-r1.md': 'Changes Requested', 'review-analysis-r2.md': 'Approved' };

describe('describeRunCost', () => {
  it('sums per stage, role, model and run; the review rounds that did not pass; tokens only where the table has no price', () => {
    const run = twoRounds();
    const result = describeRunCost({ run, prices: PRICES, verdictOf: (r) => (r.role === 'reviewer' ? verdicts[r.artifact]! : null) });
    expect(result.rounds.map((round) => [round.stage, round.round, round.role, round.passed])).toEqual([
      ['analysis', 1, 'executor', null],
      ['review-analysis', 1, 'reviewer', false],
      ['analysis', 2, 'executor', null],
      ['review-analysis', 2, 'reviewer', true],
    ]);
    expect(result.byStage.map(({ stage, figures }) => [stage, figures.requests, figures.tokens.input])).toEqual([
      ['analysis', 5, 3000],
      ['review-analysis', 3, 910],
    ]);
    expect(result.byRole.map(({ role, figures }) => [role, figures.receipts, figures.wallMs])).toEqual([
      ['executor', 2, 2000],
      ['reviewer', 2, 3000],
    ]);
    expect(result.byModel.map(({ model, figures }) => [model, figures.requests])).toEqual([
      [SONNET, 7],
      ['claude-haiku-4-5', 1],
    ]);
    expect(result.byModel[0]!.figures.price).toBeCloseTo((3900 * 3 + 390 * 15 + 900 * 0.3 + 120 * 3.75) / 1e6, 12);
    expect(result.byModel[1]!.figures.price).toBeNull();
    // The failed review round: 500 input and 50 output of sonnet.
    expect(result.failedReviews).toMatchObject({ receipts: 1, requests: 1, tokens: { input: 500, output: 50 } });
    expect(result.failedReviews.price).toBeCloseTo((500 * 3 + 50 * 15) / 1e6, 12);
    // One model without a price: the run's price is not known, and says which.
    expect(result.total).toMatchObject({ receipts: 4, requests: 8, price: null, unpriced: ['claude-haiku-4-5'] });
    expect(result.total.tokens).toEqual({ input: 3910, output: 391, cacheRead: 900, cacheCreation: 120 });
  });

  it('without a price table: tokens only; a receipt without figures is counted as not recorded, with its note', () => {
    const run = runOf([
      receipt('analysis', 1, 'executor', cost([[SONNET, 2, 1000, 100, 0, 0]])),
      receipt('plan', 1, 'executor', unrecordedCost('codex-rollout', '/r.jsonl', 'no such file on the worker’s machine')),
      receipt('code', 1, 'executor', undefined),
    ]);
    const result = describeRunCost({ run, prices: null, verdictOf: () => null });
    expect(result.currency).toBeNull();
    expect(result.total).toMatchObject({ receipts: 3, unrecorded: 2, requests: 2, price: null });
    expect(result.rounds.map((round) => round.note)).toEqual([
      null,
      'no such file on the worker’s machine',
      'sealed before baton recorded costs, or not sealed yet',
    ]);
    const text = formatRunCost(result);
    expect(text).toContain('TASK-20260101-000001: 1.1k tokens (no prices: add them to .agents/baton.json, docs/run-view.md "Prices")');
    expect(text).not.toContain('USD');
    expect(text).toContain('not recorded: 2 of 3 rounds');
  });

  it('formatRunCost and formatRunsCost: the rounds with their figures, the sums, and one line per run', () => {
    const result = describeRunCost({
      run: twoRounds(),
      prices: PRICES,
      verdictOf: (r) => (r.role === 'reviewer' ? verdicts[r.artifact]! : null),
    });
    const text = formatRunCost(result);
    expect(text.split('\n')[2]).toMatch(
      /^ROUND\s+ROLE\s+STATUS\s+MODELS\s+REQ\s+INPUT\s+OUTPUT\s+CACHE-READ\s+CACHE-WRITE\s+WALL\s+PRICE\s+NOTE$/,
    );
    expect(text).toMatch(
      /review-analysis r1\s+reviewer\s+consumed\s+claude-sonnet-4-5\s+1\s+500\s+50\s+0\s+0\s+2\.0s\s+USD 0\.0023\s+Changes Requested/,
    );
    expect(text).toContain('review rounds that did not pass: 1 · 550 tokens · USD 0.0023');
    expect(text).toMatch(/review-analysis r2 .* no price: claude-haiku-4-5\s+Approved/);
    expect(formatRunsCost([result])).toMatch(
      /^TASK\s+ROUNDS\s+REQ\s+TOKENS\s+FAILED-REVIEWS\s+PRICE\nTASK-20260101-000001\s+4\s+8\s+5\.3k\s+550\s+no price: claude-haiku-4-5\n$/,
    );
  });
});

describe('readPriceTable', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  function repoWith(record: unknown): string {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-prices-'));
    dirs.push(root);
    if (record !== undefined) {
      fs.mkdirSync(path.join(root, '.agents'));
      fs.writeFileSync(path.join(root, '.agents', 'baton.json'), typeof record === 'string' ? record : JSON.stringify(record));
    }
    return root;
  }

  it('reads .agents/baton.json "prices"; none there is no table, a bad one says why', () => {
    expect(readPriceTable(repoWith(undefined))).toEqual({ ok: true, prices: null });
    expect(readPriceTable(repoWith({ profile: 'agent-infra-0.9.2' }))).toEqual({ ok: true, prices: null });
    expect(readPriceTable(repoWith({ profile: 'agent-infra-0.9.2', prices: PRICES }))).toEqual({ ok: true, prices: PRICES });
    const bad = readPriceTable(repoWith({ prices: { currency: 'USD', perMillionTokens: { m: { input: -1, output: 1 } } } }));
    expect(bad.ok === false && bad.message).toMatch(/baton\.json "prices": perMillionTokens\.m\.input: expected a price of 0 or more/);
    expect(readPriceTable(repoWith('{')).ok).toBe(false);
  });

  it('priceOf: a kind of token used without a price makes the price unknown, never a guess', () => {
    const table: PriceTable = { currency: 'EUR', perMillionTokens: { m: { input: 2, output: 10 } } };
    expect(priceOf(table, 'm', { input: 1_000_000, output: 100_000, cacheRead: 0, cacheCreation: 0 })).toBe(3);
    expect(priceOf(table, 'm', { input: 1, output: 1, cacheRead: 1, cacheCreation: 0 })).toBeNull();
    expect(priceOf(table, 'other', { input: 1, output: 1, cacheRead: 0, cacheCreation: 0 })).toBeNull();
  });
});
