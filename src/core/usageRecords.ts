import type { UsageRecordFormat } from '../clients/facts.ts';
import { NO_TOKENS, addTokens } from './stageCost.ts';
import type { ModelCost, StageCost, TokenCounts } from './stageCost.ts';

// The clients' own records of a child's model requests, read into a StageCost (pure: the text in,
// the figures out; the worker reads the file, src/workers/stageCost.ts). Each record is JSON lines;
// a line that does not parse is skipped and counted in the note. What each format holds, and which
// client versions were seen writing it, is in docs/run-view.md "What a stage cost".

type Entry = Record<string, unknown>;

function record(value: unknown): Entry {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Entry) : {};
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function lines(text: string): { entries: Entry[]; skipped: number } {
  const entries: Entry[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      entries.push(record(JSON.parse(line)));
    } catch {
      skipped += 1; // a line being written as the record was read, or not JSON
    }
  }
  return { entries, skipped };
}

/** Requests and tokens per model, in the order models first appear. */
class Tally {
  private readonly byModel = new Map<string, { requests: number; tokens: TokenCounts }>();
  private first: number | null = null;
  private last: number | null = null;

  add(model: string, tokens: TokenCounts): void {
    const seen = this.byModel.get(model) ?? { requests: 0, tokens: NO_TOKENS };
    this.byModel.set(model, { requests: seen.requests + 1, tokens: addTokens(seen.tokens, tokens) });
  }

  saw(timestamp: unknown): void {
    const at = typeof timestamp === 'string' ? Date.parse(timestamp) : Number.NaN;
    if (Number.isNaN(at)) return;
    this.first = this.first === null ? at : Math.min(this.first, at);
    this.last = this.last === null ? at : Math.max(this.last, at);
  }

  cost(format: UsageRecordFormat, file: string, skipped: number): StageCost {
    const models: ModelCost[] = [...this.byModel].map(([model, { requests, tokens }]) => ({ model, requests, ...tokens }));
    const tokens = models.reduce<TokenCounts>((sum, model) => addTokens(sum, model), NO_TOKENS);
    const requests = models.reduce((sum, model) => sum + model.requests, 0);
    const note = [
      skipped > 0
        ? `${skipped} line${skipped === 1 ? '' : 's'} of the record did not parse and ${skipped === 1 ? 'was' : 'were'} skipped`
        : null,
      requests === 0 ? 'the record names no model request of the child' : null,
    ]
      .filter(Boolean)
      .join('; ');
    return {
      format,
      file,
      read: true,
      note: note || null,
      requests,
      tokens,
      models,
      firstAt: this.first === null ? null : new Date(this.first).toISOString(),
      lastAt: this.last === null ? null : new Date(this.last).toISOString(),
      wallMs: this.first === null || this.last === null ? null : this.last - this.first,
    };
  }
}

/**
 * Claude Code's subagent transcript (`agent_transcript_path`): one line per content block of an
 * assistant message, each with the message's `usage` and `model`, so a request is counted once per
 * message id (the last line's usage wins). Its `<synthetic>` messages (errors, interruptions) were
 * never sent to a model and are not counted.
 */
function claudeTranscript(text: string, file: string): StageCost {
  const { entries, skipped } = lines(text);
  const tally = new Tally();
  const requests = new Map<string, { model: string; tokens: TokenCounts }>();
  entries.forEach((entry, index) => {
    tally.saw(entry.timestamp);
    if (entry.type !== 'assistant') return;
    const message = record(entry.message);
    const model = str(message.model);
    const usage = record(message.usage);
    if (!model || model === '<synthetic>' || Object.keys(usage).length === 0) return;
    const key = str(message.id) ?? str(entry.requestId) ?? `line:${index}`;
    requests.set(key, {
      model,
      tokens: {
        input: num(usage.input_tokens),
        output: num(usage.output_tokens),
        cacheRead: num(usage.cache_read_input_tokens),
        cacheCreation: num(usage.cache_creation_input_tokens),
      },
    });
  });
  for (const { model, tokens } of requests.values()) tally.add(model, tokens);
  return tally.cost('claude-code-transcript', file, skipped);
}

