import * as z from 'zod/mini';
import './zodEnglish.ts';
import { USAGE_RECORD_FORMATS } from '../clients/facts.ts';
import type { UsageRecordFormat } from '../clients/facts.ts';

// What one delegated stage cost, as the client recorded it (docs/run-view.md "What a stage cost"):
// the tokens of the child's model requests, their models, how many requests, and how long the child
// worked by its own record. The worker reads the record at the seal (src/workers/stageCost.ts) and
// hands it to the engine as a fact (EngineDeps.stopCost); the engine stores it on the receipt
// (`cost`, a baton addition: absent in 0.9.2 files). A record that is missing or unreadable is
// noted (`read: false`, `note`), never fatal.

/** Tokens in the Anthropic API's terms: `input` excludes the cached input (`cacheRead`) and the input written to the cache. */
export type TokenCounts = Readonly<{ input: number; output: number; cacheRead: number; cacheCreation: number }>;

/** A client's record of one child's requests: its format and file (on the receipt from SubagentStart). */
export type UsageRecordRef = Readonly<{ format: UsageRecordFormat; file: string }>;

export const usageRecordRefSchema = z.looseObject({ format: z.enum(USAGE_RECORD_FORMATS), file: z.string() });

export type ModelCost = TokenCounts & Readonly<{ model: string; requests: number }>;

export type StageCost = Readonly<{
  /** The record's format (which client's file), and its path as the stop payload named it (null: none named). */
  format: UsageRecordFormat | null;
  file: string | null;
  /** Whether the record was read; when not, `note` says why and the figures are zero. */
  read: boolean;
  /** Why it was not read, or what of it was skipped (unparsable lines); null when nothing to say. */
  note: string | null;
  requests: number;
  tokens: TokenCounts;
  /** Per model, in the order the record first names each. */
  models: readonly ModelCost[];
  /** The record's first and last entry of the child, and the time between (the child's wall time). */
  firstAt: string | null;
  lastAt: string | null;
  wallMs: number | null;
}>;

const count = z.number().check(z.refine((value) => Number.isInteger(value) && value >= 0, 'expected a count'));
const tokenCountsSchema = z.looseObject({ input: count, output: count, cacheRead: count, cacheCreation: count });

export const stageCostSchema = z.looseObject({
  format: z.nullable(z.enum(USAGE_RECORD_FORMATS)),
  file: z.nullable(z.string()),
  read: z.boolean(),
  note: z.nullable(z.string()),
  requests: count,
  tokens: tokenCountsSchema,
  models: z.array(z.extend(tokenCountsSchema, { model: z.string(), requests: count })),
  firstAt: z.nullable(z.string()),
  lastAt: z.nullable(z.string()),
  wallMs: z.nullable(z.number()),
});

export const NO_TOKENS: TokenCounts = Object.freeze({ input: 0, output: 0, cacheRead: 0, cacheCreation: 0 });

export function addTokens(a: TokenCounts, b: TokenCounts): TokenCounts {
  return {
    input: a.input + b.input,
    output: a.output + b.output,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheCreation: a.cacheCreation + b.cacheCreation,
  };
}

export function totalTokens(tokens: TokenCounts): number {
  return tokens.input + tokens.output + tokens.cacheRead + tokens.cacheCreation;
}

/** A stage whose record could not be read: why, and nothing counted. */
export function unrecordedCost(format: UsageRecordFormat | null, file: string | null, note: string): StageCost {
  return { format, file, read: false, note, requests: 0, tokens: NO_TOKENS, models: [], firstAt: null, lastAt: null, wallMs: null };
}
