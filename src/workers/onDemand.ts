import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { connectDurable } from '../queue/connection.ts';
import { withDeadline } from '../base/deadline.ts';
import { eventsStreamKey, workerWakeKey } from '../queue/keys.ts';
import { trace, tracing } from './trace.ts';

// Serving on demand (docs/architecture.md "Serving on demand"): a worker process serves many
// checkouts but holds a BullMQ Worker (a blocking connection, a stalled-job checker, lock renewal)
// only for those with work. Idle checkouts are watched together on ONE connection: a blocking XREAD
// over the BullMQ events streams of all of them (every job added, retried or moved back to wait
// writes there, whoever did it: hook, CLI, dashboard, a stalled-job checker), each read from the
// last entry this process has seen, so nothing written while a checkout was idle is missed. An event
// that may mean work makes the checkout held; a held checkout with no waiting, active, delayed or
// prioritized job and no job for `keepWarmMs` is released and watched again from the stream
// position noted BEFORE its queue was found empty. The one-at-a-time rule stays BullMQ's queue-wide
// global concurrency 1, set before a Worker is opened on the queue.

/** Events that never mean a job is waiting or active (anything else makes an idle checkout held). */
const NO_WORK_EVENTS = new Set([
  'completed',
  'failed',
  'removed',
  'cleaned',
  'drained',
  'duplicated',
  'deduplicated',
  'debounced',
  'progress',
  'paused',
  'retries-exhausted',
]);

/** How long one watch (XREAD BLOCK) lasts at most; each one re-reads every idle stream from its cursor. */
export const WATCH_BLOCK_MS = 20_000;
/** Entries read per stream and watch: enough to see whether any of them means work. */
const WATCH_COUNT = 64;
/** Checkouts per pipelined check round. */
const CHECK_BATCH = 256;
/** After a failed attempt to hold a checkout (Redis away), try again this much later. */
const RETRY_MS = 1_000;
/** The most one step of stopping may wait for Redis (a Redis that is gone would make it wait forever). */
export const CLOSE_STEP_MS = 2_000;

export type OnDemandOptions = Readonly<{
  /** The worker's shared connection (checks, wake-ups). */
  connection: Redis;
  /** For the watch connection, the only extra one while every checkout is idle. */
  redisUrl: string;
  prefix: string;
  workerId: string;
  /** How long a held checkout stays held after its last job. */
  keepWarmMs: number;
  log: (line: string) => void;
  /** Opens a BullMQ Worker on the checkout's queue (after setting the queue-wide limit). */
  consume(id: string): Promise<Worker>;
}>;

type Slot = {
  readonly id: string;
  readonly keyBase: string;
  readonly events: string;
  /** checking: not watched yet (its queue is being looked at); idle: watched from `cursor`; held: a Worker consumes it. */
  state: 'checking' | 'idle' | 'held';
  cursor: string;
  worker: Worker | null;
  lastActivity: number;
  readonly running: Set<string>;
  /** Acquire and release of one checkout run one after the other. */
  turn: Promise<void>;
  removed: boolean;
};

type Look = { slot: Slot; lastEventId: string; work: boolean };

export class OnDemandConsumers {
  readonly #options: OnDemandOptions;
  readonly #slots = new Map<string, Slot>();
  readonly #byStream = new Map<string, Slot>();
  readonly #watch: Redis;
  readonly #wakeKey: string;
  readonly #timers: ReturnType<typeof setInterval>[] = [];
  #pendingChecks = new Set<Slot>();
  #checkScheduled = false;
  /** A watch is waiting in Redis (or on its way there) for the streams of the idle checkouts it was issued for. */
  #watchInFlight = false;
  #woken = false;
  /** Position in the wake stream: a wake-up written before the watch reaches Redis still ends it. */
  #wakeCursor = '0-0';
  #closing = false;
  readonly #watching: Promise<void>;

