import { NO_TOKENS, addTokens, totalTokens } from '../core/stageCost.ts';
import type { TokenCounts } from '../core/stageCost.ts';
import type { DelegationReceipt, OrchestrationRun } from '../core/types.ts';
import { DELEGATION_STAGES } from '../core/types.ts';
import { priceOf } from './prices.ts';
import type { PriceTable } from './prices.ts';

// What a run cost (docs/run-view.md "What a stage cost"): the figures its receipts hold (each read
// from the client's record at the seal, src/core/stageCost.ts), summed per round, stage, role, model
// and run, and the review rounds that did not pass. Priced only by the user's table (prices.ts):
// whatever it gives no price for is tokens only. Pure: the caller reads the files.

export type CostFigures = Readonly<{
  /** Receipts counted, and how many of them hold no figures (no record was read). */
  receipts: number;
  unrecorded: number;
  requests: number;
  tokens: TokenCounts;
  /** The children's wall time by their own records (not for a model: requests of several children interleave). */
  wallMs: number | null;
  /** By the price table; null when a model or a kind of token has no price there (then `unpriced` names the models). */
  price: number | null;
  unpriced: readonly string[];
}>;

export type RoundCost = Readonly<{
  receiptId: string;
  stage: string;
  round: number;
  role: string;
  status: string;
  client: string;
  models: readonly string[];
  /** Review rounds: the verdict, and false when it is not Approved (null: not a review, or no verdict). */
  verdict: string | null;
  passed: boolean | null;
  /** Why the receipt has no figures (the record's note), when it has none. */
  note: string | null;
  figures: CostFigures;
}>;

export type RunCost = Readonly<{
  taskId: string;
  currency: string | null;
  rounds: readonly RoundCost[];
  byStage: ReadonlyArray<Readonly<{ stage: string; figures: CostFigures }>>;
  byRole: ReadonlyArray<Readonly<{ role: string; figures: CostFigures }>>;
  byModel: ReadonlyArray<Readonly<{ model: string; figures: CostFigures }>>;
  /** The review rounds whose verdict was not Approved. */
  failedReviews: CostFigures;
  total: CostFigures;
}>;

const EMPTY: CostFigures = { receipts: 0, unrecorded: 0, requests: 0, tokens: NO_TOKENS, wallMs: null, price: 0, unpriced: [] };

function add(a: CostFigures, b: CostFigures): CostFigures {
  const unpriced = [...new Set([...a.unpriced, ...b.unpriced])];
  return {
    receipts: a.receipts + b.receipts,
    unrecorded: a.unrecorded + b.unrecorded,
    requests: a.requests + b.requests,
    tokens: addTokens(a.tokens, b.tokens),
    wallMs: a.wallMs === null ? b.wallMs : b.wallMs === null ? a.wallMs : a.wallMs + b.wallMs,
    price: a.price === null || b.price === null ? null : a.price + b.price,
    unpriced,
  };
}

function sum(list: readonly CostFigures[]): CostFigures {
  return list.reduce(add, EMPTY);
}

/** One model's part of a receipt, priced by the table. */
function modelFigures(prices: PriceTable | null, model: string, requests: number, tokens: TokenCounts): CostFigures {
  const price = totalTokens(tokens) === 0 ? 0 : priceOf(prices, model, tokens);
  return { receipts: 0, unrecorded: 0, requests, tokens, wallMs: null, price, unpriced: price === null ? [model] : [] };
}

function receiptFigures(receipt: DelegationReceipt, prices: PriceTable | null): CostFigures {
  const cost = receipt.cost;
  if (!cost?.read) return { ...EMPTY, receipts: 1, unrecorded: 1 };
  const models = sum(cost.models.map((model) => modelFigures(prices, model.model, model.requests, model)));
  return { ...models, receipts: 1, wallMs: cost.wallMs };
}

function groupBy<K extends string>(rounds: readonly RoundCost[], key: (round: RoundCost) => K, order: readonly K[] = []) {
  const groups = new Map<K, CostFigures[]>();
  for (const known of order) groups.set(known, []);
  for (const round of rounds) groups.set(key(round), [...(groups.get(key(round)) ?? []), round.figures]);
  return [...groups].filter(([, list]) => list.length > 0).map(([name, list]) => [name, sum(list)] as const);
}

export type RunCostInput = Readonly<{
  run: OrchestrationRun;
  prices: PriceTable | null;
  /** A review round's verdict (runView.ts reviewVerdict), null when unknown. */
  verdictOf(receipt: DelegationReceipt): string | null;
}>;

/** Every receipt of the run that went past activation (the pending one too), with what it cost. */
export function describeRunCost({ run, prices, verdictOf }: RunCostInput): RunCost {
  const receipts = [...run.receipts, ...(run.pendingDelegation ? [run.pendingDelegation] : [])].filter(
    (receipt) => receipt.activatedAt !== null || receipt.cost !== undefined,
  );
  const rounds: RoundCost[] = receipts.map((receipt) => {
    const verdict = verdictOf(receipt);
    return {
      receiptId: receipt.id,
      stage: receipt.stage,
      round: receipt.round,
      role: receipt.role,
      status: receipt.status,
      client: receipt.client,
      models: receipt.cost?.models.map((model) => model.model) ?? [],
      verdict,
      passed: receipt.role === 'reviewer' && verdict !== null ? verdict === 'Approved' : null,
      note: receipt.cost?.read ? null : (receipt.cost?.note ?? 'sealed before baton recorded costs, or not sealed yet'),
      figures: receiptFigures(receipt, prices),
    };
  });
  const byModel = new Map<string, CostFigures[]>();
  for (const receipt of receipts) {
    for (const model of receipt.cost?.read ? receipt.cost.models : []) {
      byModel.set(model.model, [...(byModel.get(model.model) ?? []), modelFigures(prices, model.model, model.requests, model)]);
    }
  }
  return {
    taskId: run.taskId,
    currency: prices?.currency ?? null,
    rounds,
    byStage: groupBy(rounds, (round) => round.stage, DELEGATION_STAGES).map(([stage, figures]) => ({ stage, figures })),
    byRole: groupBy(rounds, (round) => round.role, ['executor', 'reviewer']).map(([role, figures]) => ({ role, figures })),
    byModel: [...byModel].map(([model, list]) => ({ model, figures: sum(list) })),
    failedReviews: sum(rounds.filter((round) => round.passed === false).map((round) => round.figures)),
    total: sum(rounds.map((round) => round.figures)),
  };
}

/** `12.3k tokens` (all kinds), with the price when the table prices all of it: `12.3k tokens · USD 0.0421`. */
export function formatFigures(figures: CostFigures, currency: string | null): string {
  const tokens = `${compact(totalTokens(figures.tokens))} tokens`;
  const price =
    figures.price !== null && currency !== null && figures.receipts > figures.unrecorded
      ? ` · ${formatPrice(figures.price, currency)}`
      : '';
  return `${tokens}${price}`;
}

export function formatPrice(price: number, currency: string): string {
  return `${currency} ${price < 0.01 && price > 0 ? price.toPrecision(2) : price.toFixed(price < 100 ? 4 : 2)}`;
}

export function compact(count: number): string {
  if (count < 1_000) return String(count);
  if (count < 1_000_000) return `${(count / 1_000).toFixed(count < 10_000 ? 1 : 0)}k`;
  return `${(count / 1_000_000).toFixed(count < 10_000_000 ? 2 : 1)}M`;
}
