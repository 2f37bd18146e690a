import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { removeInterruptedWrites, writeFileAtomic } from '../base/atomicFile.ts';
import { commitWrites } from '../core/runStore.ts';
import type { EngineOutcome } from '../core/engine.ts';
import type { OrchestrationResult } from '../core/types.ts';
import { failpoint } from './failpoints.ts';

// Effectively-once application of events. Delivery is at-least-once (duplicate hooks, a job
// redelivered after its worker was killed), and BullMQ's job-id deduplication ends when the job is
// removed, so the worker keeps its own record per event id under `<gitdir>/baton/journal/`:
//   1. record `pending` with the result and the full content of every run file to write, plus a
//      hash of each file's content before the event;
//   2. write the run files (atomic renames);
//   3. record `done`.
// A second delivery finds the record and returns the first result. If the worker died between 1
// and 3, the redelivery finishes the writes: a file already holding the new content is left alone,
// a file still holding the old content is written, and a file holding anything else (the state
// moved on) is not touched and the result carries a warning. A worker killed between writing a run
// file's temp file and renaming it leaves that temp file in the task directory, where fingerprints
// would see it (a reviewer's seal would fail on the stray path): the redelivery removes it.
//
// Cost per event that writes (chaos and bench/throughput.mjs): the pending record and each run file
// are written as temp file + rename; `done` is marked in place (the record's 9-byte state token is
// overwritten, so the record is valid JSON before and after), which saves a file creation and a
// rename per event on file systems where those dominate. (Writing asynchronously, to overlap the
// disk work of different repositories, was measured and rejected: ~35% fewer events/s when the
// worker is CPU-bound, no clear gain on this machine's disk.)

const journalRecordSchema = z.object({
  v: z.literal(1),
  eventId: z.string(),
  state: z.enum(['pending', 'done']),
  recordedAt: z.string(),
  result: z.record(z.string(), z.unknown()),
  writes: z.array(z.object({ path: z.string(), content: z.string(), beforeSha256: z.string().nullable() })),
  // Native hook events: the receipt the event targeted when first applied (null: none).
  target: z.string().nullable().optional(),
});

type JournalRecord = z.infer<typeof journalRecordSchema>;

const STATE_KEY = '"state":';
const PENDING_TOKEN = `${STATE_KEY}"pending"`;
const DONE_VALUE = Buffer.from('"done"   ');
const INTERRUPTED_TEMP_AGE_MS = 60_000;

export type JournaledOutcome = Readonly<{ result: OrchestrationResult; replayed: boolean }>;

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

export class EventJournal {
  readonly dir: string;
  readonly #writableRoot: string;

  /** `writableRoot`: the only directory journal writes may target (the repository's workspace). */
  constructor(dir: string, writableRoot: string) {
    this.dir = dir;
    this.#writableRoot = path.resolve(writableRoot);
    fs.mkdirSync(dir, { recursive: true });
  }

