import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { assertPrefixFits, connectDurable, redactRedisUrl } from '../queue/connection.ts';
import { withDeadline } from '../base/deadline.ts';
import { queueNameFor } from '../queue/keys.ts';
import { repoIdentity } from '../queue/checkoutId.ts';
import type { JobEnvelope } from '../queue/envelope.ts';
import type { RepoIdentity } from '../queue/checkoutId.ts';
import {
  HEARTBEAT_INTERVAL_MS,
  HEARTBEAT_TTL_MS,
  JOB_OPTIONS,
  discoveryRootsKey,
  heartbeatKey,
  liveServers,
  parseRepositoryEntry,
  repositoriesKey,
  repositoryEntryValue,
  scorePairs,
  workersKey,
} from '../queue/keys.ts';
import type { QueueConfig } from '../queue/keys.ts';
import { drainSpool, spooledFiles } from '../queue/spool.ts';
import { warnAboutRedisConfig } from '../queue/redisSettings.ts';
import { checkoutStamp, realpathOrNull, safeIdentity } from './checkouts.ts';
import { batonDir } from '../base/batonDir.ts';
import { CLOSE_STEP_MS, OnDemandConsumers } from './onDemand.ts';
import { processJobData, servedRepository } from './processor.ts';
import { recordApplied, recordFailed } from './jobRecords.ts';
import { LIFECYCLE_INTENTS } from '../core/intents.ts';
import { recordEndpoint } from '../queue/endpoint.ts';
import type { ProcessedJob, ServedRepository } from './processor.ts';
import type { WorkspaceFingerprinter } from '../core/types.ts';
import { DEFAULT_GRACES } from '../core/orchestration/index.ts';
import type { Graces } from '../core/orchestration/index.ts';
import { scanForReconciliation, scanIntervalMs } from './reconciler.ts';

// The baton worker: ONE module that runs unchanged on Node, Bun and Deno. It serves one or more
// repositories, each through its own BullMQ queue consumed with concurrency 1 under a queue-wide
// global concurrency of 1, so at most one job per repository is applied at any moment across all
// worker processes. It consumes a queue only while the checkout has work (onDemand.ts; idle
// checkouts are watched together on one connection), keeps one heartbeat for the whole process
// (so callers know someone serves the repository), drains events that hooks spooled while Redis was
// down, and prunes the event journal.

export type WorkerLog = (line: string) => void;

export type BatonWorkerOptions = Readonly<{
  queue: QueueConfig;
  repos: readonly string[];
  /** Serve any repository that enqueues a job, when its real path is inside one of these roots. */
  discoverRoots?: readonly string[];
  createFingerprinter: () => WorkspaceFingerprinter;
  log?: WorkerLog;
  /** BullMQ lock duration: how soon a job of a killed worker is handed to another. */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** How long a checkout keeps its queue consumer after its last job (docs/architecture.md "Serving on demand"). */
  keepWarmMs?: number;
  /** How long events stay deduplicated by the journal. */
  journalRetentionMs?: number;
  spoolPollMs?: number;
  discoverPollMs?: number;
  onJob?: (repository: ServedRepository, job: ProcessedJob, elapsedMs: number) => void;
  /** How long a delegation may wait for its child before the worker settles it (docs/architecture.md "Reconciliation"). */
  graces?: Graces;
}>;

export type BatonWorker = Readonly<{
  id: string;
  served(): readonly ServedRepository[];
  /** A Queue per served repository (made when first asked for: the dashboard's list). */
  queues(): readonly Queue[];
  /** Ids of the checkouts whose queue this process consumes right now (the others are watched). */
  held(): readonly string[];
  /** Finishes the active jobs, then stops; after `deadlineMs` it stops regardless. */
  close(deadlineMs?: number): Promise<{ clean: boolean }>;
}>;