/**
 * Codex's rollout of the child thread (`agent_transcript_path`): `event_msg` lines of type
 * `token_count` carry the thread's running `total_token_usage`; each increase is one response,
 * counted for the model of the latest `turn_context`. OpenAI's `input_tokens` include the cached
 * ones (`cached_input_tokens`) and those written to the cache (`cache_write_input_tokens`), which
 * are counted apart here, as Anthropic's API counts them.
 */
function codexRollout(text: string, file: string): StageCost {
  const { entries, skipped } = lines(text);
  const tally = new Tally();
  let model = 'unknown';
  let previous = { input: 0, cached: 0, cacheWrite: 0, output: 0 };
  for (const entry of entries) {
    tally.saw(entry.timestamp);
    const payload = record(entry.payload);
    if (entry.type === 'turn_context') model = str(payload.model) ?? model;
    if (entry.type !== 'event_msg' || payload.type !== 'token_count') continue;
    const total = record(record(payload.info).total_token_usage);
    if (Object.keys(total).length === 0) continue;
    const now = {
      input: num(total.input_tokens),
      cached: num(total.cached_input_tokens),
      cacheWrite: num(total.cache_write_input_tokens),
      output: num(total.output_tokens),
    };
    const delta = {
      input: now.input - previous.input,
      cached: now.cached - previous.cached,
      cacheWrite: now.cacheWrite - previous.cacheWrite,
      output: now.output - previous.output,
    };
    // The same totals again (a rate-limit update): no new response.
    if (delta.input <= 0 && delta.output <= 0) continue;
    previous = now;
    tally.add(model, {
      input: Math.max(0, delta.input - delta.cached - delta.cacheWrite),
      output: Math.max(0, delta.output),
      cacheRead: Math.max(0, delta.cached),
      cacheCreation: Math.max(0, delta.cacheWrite),
    });
  }
  return tally.cost('codex-rollout', file, skipped);
}

/**
 * Copilot CLI's session events (`transcriptPath`, the session's events.jsonl, parent and children
 * together): the child's `session.usage_record` entries carry its `agentId`. Their `inputTokens`
 * include the cached ones (`cacheReadTokens`, `cacheWriteTokens`), counted apart here.
 */
function copilotEvents(text: string, file: string, childId: string): StageCost {
  const { entries, skipped } = lines(text);
  const tally = new Tally();
  for (const entry of entries) {
    if (entry.agentId !== childId) continue;
    tally.saw(entry.timestamp);
    if (entry.type !== 'session.usage_record') continue;
    const usage = record(record(entry.data).usage);
    const cacheRead = num(usage.cacheReadTokens);
    const cacheCreation = num(usage.cacheWriteTokens);
    tally.add(str(usage.model) ?? 'unknown', {
      input: Math.max(0, num(usage.inputTokens) - cacheRead - cacheCreation),
      output: num(usage.outputTokens),
      cacheRead,
      cacheCreation,
    });
  }
  return tally.cost('copilot-events', file, skipped);
}

/**
 * Whether the client may still be writing the record when the stop arrives (Copilot CLI writes its
 * session's events file in batches, and creates it lazily: it may not exist yet at the stop).
 */
export function usageRecordLags(format: UsageRecordFormat): boolean {
  return format === 'copilot-events';
}

/**
 * Whether the record shows the child's end, so that it holds every request of the child. Copilot CLI
 * writes the child's last usage record around its subagentStop hook and `subagent.completed` (or
 * `subagent.failed`) right after it; Claude Code's transcript and Codex's rollout hold the child's
 * last usage before the stop hook runs (seen with every pinned version).
 */
export function usageRecordComplete(format: UsageRecordFormat, text: string, childId: string): boolean {
  if (!usageRecordLags(format)) return true;
  return lines(text).entries.some(
    (entry) => entry.agentId === childId && (entry.type === 'subagent.completed' || entry.type === 'subagent.failed'),
  );
}

/** The cost of the child `childId` from the text of its client's record at `file`. */
export function readUsageRecord(format: UsageRecordFormat, text: string, file: string, childId: string): StageCost {
  if (format === 'claude-code-transcript') return claudeTranscript(text, file);
  if (format === 'codex-rollout') return codexRollout(text, file);
  return copilotEvents(text, file, childId);
}
