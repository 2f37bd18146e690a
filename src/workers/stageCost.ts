import fs from 'node:fs/promises';
import path from 'node:path';
import type { LifecycleEvent } from '../core/events.ts';
import { unrecordedCost } from '../core/stageCost.ts';
import type { StageCost } from '../core/stageCost.ts';
import { readUsageRecord, usageRecordComplete, usageRecordLags } from '../core/usageRecords.ts';

// The worker's side of a stage's cost (docs/run-view.md "What a stage cost"): a stop names the
// client's own record of the child's requests (its transcript, rollout or session events); the
// worker reads that file before applying the stop and hands the figures to the engine as a fact
// (EngineDeps.stopCost). The hook never opens it: it must stay fast. Whatever goes wrong here is
// noted on the receipt and changes nothing else: the seal goes on.

/** A record larger than this is not read (a transcript of a long child is a few MB). */
export const USAGE_RECORD_LIMIT = 256 * 1024 * 1024;

/**
 * How long the worker waits for a record to show the child's end (usageRecordComplete: Copilot CLI
 * writes it just after the stop hook, ~0.1 s), re-reading it every 25 ms; then what it holds counts.
 */
export const USAGE_RECORD_WAIT_MS = 3_000;
const REREAD_MS = 25;

/**
 * The cost of the stage a stop (or the client's report of a child gone) ends, read from the record
 * it names; undefined for any other event.
 */
export async function stopCostOf(event: LifecycleEvent): Promise<StageCost | undefined> {
  if (
    (event.intent !== 'hook-stop' && event.intent !== 'child-gone' && event.intent !== 'reconcile') ||
    event.usageRecord === undefined ||
    event.usageFormat === undefined
  )
    return undefined;
  const { usageRecord: file, usageFormat: format } = event;
  const childId = event.childId ?? '';
  // The path comes from the client's payload: only an absolute path to a JSON-lines file is opened.
  if (!path.isAbsolute(file) || !file.endsWith('.jsonl')) return unrecordedCost(format, file, 'not an absolute path to a .jsonl record');
  const deadline = Date.now() + USAGE_RECORD_WAIT_MS;
  let text: string;
  for (;;) {
    try {
      const stat = await fs.stat(file);
      if (!stat.isFile()) return unrecordedCost(format, file, 'not a file');
      if (stat.size > USAGE_RECORD_LIMIT) return unrecordedCost(format, file, `larger than ${USAGE_RECORD_LIMIT} bytes: not read`);
      text = await fs.readFile(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Copilot CLI creates its session's events file lazily, around the stop: wait for it as for its end.
      if (code === 'ENOENT' && usageRecordLags(format) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, REREAD_MS));
        continue;
      }
      // A worker on another machine than the client (docs/teams.md) does not have the file.
      const why = code === 'ENOENT' ? 'no such file on the worker’s machine' : `unreadable (${code ?? String(error)})`;
      return unrecordedCost(format, file, why);
    }
    if (usageRecordComplete(format, text, childId) || Date.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, REREAD_MS));
  }
  try {
    const cost = readUsageRecord(format, text, file, childId);
    if (usageRecordComplete(format, text, childId)) return cost;
    const late = `the record showed no end of the child within ${USAGE_RECORD_WAIT_MS / 1000} s: what it held then is counted`;
    return { ...cost, note: cost.note ? `${cost.note}; ${late}` : late };
  } catch (error) {
    return unrecordedCost(format, file, `could not be read as ${format}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
