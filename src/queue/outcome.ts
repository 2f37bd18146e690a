import type { OrchestrationResult } from '../core/types.ts';
import { liveServers } from './keys.ts';

// A job's outcome as callers see it, shared by the ioredis client (client.ts) and the hook's raw
// transport (hookTransport.ts). No runtime dependency: the result schema (zod) is loaded only once
// a result has to be checked.

export type JobOutcome =
  | Readonly<{ kind: 'completed'; value: OrchestrationResult }>
  | Readonly<{ kind: 'failed'; reason: string }>
  | Readonly<{ kind: 'timeout' }>;

export type ResultSchema = Pick<typeof import('../core/runSchema.ts'), 'describeSchemaError' | 'orchestrationResultSchema'>;

export function resultSchema(): Promise<ResultSchema> {
  return import('../core/runSchema.ts');
}

/** A worker's return value is checked before anyone prints or acts on it. */
export function completedOutcome(
  { describeSchemaError, orchestrationResultSchema }: ResultSchema,
  returnvalue: string | null | undefined,
): JobOutcome {
  const value = parseJson(returnvalue);
  const parsed = orchestrationResultSchema.safeParse(value);
  if (!parsed.success) return { kind: 'failed', reason: `the worker returned a malformed result (${describeSchemaError(parsed.error)})` };
  // Print what the worker returned (key order and unknown run keys intact), now that it is checked.
  return { kind: 'completed', value: value as OrchestrationResult };
}

/** The outcome a finished job's hash fields (finishedOn, returnvalue, failedReason) record; null while it is not finished. */
export async function outcomeFromJobFields(finishedOn: unknown, returnvalue: unknown, failedReason: unknown): Promise<JobOutcome | null> {
  if (!finishedOn) return null;
  if (failedReason) return { kind: 'failed', reason: String(failedReason) };
  return completedOutcome(await resultSchema(), typeof returnvalue === 'string' ? returnvalue : null);
}

export function fieldsToRecord(fields: readonly unknown[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (let index = 0; index + 1 < fields.length; index += 2) record[String(fields[index])] = String(fields[index + 1]);
  return record;
}

function parseJson(text: string | null | undefined): unknown {
  if (text === null || text === undefined || text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** True when `child` is `parent` or inside it (paths, no file system access). */
export function isWithin(child: string, parent: string): boolean {
  const base = parent.endsWith('/') ? parent : `${parent}/`;
  return child === parent || child.startsWith(base);
}

/**
 * Whether the replies of `servingCheck` (keys.ts) show a worker serving the checkout at `repoRoot`:
 * a live worker that serves its queue, or a live discovering worker whose root holds it.
 */
export function workerServes(
  replies: Readonly<{
    queueMembers: readonly unknown[];
    liveWorkers: readonly unknown[];
    discoveryRoots: Readonly<Record<string, string>>;
    /** The serving workers of a linked worktree's main repository's queue (QueueConfig's `mainQueue`). */
    mainQueueMembers?: readonly unknown[];
  }>,
  repoRoot: string,
  now: number,
): boolean {
  if (liveServers(replies.queueMembers, replies.liveWorkers, now).length > 0) return true;
  if (replies.mainQueueMembers && liveServers(replies.mainQueueMembers, replies.liveWorkers, now).length > 0) return true;
  return Object.entries(replies.discoveryRoots).some(([root, expiry]) => Number(expiry) > now && isWithin(repoRoot, root));
}

/**
 * True once a live worker serves the repository, looking again every 100 ms for up to `graceMs`:
 * right after Redis restarted, workers have reconnected but not yet beaten.
 */
export async function workerWithin(queue: { workerAvailable(): Promise<boolean> }, graceMs: number): Promise<boolean> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    if (await queue.workerAvailable()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