  #file(eventId: string): string {
    return path.join(this.dir, `${eventId}.json`);
  }

  lookup(eventId: string): JournalRecord | null {
    const text = readText(this.#file(eventId));
    if (text === null) return null;
    const parsed = journalRecordSchema.safeParse(safeJson(text));
    if (!parsed.success) throw new Error(`journal record ${this.#file(eventId)} is corrupt; move it aside to re-apply event ${eventId}`);
    return parsed.data;
  }

  #save(record: JournalRecord): void {
    writeFileAtomic(this.#file(record.eventId), `${JSON.stringify(record)}\n`);
  }

  /**
   * Marks a saved pending record done by overwriting its `"pending"` state token in place with
   * `"done"   ` (same length; JSON allows the spaces). One small write into an existing file: a kill
   * leaves either token, never a torn record. Falls back to rewriting the record when the token is
   * not where #save puts it (a record written by someone else).
   */
  #markDone(record: JournalRecord): void {
    const file = this.#file(record.eventId);
    const text = readText(file);
    const index = text === null ? -1 : text.indexOf(PENDING_TOKEN);
    if (text === null || index === -1) {
      this.#save({ ...record, state: 'done' });
      return;
    }
    const offset = Buffer.byteLength(text.slice(0, index)) + STATE_KEY.length;
    const fd = fs.openSync(file, 'r+');
    try {
      fs.writeSync(fd, DONE_VALUE, 0, DONE_VALUE.length, offset);
    } finally {
      fs.closeSync(fd);
    }
  }

  #assertWritable(file: string): void {
    const resolved = path.resolve(file);
    if (!resolved.startsWith(`${this.#writableRoot}${path.sep}`)) {
      throw new Error(`refusing to write ${resolved}: outside ${this.#writableRoot}`);
    }
  }

  /**
   * Applies `compute`'s outcome once per event id; later deliveries return the recorded result.
   * With `target` (native hook events: the receipt the event would be applied to now), a recorded
   * event is a duplicate only if it targeted the same receipt; otherwise it is a new event that
   * happens to carry the same native ids (a reused child id), applied and recorded under
   * `<eventId>.<hash of target>`. A record left pending by a crash is always finished, whatever the target.
   */
  async apply(eventId: string, compute: () => Promise<EngineOutcome>, intent = '', target?: string | null): Promise<JournaledOutcome> {
    let key = eventId;
    const existing = this.lookup(eventId);
    if (existing) {
      if (target === undefined || existing.state === 'pending' || (existing.target ?? null) === target) {
        return { result: this.#finish(existing), replayed: true };
      }
      key = `${eventId}.${sha256(target ?? '').slice(0, 16)}`;
      const again = this.lookup(key);
      if (again) return { result: this.#finish(again), replayed: true };
    }
    const outcome = await compute();
    const record: JournalRecord = {
      v: 1,
      eventId: key,
      ...(target !== undefined ? { target } : {}),
      state: outcome.writes.length === 0 ? 'done' : 'pending',
      recordedAt: new Date().toISOString(),
      result: outcome.result as unknown as Record<string, unknown>,
      writes: outcome.writes.map((write) => {
        this.#assertWritable(write.path);
        // The engine read the run files it rewrites: their text is not read a second time.
        const before = write.before !== undefined ? write.before : readText(write.path);
        return { path: write.path, content: write.content, beforeSha256: before === null ? null : sha256(before) };
      }),
    };
    this.#save(record);
    if (record.state === 'pending') {
      failpoint('after-journal', intent);
      commitWrites(outcome.writes);
      failpoint('after-commit', intent);
      this.#markDone(record);
    }
    failpoint('after-done', intent);
    return { result: outcome.result, replayed: false };
  }

  /** Completes a record left pending by a crash; returns the recorded result. */
  #finish(record: JournalRecord): OrchestrationResult {
    const result = record.result as unknown as OrchestrationResult;
    if (record.state === 'done') return result;
    const conflicts: string[] = [];
    for (const write of record.writes) {
      this.#assertWritable(write.path);
      // This worker is now the writer of the file: temp files of the interrupted write are debris.
      removeInterruptedWrites(write.path);
      const current = readText(write.path);
      if (current === write.content) continue;
      const currentSha = current === null ? null : sha256(current);
      if (currentSha === write.beforeSha256) writeFileAtomic(write.path, write.content);
      else conflicts.push(write.path);
    }
    this.#markDone(record);
    if (conflicts.length === 0) return result;
    const warning = `event ${record.eventId} was interrupted and its run state has changed since; not rewritten: ${conflicts.join(', ')}`;
    return { ...result, warnings: [...(result.warnings ?? []), warning] };
  }

  /**
   * Removes records older than `maxAgeMs` (the deduplication window), and temp files of record
   * writes interrupted by a kill more than a minute ago (a write in flight is milliseconds old).
   */
  prune(maxAgeMs: number, now: number = Date.now()): number {
    let removed = 0;
    for (const name of fs.readdirSync(this.dir)) {
      const temp = name.endsWith('.tmp');
      if (!name.endsWith('.json') && !temp) continue;
      const file = path.join(this.dir, name);
      try {
        if (now - fs.statSync(file).mtimeMs > (temp ? Math.min(maxAgeMs, INTERRUPTED_TEMP_AGE_MS) : maxAgeMs)) {
          fs.rmSync(file, { force: true });
          removed += 1;
        }
      } catch {
        // Raced with another pruner.
      }
    }
    return removed;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** Prunes the journal of every served checkout of what is past the deduplication window (`maxAgeMs`). */
export function pruneJournals(repositories: readonly Readonly<{ journal: EventJournal }>[], maxAgeMs: number): void {
  for (const { journal } of repositories) journal.prune(maxAgeMs);
}