type Serving = {
  repository: ServedRepository;
  queueName: string;
  /** Made on first use (a consumer, a spool drain, the dashboard): an idle checkout needs none. */
  queue: Queue | null;
  draining: boolean;
  /** What the checkout's id file and .git looked like when its id was last read (see followCheckoutIds). */
  idStamp: string;
};

const DEFAULT_JOURNAL_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
export const DEFAULT_KEEP_WARM_MS = 120_000;
/** A dead worker's entry stays this long in the workers key, so that every live worker notices it. */
const DEAD_WORKER_GRACE_MS = 60_000;

export async function startBatonWorker(options: BatonWorkerOptions): Promise<BatonWorker> {
  const workerId = `w-${randomUUID()}`;
  const hostName = os.hostname();
  const log = options.log ?? (() => undefined);
  const { prefix } = options.queue;
  assertPrefixFits(options.queue.redisUrl, prefix);
  const connection: Redis = connectDurable(options.queue.redisUrl, `baton-worker-${workerId}`);
  connection.on('error', (error: Error) => log(`redis: ${error.message}`));
  const serving = new Map<string, Serving>();
  const timers: ReturnType<typeof setInterval>[] = [];
  let closing = false;

  const discoverRoots = (options.discoverRoots ?? []).map((root) => realpathOrNull(root)).filter((root): root is string => root !== null);
  await warnAboutRedisConfig(connection, log);

  const queueOf = (entry: Serving): Queue => {
    if (!entry.queue) {
      const queue = new Queue(entry.queueName, { connection, prefix, skipVersionCheck: true });
      queue.on('error', (error: Error) => log(`queue ${entry.queueName}: ${error.message}`));
      entry.queue = queue;
    }
    return entry.queue;
  };

  /** A BullMQ Worker on the checkout's queue, once the queue-wide limit is set (it may be new, or Redis forgot it). */
  /** Jobs being applied right now: at a stop, a close that timed out with none left nothing unfinished. */
  let applying = 0;

  async function consume(id: string): Promise<Worker> {
    const entry = serving.get(id);
    if (!entry) throw new Error(`checkout ${id} is no longer served`);
    const { repository, queueName } = entry;
    await queueOf(entry).setGlobalConcurrency(1);
    const worker = new Worker(
      queueName,
      async (job: Job) => {
        const started = performance.now();
        applying += 1;
        const processed = await processJobData(repository, job.data).finally(() => {
          applying -= 1;
        });
        recordApplied(connection, prefix, repository, job, processed, log);
        options.onJob?.(repository, processed, performance.now() - started);
        return processed.result;
      },
      {
        connection,
        prefix,
        concurrency: 1,
        name: workerId,
        skipVersionCheck: true,
        lockDuration: options.lockDurationMs ?? 15_000,
        stalledInterval: options.stalledIntervalMs ?? 5_000,
        // Applying is idempotent (journal), so a job may be handed over several times.
        maxStalledCount: 10,
      },
    );
    worker.on('error', (error: Error) => log(`worker ${queueName}: ${error.message}`));
    worker.on('failed', (job, error) => {
      log(`${repository.root}: job ${job?.id ?? '?'} failed: ${error.message}`);
      const intent = (job?.data as { intent?: unknown } | undefined)?.intent;
      // Bounded label values: a malformed job counts as `invalid`.
      void recordFailed(connection, prefix, repository.id, (LIFECYCLE_INTENTS as readonly unknown[]).includes(intent) ? String(intent) : 'invalid');
    });
    return worker;
  }

  const consumers = new OnDemandConsumers({
    connection,
    redisUrl: options.queue.redisUrl,
    prefix,
    workerId,
    keepWarmMs: options.keepWarmMs ?? DEFAULT_KEEP_WARM_MS,
    log,
    consume,
  });

  /**
   * Records that this process serves the checkouts (one entry in each queue's heartbeat set, kept
   * while it serves; liveness is the process's single heartbeat), their registry entries, and
   * drops entries of workers that are gone.
   */
  async function announce(entries: readonly Serving[]): Promise<void> {
    if (entries.length === 0) return;
    const now = Date.now();
    const pipeline = connection.pipeline();
    pipeline.zrangebyscore(workersKey(prefix), now, '+inf', 'WITHSCORES');
    for (const { queueName, repository } of entries) {
      pipeline.zadd(heartbeatKey(prefix, queueName), now, workerId).zrange(heartbeatKey(prefix, queueName), '0', '-1', 'WITHSCORES');
      pipeline.hset(repositoriesKey(prefix), repository.id, repositoryEntryValue({ root: repository.root, host: hostName }));
    }
    const replies = (await pipeline.exec()) ?? [];
    const failure = replies.find(([error]) => error);
    if (failure) throw failure[0] as Error;
    const live = (replies[0]?.[1] as unknown[] | undefined) ?? [];
    const cleanup = connection.pipeline();
    entries.forEach(({ queueName }, index) => {
      const members = (replies[2 + index * 3]?.[1] as unknown[] | undefined) ?? [];
      const alive = new Set(liveServers(members, live, now).map(([id]) => id));
      const gone = scorePairs(members).map(([id]) => id).filter((id) => id !== workerId && !alive.has(id));
      if (gone.length > 0) cleanup.zrem(heartbeatKey(prefix, queueName), ...gone);
    });
    if (cleanup.length > 0) await cleanup.exec();
  }

  async function serve(identity: RepoIdentity): Promise<void> {
    if (serving.has(identity.id) || closing) return;
    const repository = servedRepository(identity.id, identity.root, options.createFingerprinter(), batonDir(identity.root));
    // Hooks and `baton task` of this repository find this Redis and prefix there (docs/hooks.md "Which Redis").
    try {
      recordEndpoint(identity.root, options.queue, new Date(), graces);
    } catch (error) {
      log(`${identity.root}: could not record the Redis endpoint for hooks: ${(error as Error).message}`);
    }
    const queueName = queueNameFor(identity.id);
    const entry: Serving = { repository, queueName, queue: null, draining: false, idStamp: checkoutStamp(identity.root) };
    serving.set(identity.id, entry);
    await announce([entry]);
    consumers.add(identity.id, queueName);
    log(`serving ${identity.root} (queue ${queueName})`);
  }

  /** Workers seen alive at the last beat, and dead ones already looked after. */
  let liveWorkers = new Set<string>();
  const deadWorkers = new Set<string>();
  let beaten = false;

  /**
   * One heartbeat for the whole process, however many checkouts it serves. When another worker
   * stopped beating (killed, or stopped), its active jobs may be left on checkouts nobody consumes
   * now: look at every idle checkout (a held one's stalled checker recovers them).
   */
  async function heartbeat(): Promise<void> {
    const now = Date.now();
    const expiry = now + HEARTBEAT_TTL_MS;
    const pipeline = connection.pipeline();
    pipeline.zscore(workersKey(prefix), workerId);
    pipeline.zadd(workersKey(prefix), expiry, workerId);
    pipeline.zremrangebyscore(workersKey(prefix), '-inf', now - DEAD_WORKER_GRACE_MS);
    pipeline.zrange(workersKey(prefix), '0', '-1', 'WITHSCORES');
    for (const root of discoverRoots) pipeline.hset(discoveryRootsKey(prefix), root, expiry);
    const replies = (await pipeline.exec()) ?? [];
    const failure = replies.find(([error]) => error);
    if (failure) throw failure[0] as Error;
    const ownScore = replies[0]?.[1] as string | null;
    const entries = scorePairs((replies[3]?.[1] as unknown[] | undefined) ?? []);
    const present = new Set<string>();
    const alive = new Set<string>();
    let died = false;
    for (const [id, expiresAt] of entries) {
      present.add(id);
      if (id === workerId) continue;
      if (expiresAt > now) alive.add(id);
      else if (!deadWorkers.has(id)) {
        deadWorkers.add(id);
        died = true;
      }
    }
    for (const id of liveWorkers) if (!present.has(id)) died = true; // stopped, or expired and already removed
    for (const id of deadWorkers) if (!present.has(id)) deadWorkers.delete(id);
    liveWorkers = alive;
    // Taken for dead (a stalled event loop, a Redis that restarted empty): others may have dropped
    // this process from the queues' heartbeat sets, so say again what it serves.
    const wasDead = beaten && (ownScore === null || Number(ownScore) <= now);
    beaten = true;
    if (wasDead) await announce([...serving.values()]);
    if (died) consumers.scanAll();
    // A Redis that restarted without persistence forgot the queue-wide limit: set it again on the
    // queues consumed here, or two worker processes could apply two jobs of one repository at once.
    await Promise.all(
      consumers.held().flatMap((id) => {
        const entry = serving.get(id);
        return entry ? [queueOf(entry).setGlobalConcurrency(1)] : [];
      }),
    );
  }

  // After a reconnect (e.g. Redis restarted), beat at once (and re-announce if Redis forgot us).
  connection.on('ready', () => {
    if (beaten) void heartbeat().catch(() => undefined);
  });

  /**
   * A checkout re-cloned (or its id file removed) while the worker runs has a new id, so its hooks
   * and commands use a new queue: serve that one, and stop serving the old queue, whose waiting
   * events were meant for the checkout that is gone (left in Redis, visible in the dashboard).
   * The id is read again only when the id file or `.git` changed (a stat each, per checkout).
   */
  async function followCheckoutIds(): Promise<void> {
    for (const [id, entry] of [...serving.entries()]) {
      const stamp = checkoutStamp(entry.repository.root);
      if (stamp === entry.idStamp) continue;
      let current: RepoIdentity;
      try {
        current = repoIdentity(entry.repository.root);
      } catch {
        continue; // moved away or unreadable: keep serving what we have
      }
      entry.idStamp = checkoutStamp(entry.repository.root);
      if (current.id === id || closing) continue;
      serving.delete(id);
      await consumers.remove(id);
      await connection.zrem(heartbeatKey(prefix, entry.queueName), workerId).catch(() => undefined);
      const waiting = await queueOf(entry).getWaitingCount().catch(() => 0);
      await entry.queue?.close().catch(() => undefined);
      log(
        `${entry.repository.root}: checkout id changed from ${id} to ${current.id} (re-cloned, or .git/baton/checkout.json removed); ` +
          `now serving queue ${queueNameFor(current.id)}; queue ${entry.queueName} is orphaned with ${waiting} waiting event(s)`,
      );
      await serve(current);
    }
  }

  async function drainSpools(): Promise<void> {
    for (const entry of serving.values()) {
      if (entry.draining || spooledFiles(entry.repository.root).length === 0) continue;
      entry.draining = true;
      try {
        const report = await drainSpool(entry.repository.root, (envelope: JobEnvelope) =>
          queueOf(entry).add(envelope.intent, envelope, { ...JOB_OPTIONS, jobId: envelope.eventId }).then(() => undefined),
        );
        if (report.added > 0) {
          log(`${entry.repository.root}: queued ${report.added} spooled event(s)`);
          consumers.demand(entry.repository.id);
        }
        for (const name of report.rejected) log(`${entry.repository.root}: spooled file ${name} is unreadable, moved to spool/rejected`);
      } catch (error) {
        log(`${entry.repository.root}: spool drain paused: ${(error as Error).message}`);
      } finally {
        entry.draining = false;
      }
    }
  }

  /** Reconcile jobs this process queued (logged once; BullMQ keeps a second add of the id a no-op). */
  const reconciling = new Set<string>();
  const graces = options.graces ?? DEFAULT_GRACES;
  const reconcileDue = () =>
    scanForReconciliation({
      graces,
      log,
      served: () => [...serving.values()].map((entry) => entry.repository),
      enqueue: async (repository, envelope) => {
        const entry = serving.get(repository.id);
        if (!entry || closing) return;
        await queueOf(entry).add(envelope.intent, envelope, { ...JOB_OPTIONS, jobId: envelope.eventId });
        consumers.demand(repository.id);
        if (reconciling.has(envelope.eventId)) return;
        if (reconciling.size > 10_000) reconciling.clear();
        reconciling.add(envelope.eventId);
        const args = envelope.args as { kind: string; receiptId: string; since: string };
        log(`${repository.root}: ${envelope.taskRef}: delegation ${args.receiptId} waited past its grace since ${args.since}; queued reconcile (${args.kind})`);
      },
    });

  async function discover(): Promise<void> {
    const known = await connection.hgetall(repositoriesKey(prefix));
    for (const [id, value] of Object.entries(known)) {
      if (serving.has(id)) continue;
      // Only inside the allowed roots (checked before reading the checkout, which would create its
      // id file); another machine's checkout may be recorded at a path that exists here too: the id decides.
      const real = realpathOrNull(parseRepositoryEntry(value).root);
      if (!real || !discoverRoots.some((allowed) => real === allowed || real.startsWith(`${allowed}${path.sep}`))) continue;
      const identity = safeIdentity(real);
      if (!identity || identity.id !== id) continue;
      await serve(identity);
    }
  }

  // The process beats before it serves anything: its queue entries mean something from the start.
  await heartbeat();
  for (const repo of options.repos) await serve(repoIdentity(repo));
  if (discoverRoots.length > 0) await discover();
  await drainSpools();

  const every = (ms: number, task: () => Promise<unknown>) => {
    let running = false;
    const timer = setInterval(() => {
      if (running || closing) return;
      running = true;
      task()
        .catch((error: unknown) => log(`background task: ${(error as Error).message}`))
        .finally(() => {
          running = false;
        });
    }, ms);
    timer.unref?.();
    timers.push(timer);
  };
  every(HEARTBEAT_INTERVAL_MS, () => followCheckoutIds().then(heartbeat));
  every(options.spoolPollMs ?? 1_000, drainSpools);
  if (discoverRoots.length > 0) every(options.discoverPollMs ?? 2_000, discover);
  every(scanIntervalMs(graces), reconcileDue);
  const retention = options.journalRetentionMs ?? DEFAULT_JOURNAL_RETENTION_MS;
  const pruneJournals = async () => {
    for (const { repository } of serving.values()) repository.journal.prune(retention);
  };
  await pruneJournals();
  every(60 * 60 * 1000, pruneJournals);
  log(`worker ${workerId} connected to ${redactRedisUrl(options.queue.redisUrl)} (prefix ${prefix})`);

  return {
    id: workerId,
    served: () => [...serving.values()].map((entry) => entry.repository),
    queues: () => [...serving.values()].map(queueOf),
    held: () => consumers.held(),
    async close(deadlineMs = 10_000) {
      closing = true;
      for (const timer of timers) clearInterval(timer);
      const { clean } = await consumers.close(deadlineMs);
      try {
        const pipeline = connection.pipeline();
        pipeline.zrem(workersKey(prefix), workerId);
        for (const { queueName } of serving.values()) pipeline.zrem(heartbeatKey(prefix, queueName), workerId);
        // Bounded: with Redis gone, the commands would wait for it forever.
        await withDeadline(pipeline.exec(), CLOSE_STEP_MS, 'Redis did not answer');
      } catch {
        // The process heartbeat expires on its own; other workers drop the stale entries.
      }
      await Promise.all([...serving.values()].map((entry) => (entry.queue ? withDeadline(entry.queue.close(), CLOSE_STEP_MS, 'Redis did not answer').catch(() => undefined) : undefined)));
      connection.disconnect();
      // BullMQ's graceful close also waits for Redis: when Redis is gone it times out even though no
      // job was being applied, and then nothing is unfinished.
      return { clean: clean || applying === 0 };
    },
  };
}
