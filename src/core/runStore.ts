import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../base/atomicFile.ts';
import { describeSchemaError, laterUpstreamRunSchema, orchestrationRunSchema } from './runSchema.ts';
import { runFilePath } from './taskLayout.ts';
import type { OrchestrationRun } from './types.ts';

export type RunRead =
  | Readonly<{ kind: 'missing' }>
  /** `text`: the file's bytes as read (a run the event staged itself has none). */
  | Readonly<{ kind: 'ok'; run: OrchestrationRun; text?: string }>
  | Readonly<{ kind: 'invalid'; message: string }>;

/** How a run file is read: `laterUpstream` (the later profile) also reads agent-infra's schemaVersion 2. */
export type RunReadOptions = Readonly<{ laterUpstream?: boolean }>;

/** Reads and validates `<taskDir>/orchestration.json`. Never throws. */
export function readRunFile(taskDir: string, options: RunReadOptions = {}): RunRead {
  const file = runFilePath(taskDir);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    return { kind: 'invalid', message: `${file} cannot be read: ${(error as Error).message}` };
  }
  return parseRunText(text, file, options);
}

export function parseRunText(text: string, file: string, options: RunReadOptions = {}): RunRead {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'invalid', message: `${file} is not valid JSON` };
  }
  const version = (value as { schemaVersion?: unknown } | null)?.schemaVersion;
  if (options.laterUpstream && version === 2) {
    const later = laterUpstreamRunSchema.safeParse(value);
    if (!later.success) {
      return { kind: 'invalid', message: `${file} does not match orchestration schema v2 (${describeSchemaError(later.error)})` };
    }
    return { kind: 'ok', run: value as OrchestrationRun, text };
  }
  const parsed = orchestrationRunSchema.safeParse(value);
  if (!parsed.success) {
    if (value !== null && typeof value === 'object' && version !== 1) {
      return { kind: 'invalid', message: `${file} has unsupported schemaVersion ${JSON.stringify(version)}` };
    }
    return { kind: 'invalid', message: `${file} does not match orchestration schema v1 (${describeSchemaError(parsed.error)})` };
  }
  // The file's own object, not zod's copy: zod reorders keys, and the copy would be what gets rewritten.
  return { kind: 'ok', run: value as OrchestrationRun, text };
}

/** The bytes agent-infra writes: JSON, 2-space indent, trailing newline. */
export function serializeRun(run: OrchestrationRun): string {
  return `${JSON.stringify(run, null, 2)}\n`;
}

/**
 * One file the engine wants written: full content, so applying it twice is the same as once. `before`
 * is the file's text when the event read it (null: it did not exist), so the journal need not read
 * it again; undefined when the event did not read it.
 */
export type RunWrite = Readonly<{ path: string; content: string; before?: string | null }>;

export function commitWrites(writes: readonly RunWrite[]): void {
  for (const write of writes) writeFileAtomic(write.path, write.content);
}

/**
 * The run files one event sees and changes. A task's run file is read once (the first read is kept
 * for the rest of the event) until the event stages a new run for that task; later reads of that
 * task see the staged run. Nothing reaches disk here: the caller commits `writes()` (directly, or
 * through the worker's event journal for exactly-once effects).
 */
export class RunTransaction {
  readonly #read = new Map<string, RunRead>();
  readonly #staged = new Map<string, OrchestrationRun>();
  /** Other task files the event writes with its run (a stage artifact handed over by `complete-stage --content`). */
  readonly #files = new Map<string, string>();
  readonly #reader: (taskDir: string) => RunRead;

  constructor(reader: (taskDir: string) => RunRead = readRunFile) {
    this.#reader = reader;
  }

  read(taskDir: string): RunRead {
    const key = path.resolve(taskDir);
    const staged = this.#staged.get(key);
    if (staged) return { kind: 'ok', run: staged };
    let read = this.#read.get(key);
    if (!read) {
      read = this.#reader(taskDir);
      this.#read.set(key, read);
    }
    return read;
  }

  stage(taskDir: string, run: OrchestrationRun): void {
    this.#staged.set(path.resolve(taskDir), run);
  }

  stageFile(file: string, content: string): void {
    this.#files.set(path.resolve(file), content);
  }

  /** The text a staged run replaces, as this event read it. */
  #before(taskDir: string): { before?: string | null } {
    const read = this.#read.get(taskDir);
    if (read?.kind === 'missing') return { before: null };
    return read?.kind === 'ok' && read.text !== undefined ? { before: read.text } : {};
  }

  /** Task files first, then run files: a run never names an artifact that is not on disk yet. */
  writes(): RunWrite[] {
    return [
      ...[...this.#files].map(([file, content]) => ({ path: file, content })),
      ...[...this.#staged].map(([taskDir, run]) => ({ path: runFilePath(taskDir), content: serializeRun(run), ...this.#before(taskDir) })),
    ];
  }
}
