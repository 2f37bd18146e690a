import * as z from 'zod/mini';
import '../core/zodEnglish.ts';
import { profileFile } from '../core/profiles/file.ts';
import { nodeRunFiles } from '../core/taskLayout.ts';
import { describeSchemaError } from '../core/runSchema.ts';
import type { TokenCounts } from '../core/stageCost.ts';

// What the user says tokens cost (docs/run-view.md "Prices"): a table in the repository's baton
// record, `.agents/baton.json`, under `prices`: a currency and, per model, the price of a million
// tokens of each kind. baton never guesses one: a model without a price, or a kind of token it
// used without one, is shown as tokens only.
//
//   { "profile": "agent-infra-0.9.2",
//     "prices": { "currency": "USD",
//                 "perMillionTokens": { "claude-sonnet-4-5": { "input": 3, "output": 15, "cacheRead": 0.3, "cacheCreation": 3.75 } } } }

const price = z.number().check(z.refine((value) => Number.isFinite(value) && value >= 0, 'expected a price of 0 or more'));
const modelPriceSchema = z.strictObject({
  input: price,
  output: price,
  cacheRead: z.optional(price),
  cacheCreation: z.optional(price),
});
export const priceTableSchema = z.strictObject({
  currency: z.string().check(z.minLength(1), z.maxLength(12)),
  perMillionTokens: z.record(z.string().check(z.minLength(1)), modelPriceSchema),
});

export type PriceTable = z.infer<typeof priceTableSchema>;

export type PriceRead = { ok: true; prices: PriceTable | null } | { ok: false; message: string };

/** The repository's price table; none (`prices: null`) when the record has no `prices`; an invalid one says why. */
export function readPriceTable(repoRoot: string, readText: (file: string) => string | null = nodeRunFiles.readText): PriceRead {
  const file = profileFile(repoRoot);
  let value: unknown;
  try {
    const text = readText(file);
    if (text === null) return { ok: true, prices: null };
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `${file}: ${(error as Error).message}` };
  }
  const prices = typeof value === 'object' && value !== null ? (value as { prices?: unknown }).prices : undefined;
  if (prices === undefined) return { ok: true, prices: null };
  const parsed = priceTableSchema.safeParse(prices);
  return parsed.success
    ? { ok: true, prices: parsed.data }
    : { ok: false, message: `${file} "prices": ${describeSchemaError(parsed.error)}` };
}

const KINDS = ['input', 'output', 'cacheRead', 'cacheCreation'] as const;

/** What `tokens` of `model` cost by the table; null when the table gives no price for a kind of token it used. */
export function priceOf(prices: PriceTable | null, model: string, tokens: TokenCounts): number | null {
  const entry = prices?.perMillionTokens[model];
  if (!entry) return null;
  let total = 0;
  for (const kind of KINDS) {
    if (tokens[kind] === 0) continue;
    const perMillion = entry[kind];
    if (perMillion === undefined) return null;
    total += (tokens[kind] * perMillion) / 1_000_000;
  }
  return total;
}
