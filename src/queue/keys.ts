// Redis keys and job options shared by callers and workers. BullMQ owns `<prefix>:<queue>:*`;
// baton's own keys live under the same prefix (so `{baton}` keeps everything in one Cluster slot).
import { isClusterUrl } from './redisUrl.ts';

export const DEFAULT_PREFIX = 'baton';

export type QueueConfig = Readonly<{
  redisUrl: string;
  prefix: string;
  /**
   * A linked worktree's client: the queue of its main repository, whose workers serve the
   * worktree's queue too (they follow the repository's worktrees, src/workers/worktrees.ts), so a
   * worker of that queue counts as this one's before it has picked a new worktree up.
   */
  mainQueue?: string;
}>;

/** The queue of a checkout: named after its id (docs/architecture.md "Job envelope"). */
export function queueNameFor(checkoutId: string): string {
  return `baton-${checkoutId}`;
}

/**
 * Sorted set of the workers serving the queue: "is anyone serving this repository?". A worker adds
 * itself once, when it starts serving (score: that time, ms), and removes itself when it stops; its
 * liveness is its entry in `workersKey`, so serving a thousand idle checkouts costs one heartbeat,
 * not a thousand (docs/architecture.md "Serving on demand"). A score in the future is the per-queue
 * heartbeat expiry that workers before that change wrote, and still counts until it passes.
 */
export function heartbeatKey(prefix: string, queueName: string): string {
  return `${prefix}:${queueName}:baton-heartbeat`;
}

/** Sorted set of the live worker processes, scored by heartbeat expiry (ms since epoch). */
export function workersKey(prefix: string): string {
  return `${prefix}:baton:workers`;
}

/** A worker's own stream, written only to wake its watch (XREAD) when the set of idle checkouts changes. */
export function workerWakeKey(prefix: string, workerId: string): string {
  return `${prefix}:baton:wake:${workerId}`;
}

/**
 * A WITHSCORES reply as [member, score] pairs: flat ([member, score, ...], RESP2 and ioredis' typed
 * commands) or nested ([[member, score], ...], RESP3 through ioredis' `call`).
 */
export function scorePairs(reply: readonly unknown[]): [string, number][] {
  const pairs: [string, number][] = [];
  if (reply.length > 0 && Array.isArray(reply[0])) {
    for (const pair of reply as unknown[][]) pairs.push([String(pair[0]), Number(pair[1])]);
    return pairs;
  }
  for (let index = 0; index + 1 < reply.length; index += 2) pairs.push([String(reply[index]), Number(reply[index + 1])]);
  return pairs;
}

/**
 * The workers that serve a queue and are alive at `now`, with their heartbeat expiry: from the
 * queue's `heartbeatKey` and the live `workersKey` entries, both WITHSCORES replies (`scorePairs`),
 * which is what a caller reads in one round trip (see `servingCheck`).
 */
export function liveServers(queueMembers: readonly unknown[], liveWorkers: readonly unknown[], now: number): [string, number][] {
  const alive = new Map(scorePairs(liveWorkers));
  const live: [string, number][] = [];
  for (const [id, score] of scorePairs(queueMembers)) {
    const expiry = Math.max(score, alive.get(id) ?? -Infinity);
    if (expiry > now) live.push([id, expiry]);
  }
  return live;
}

/**
 * The commands (one pipeline) that tell a caller whether a worker serves the queue: its serving
 * workers, the live workers, and the roots of discovering workers (read with `liveServers` and
 * `isWithin` on the roots whose expiry has not passed).
 */
export function servingCheck(prefix: string, queueName: string, now: number, mainQueue?: string): [string, ...(string | number)[]][] {
  return [
    ['ZRANGE', heartbeatKey(prefix, queueName), 0, -1, 'WITHSCORES'],
    ['ZRANGEBYSCORE', workersKey(prefix), now, '+inf', 'WITHSCORES'],
    ['HGETALL', discoveryRootsKey(prefix)],
    ...(mainQueue === undefined
      ? []
      : [['ZRANGE', heartbeatKey(prefix, mainQueue), 0, -1, 'WITHSCORES'] as [string, ...(string | number)[]]]),
  ];
}

/** Roots served by `--discover` workers: field = allowed root, value = expiry (ms since epoch). */
export function discoveryRootsKey(prefix: string): string {
  return `${prefix}:baton:discovery-roots`;
}

