import {
  HEARTBEAT_TTL_MS,
  discoveryRootsKey,
  heartbeatKey,
  liveServers,
  repositoriesKey,
  repositoryEntryValue,
  scorePairs,
  workersKey,
} from '../queue/keys.ts';
import type { OnDemandConsumers } from './onDemand.ts';
import type { QueueLimits } from './queueLimit.ts';
import type { ServedCheckouts, Serving, WorkerScope } from './serving.ts';

// Is anyone serving? (docs/architecture.md "Queue semantics"): one heartbeat for the whole process,
// however many checkouts it serves, and one entry in the heartbeat set of each queue it serves,
// added when it starts serving (`announce`).

/** A dead worker's entry stays this long in the workers key, so that every live worker notices it. */
const DEAD_WORKER_GRACE_MS = 60_000;

/**
 * Records that this process serves the checkouts (one entry in each queue's heartbeat set, kept
 * while it serves; liveness is the process's single heartbeat), their registry entries, and
 * drops entries of workers that are gone.
 */
export async function announce(scope: WorkerScope, entries: readonly Serving[], limits?: QueueLimits): Promise<void> {
  if (entries.length === 0) return;
  const { connection, prefix, workerId } = scope;
  const now = Date.now();
  const pipeline = connection.pipeline();
  pipeline.zrangebyscore(workersKey(prefix), now, '+inf', 'WITHSCORES');
  for (const { queueName, repository } of entries) {
    pipeline.zadd(heartbeatKey(prefix, queueName), now, workerId).zrange(heartbeatKey(prefix, queueName), '0', '-1', 'WITHSCORES');
    pipeline.hset(
      repositoriesKey(prefix),
      repository.id,
      repositoryEntryValue({ root: repository.root, host: scope.hostName, main: repository.main }),
    );
  }
  // The queue-wide limit of one job, once per queue here rather than before each consumer (queueLimit.ts).
  for (const { queueName } of entries) limits?.write(pipeline, queueName);
  const replies = (await pipeline.exec()) ?? [];
  const failure = replies.find(([error]) => error);
  if (failure) throw failure[0] as Error;
  limits?.remember(entries.map(({ queueName }) => queueName));
  const live = (replies[0]?.[1] as unknown[] | undefined) ?? [];
  const cleanup = connection.pipeline();
  entries.forEach(({ queueName }, index) => {
    const members = (replies[2 + index * 3]?.[1] as unknown[] | undefined) ?? [];
    const alive = new Set(liveServers(members, live, now).map(([id]) => id));
    const gone = scorePairs(members)
      .map(([id]) => id)
      .filter((id) => id !== workerId && !alive.has(id));
    if (gone.length > 0) cleanup.zrem(heartbeatKey(prefix, queueName), ...gone);
  });
  if (cleanup.length > 0) await cleanup.exec();
}

export class ProcessHeartbeat {
  readonly #scope: WorkerScope;
  readonly #checkouts: ServedCheckouts;
  readonly #consumers: OnDemandConsumers;
  readonly #discoverRoots: readonly string[];
  /** Workers seen alive at the last beat, and dead ones already looked after. */
  #liveWorkers = new Set<string>();
  readonly #deadWorkers = new Set<string>();
  #beaten = false;

  constructor(scope: WorkerScope, checkouts: ServedCheckouts, consumers: OnDemandConsumers, discoverRoots: readonly string[]) {
    this.#scope = scope;
    this.#checkouts = checkouts;
    this.#consumers = consumers;
    this.#discoverRoots = discoverRoots;
  }

  /** Whether the process has beaten once (after a reconnect it beats at once then). */
  get beaten(): boolean {
    return this.#beaten;
  }

  /**
   * One beat. When another worker stopped beating (killed, or stopped), its active jobs may be left
   * on checkouts nobody consumes now: look at every idle checkout (a held one's stalled checker
   * recovers them).
   */
  async beat(): Promise<void> {
    const { connection, prefix, workerId } = this.#scope;
    const now = Date.now();
    const expiry = now + HEARTBEAT_TTL_MS;
    const pipeline = connection.pipeline();
    pipeline.zscore(workersKey(prefix), workerId);
    pipeline.zadd(workersKey(prefix), expiry, workerId);
    pipeline.zremrangebyscore(workersKey(prefix), '-inf', now - DEAD_WORKER_GRACE_MS);
    pipeline.zrange(workersKey(prefix), '0', '-1', 'WITHSCORES');
    for (const root of this.#discoverRoots) pipeline.hset(discoveryRootsKey(prefix), root, expiry);
    // A Redis that restarted without persistence forgot the queue-wide limit: set it again on the
    // queues consumed here (in the same round trip), or two worker processes could apply two jobs
    // of one repository at once.
    const held = this.#consumers.held().flatMap((id) => {
      const entry = this.#checkouts.get(id);
      return entry ? [entry.queueName] : [];
    });
    for (const queueName of held) this.#checkouts.limits.write(pipeline, queueName);
    const replies = (await pipeline.exec()) ?? [];
    const failure = replies.find(([error]) => error);
    if (failure) throw failure[0] as Error;
    this.#checkouts.limits.remember(held);
    const ownScore = replies[0]?.[1] as string | null;
    const entries = scorePairs((replies[3]?.[1] as unknown[] | undefined) ?? []);
    const present = new Set<string>();
    const alive = new Set<string>();
    let died = false;
    for (const [id, expiresAt] of entries) {
      present.add(id);
      if (id === workerId) continue;
      if (expiresAt > now) alive.add(id);
      else if (!this.#deadWorkers.has(id)) {
        this.#deadWorkers.add(id);
        died = true;
      }
    }
    for (const id of this.#liveWorkers) if (!present.has(id)) died = true; // stopped, or expired and already removed
    for (const id of this.#deadWorkers) if (!present.has(id)) this.#deadWorkers.delete(id);
    this.#liveWorkers = alive;
    // Taken for dead (a stalled event loop, a Redis that restarted empty): others may have dropped
    // this process from the queues' heartbeat sets, so say again what it serves.
    const wasDead = this.#beaten && (ownScore === null || Number(ownScore) <= now);
    this.#beaten = true;
    if (wasDead) await announce(this.#scope, this.#checkouts.entries(), this.#checkouts.limits);
    if (died) this.#consumers.scanAll();
  }
}