  constructor(options: OnDemandOptions) {
    this.#options = options;
    this.#wakeKey = workerWakeKey(options.prefix, options.workerId);
    this.#watch = connectDurable(options.redisUrl, `baton-watch-${options.workerId}`);
    this.#watch.on('error', (error: Error) => {
      trace('redis-error', { connection: 'watch', message: error.message });
      options.log(`redis (watch): ${error.message}`);
    });
    let connectedBefore = false;
    this.#watch.on('ready', () => {
      // Back after a lost connection: Redis may have restarted (and, without persistence, forgotten
      // streams); look at every idle checkout once.
      if (connectedBefore) this.scanAll();
      connectedBefore = true;
    });
    const checkEvery = Math.min(15_000, Math.max(250, Math.floor(options.keepWarmMs / 2)));
    const timer = setInterval(
      () => void this.#releaseIdle().catch((error: Error) => options.log(`releasing idle checkouts: ${error.message}`)),
      checkEvery,
    );
    timer.unref?.();
    this.#timers.push(timer);
    this.#watching = this.#watchLoop();
  }

  /** Starts serving a checkout: its queue is looked at once, then held or watched. */
  add(id: string, queueName: string): void {
    if (this.#slots.has(id) || this.#closing) return;
    const slot: Slot = {
      id,
      keyBase: `${this.#options.prefix}:${queueName}:`,
      events: eventsStreamKey(this.#options.prefix, queueName),
      state: 'checking',
      cursor: '0-0',
      worker: null,
      lastActivity: 0,
      running: new Set(),
      turn: Promise.resolve(),
      removed: false,
    };
    this.#slots.set(id, slot);
    this.#byStream.set(slot.events, slot);
    this.#queueCheck(slot);
  }

  /** Stops serving a checkout; a held one finishes its active job first. */
  async remove(id: string): Promise<void> {
    const slot = this.#slots.get(id);
    if (!slot) return;
    slot.removed = true;
    this.#slots.delete(id);
    this.#byStream.delete(slot.events);
    this.#pendingChecks.delete(slot);
    await this.#inTurn(slot, async () => {
      const worker = slot.worker;
      slot.worker = null;
      await worker?.close().catch((error: Error) => this.#options.log(`closing the consumer of ${slot.id}: ${error.message}`));
    });
    this.#watchChanged();
  }

  /** Work is known to be there (e.g. this process just queued spooled events): hold the checkout. */
  demand(id: string): void {
    const slot = this.#slots.get(id);
    if (slot) this.#acquire(slot);
  }

  /** Looks at every checkout that is not held (at start, after a reconnect, when another worker died). */
  scanAll(): void {
    for (const slot of this.#slots.values()) if (slot.state !== 'held') this.#queueCheck(slot);
  }

  /** Ids of the checkouts held now. */
  held(): string[] {
    return [...this.#slots.values()].filter((slot) => slot.state === 'held').map((slot) => slot.id);
  }

  /** Every held Worker finishes its active job, or stops at the deadline; then the watch ends. */
  async close(deadlineMs: number): Promise<{ clean: boolean }> {
    this.#closing = true;
    for (const timer of this.#timers) clearInterval(timer);
    const slots = [...this.#slots.values()];
    const workers = () => slots.flatMap((slot) => (slot.worker ? [slot.worker] : []));
    // Acquisitions under way finish first (a Worker opened while closing closes itself, see #acquire).
    const graceful = Promise.all(slots.map((slot) => slot.turn))
      .then(() => Promise.all(workers().map((worker) => worker.close())))
      .then(() => true);
    const deadline = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), deadlineMs).unref?.());
    const clean = await Promise.race([graceful, deadline]);
    // Forced closes and the watch loop are bounded too: with Redis gone, BullMQ's close waits for
    // its connections to come back, forever.
    if (!clean)
      await Promise.all(
        workers().map((worker) => withDeadline(worker.close(true), CLOSE_STEP_MS, 'Redis did not answer').catch(() => undefined)),
      );
    this.#watch.disconnect();
    await withDeadline(this.#watching, CLOSE_STEP_MS, 'the watch did not stop').catch(() => undefined);
    // Bounded: with Redis gone, a command would wait for it forever (the key expires by itself).
    await withDeadline(this.#options.connection.del(this.#wakeKey), CLOSE_STEP_MS, 'Redis did not answer').catch(() => undefined);
    return { clean };
  }

  // -------------------------------------------------------------------------------------------

  #inTurn(slot: Slot, step: () => Promise<void>): Promise<void> {
    const next = slot.turn.then(step).catch((error: Error) => this.#options.log(`checkout ${slot.id}: ${error.message}`));
    slot.turn = next;
    return next;
  }

  #acquire(slot: Slot, streamEntry?: string): void {
    if (slot.state === 'held' || slot.removed || this.#closing) return;
    trace('hold', { checkout: slot.id, streamEntry });
    slot.state = 'held';
    slot.lastActivity = Date.now();
    this.#pendingChecks.delete(slot);
    void this.#inTurn(slot, async () => {
      if (slot.removed || this.#closing) return;
      let worker: Worker;
      trace('consume', { checkout: slot.id });
      try {
        worker = await this.#options.consume(slot.id);
      } catch (error) {
        this.#options.log(`checkout ${slot.id}: cannot start consuming its queue (${(error as Error).message}); trying again`);
        slot.state = 'checking';
        setTimeout(() => this.#queueCheck(slot), RETRY_MS).unref?.();
        return;
      }
      if (slot.removed || this.#closing) {
        // Stopped serving, or stopping, while it opened: it takes nothing more.
        await worker.close();
        return;
      }
      trace('opened', { checkout: slot.id });
      if (tracing) worker.once('ready', () => trace('ready', { checkout: slot.id }));
      const touch = () => {
        slot.lastActivity = Date.now();
      };
      worker.on('active', (job) => {
        touch();
        if (job.id) slot.running.add(job.id);
      });
      const finished = (job: { id?: string } | undefined) => {
        touch();
        if (job?.id) slot.running.delete(job.id);
      };
      worker.on('completed', finished);
      worker.on('failed', finished);
      slot.worker = worker;
      touch();
    });
  }

  /** Held checkouts past their keep-warm time with an empty queue go back to being watched. */
  async #releaseIdle(): Promise<void> {
    const now = Date.now();
    const candidates = [...this.#slots.values()].filter(
      (slot) =>
        slot.state === 'held' && slot.worker !== null && slot.running.size === 0 && now - slot.lastActivity >= this.#options.keepWarmMs,
    );
    if (candidates.length === 0) return;
    const activity = new Map(candidates.map((slot) => [slot, slot.lastActivity] as const));
    for (const look of await this.#look(candidates)) {
      const { slot } = look;
      if (look.work) continue;
      void this.#inTurn(slot, async () => {
        // Something happened since the look (a job, a removal, a close): keep it as it is.
        if (slot.state !== 'held' || slot.removed || this.#closing || slot.lastActivity !== activity.get(slot) || slot.running.size > 0)
          return;
        const worker = slot.worker;
        slot.worker = null;
        // Watched from the position noted before the queue was found empty: a job added since then
        // is in the stream after it, so the watch sees it (and holds the checkout again, after this close).
        slot.state = 'idle';
        slot.cursor = look.lastEventId;
        this.#watchChanged();
        await worker?.close();
      });
    }
  }

  #queueCheck(slot: Slot): void {
    if (slot.removed || this.#closing) return;
    this.#pendingChecks.add(slot);
    if (this.#checkScheduled) return;
    this.#checkScheduled = true;
    // Checks asked for in the same turn (a worker starting with a thousand checkouts) go in one round.
    setTimeout(() => {
      this.#checkScheduled = false;
      const slots = [...this.#pendingChecks].filter((candidate) => candidate.state !== 'held' && !candidate.removed);
      this.#pendingChecks = new Set();
      void this.#checkAndWatch(slots).catch((error: Error) => {
        this.#options.log(`looking at idle checkouts: ${error.message}; trying again`);
        setTimeout(() => {
          for (const again of slots) this.#queueCheck(again);
        }, RETRY_MS).unref?.();
      });
    }, 0);
  }

  async #checkAndWatch(slots: Slot[]): Promise<void> {
    let changed = false;
    for (const look of await this.#look(slots)) {
      const { slot } = look;
      if (slot.state === 'held' || slot.removed) continue;
      if (look.work) {
        this.#acquire(slot);
      } else if (slot.state === 'checking') {
        slot.state = 'idle';
        slot.cursor = look.lastEventId;
        changed = true;
      }
    }
    if (changed) this.#watchChanged();
  }

  /**
   * Per checkout, in this order: the events stream's last id, then whether any job waits or runs.
   * A job added after the id was read is in the stream after it; one added before is counted.
   */
  async #look(slots: readonly Slot[]): Promise<Look[]> {
    const looks: Look[] = [];
    for (let start = 0; start < slots.length; start += CHECK_BATCH) {
      const batch = slots.slice(start, start + CHECK_BATCH);
      const pipeline = this.#options.connection.pipeline();
      for (const slot of batch) {
        pipeline
          .xrevrange(slot.events, '+', '-', 'COUNT', 1)
          .llen(`${slot.keyBase}wait`)
          .llen(`${slot.keyBase}active`)
          .zcard(`${slot.keyBase}delayed`)
          .zcard(`${slot.keyBase}prioritized`);
      }
      const replies = (await pipeline.exec()) ?? [];
      const failure = replies.find(([error]) => error);
      if (failure) throw failure[0] as Error;
      batch.forEach((slot, index) => {
        const [last, ...counts] = replies.slice(index * 5, index * 5 + 5).map(([, value]) => value);
        const lastEventId = (last as [string, string[]][] | null)?.[0]?.[0] ?? '0-0';
        looks.push({ slot, lastEventId, work: counts.some((count) => Number(count) > 0) });
      });
    }
    return looks;
  }

  /** Wakes the watch when the streams it waits on are no longer the ones to watch. */
  #watchChanged(): void {
    if (!this.#watchInFlight || this.#woken || this.#closing) return;
    this.#woken = true;
    // A pipeline, not MULTI: the ACL of docs/teams.md grants no transactions.
    void this.#options.connection
      .pipeline()
      .xadd(this.#wakeKey, 'MAXLEN', '1', '*', 'wake', '1')
      .pexpire(this.#wakeKey, 60_000)
      .exec()
      .catch(() => undefined);
  }

  async #watchLoop(): Promise<void> {
    while (!this.#closing) {
      const watched = [...this.#slots.values()].filter((slot) => slot.state === 'idle');
      this.#watchInFlight = true;
      this.#woken = false;
      let reply: [string, [string, string[]][]][] | null;
      try {
        reply = (await this.#watch.xread(
          'COUNT',
          WATCH_COUNT,
          'BLOCK',
          WATCH_BLOCK_MS,
          'STREAMS',
          this.#wakeKey,
          ...watched.map((slot) => slot.events),
          this.#wakeCursor,
          ...watched.map((slot) => slot.cursor),
        )) as [string, [string, string[]][]][] | null;
      } catch (error) {
        this.#watchInFlight = false;
        if (this.#closing) return;
        this.#options.log(`watching idle checkouts: ${(error as Error).message}; looking at them again`);
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        this.scanAll();
        continue;
      }
      this.#watchInFlight = false;
      for (const [stream, entries] of reply ?? []) {
        if (stream === this.#wakeKey) {
          this.#wakeCursor = entries.at(-1)?.[0] ?? this.#wakeCursor;
          continue;
        }
        const slot = this.#byStream.get(stream);
        if (slot?.state !== 'idle' || entries.length === 0) continue;
        slot.cursor = entries.at(-1)![0];
        const work = entries.find(([, fields]) => !NO_WORK_EVENTS.has(eventName(fields)));
        if (work) this.#acquire(slot, work[0]);
      }
    }
  }
}

function eventName(fields: readonly string[]): string {
  for (let index = 0; index + 1 < fields.length; index += 2) if (fields[index] === 'event') return fields[index + 1]!;
  return '';
}