/**
 * Every repository that has had a job: field = the checkout id, value = JSON
 * `{ root, host }`, which machine and path the queue belongs to (older entries: the bare root), and
 * for a linked worktree `main`, its main repository's root: what lets the worker of that repository
 * find the queue of a worktree pruned before any worker served it (workers/worktrees.ts).
 */
export function repositoriesKey(prefix: string): string {
  return `${prefix}:baton:repos`;
}

export type RepositoryEntry = Readonly<{ root: string; host: string | null; main: string | null }>;

export function repositoryEntryValue(repo: Readonly<{ root: string; host?: string; main?: string | null }>): string {
  return JSON.stringify({ root: repo.root, host: repo.host ?? null, ...(repo.main ? { main: repo.main } : {}) });
}

export function parseRepositoryEntry(value: string): RepositoryEntry {
  if (value.startsWith('{')) {
    try {
      const parsed = JSON.parse(value) as { root?: unknown; host?: unknown; main?: unknown };
      if (typeof parsed.root === 'string')
        return {
          root: parsed.root,
          host: typeof parsed.host === 'string' ? parsed.host : null,
          main: typeof parsed.main === 'string' ? parsed.main : null,
        };
    } catch {
      // not ours: fall through
    }
  }
  return { root: value, host: null, main: null };
}

/** Redis Cluster keeps a multi-key script's keys in one slot only when the prefix has a hash tag. */
export function hasHashTag(prefix: string): boolean {
  const open = prefix.indexOf('{');
  if (open < 0) return false;
  const close = prefix.indexOf('}', open + 1);
  return close > open + 1;
}

export const PREFIX_NEEDS_HASH_TAG_CODE = 'BATON_PREFIX_NOT_HASH_TAGGED';

/**
 * On a Cluster, a BullMQ queue's keys must share one slot (its Lua scripts touch several at once),
 * and baton's registry keys must sit with them: the prefix needs a hash tag. Null when fine.
 */
export function prefixProblem(url: string, prefix: string): string | null {
  if (!isClusterUrl(url) || hasHashTag(prefix)) return null;
  return (
    `${PREFIX_NEEDS_HASH_TAG_CODE}: prefix '${prefix}' has no hash tag, so on Redis Cluster a queue's keys would land in different slots ` +
    `and its scripts would fail (CROSSSLOT). Use --prefix '{${prefix.replace(/[{}]/g, '') || 'baton'}}' (or BATON_PREFIX='{baton}')`
  );
}

export function eventsStreamKey(prefix: string, queueName: string): string {
  return `${prefix}:${queueName}:events`;
}

/**
 * BullMQ's hash of a queue's settings; its `concurrency` field is the queue-wide global concurrency
 * (what `Queue.setGlobalConcurrency` writes), which the workers keep at 1.
 */
export function queueMetaKey(prefix: string, queueName: string): string {
  return `${prefix}:${queueName}:meta`;
}

export function jobKey(prefix: string, queueName: string, jobId: string): string {
  return `${prefix}:${queueName}:${jobId}`;
}

export const HEARTBEAT_TTL_MS = 5_000;
export const HEARTBEAT_INTERVAL_MS = 1_500;

const DAY_SECONDS = 24 * 60 * 60;

/**
 * State-applying jobs are never retried by BullMQ (a retried job goes to the back of the queue and
 * would be applied out of order); transient faults are retried inside the processor instead.
 * Completed jobs stay a week (inspectable in the dashboard), failed ones a month.
 */
export const JOB_OPTIONS = {
  attempts: 1,
  removeOnComplete: { age: 7 * DAY_SECONDS, count: 10_000 },
  removeOnFail: { age: 30 * DAY_SECONDS, count: 10_000 },
} as const;

/**
 * Counters the workers keep for /metrics, shared by every worker process (a hash per metric; see
 * workers/jobRecords.ts for the fields). Kept in Redis so any dashboard can serve them.
 */
export function metricsKey(prefix: string, metric: 'events' | 'latency' | 'costs'): string {
  return `${prefix}:baton:metrics:${metric}`;
}

/** Upper bounds (seconds) of the enqueue → applied latency histogram. */
export const LATENCY_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

/**
 * Hash of a worker's completed rounds of its periodic duties (`reconcile-scan`, `discover`), each a
 * counter: the evidence that a round ran after a point of interest, so a test (or an operator)
 * can wait for "the worker looked and did nothing" instead of sleeping. Expires with its worker.
 */
export function dutyRoundsKey(prefix: string, workerId: string): string {
  return `${prefix}:baton:rounds:${workerId}`;
}
