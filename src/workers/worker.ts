import os from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { DEFAULT_GRACES } from '../core/reconciliation.ts';
import type { Graces } from '../core/reconciliation.ts';
import type { WorkspaceFingerprinter } from '../core/types.ts';
import { repoIdentity } from '../queue/checkoutId.ts';
import { assertPrefixFits, connectDurable, redactRedisUrl } from '../queue/connection.ts';
import { HEARTBEAT_INTERVAL_MS } from '../queue/keys.ts';
import type { QueueConfig } from '../queue/keys.ts';
import { warnAboutRedisConfig } from '../queue/redisSettings.ts';
import { realpathOrNull } from './checkouts.ts';
import { QueueConsumers } from './consumer.ts';
import type { ConsumerOptions } from './consumer.ts';
import { discover } from './discovery.ts';
import { countRound } from './dutyRounds.ts';
import type { CountedDuty } from './dutyRounds.ts';
import { followCheckoutIds } from './followCheckoutIds.ts';
import { ProcessHeartbeat, announce } from './heartbeat.ts';
import { trace } from './trace.ts';
import { pruneJournals } from './journal.ts';
import { OnDemandConsumers } from './onDemand.ts';
import type { ServedRepository } from './processor.ts';
import { reconciliationScan, scanIntervalMs } from './reconciler.ts';
import { ServedCheckouts } from './serving.ts';
import { SPARE_CONNECTIONS, keepSpareConnections } from './spareConnections.ts';
import type { WorkerLog, WorkerScope } from './serving.ts';
import { closeWorker } from './shutdown.ts';
import { flushJobTraces } from './jobTrace.ts';
import { drainSpools } from './spoolDrain.ts';
import { RepositoryWorktrees } from './worktrees.ts';

// The baton worker: ONE module that runs unchanged on Node, Bun and Deno. It serves one or more
// repositories, each through its own BullMQ queue consumed with concurrency 1 under a queue-wide
// global concurrency of 1, so at most one job per repository is applied at any moment across all
// worker processes. This module composes its duties, each a module of its own:
//
//   serving.ts            the served checkouts and their queues (what every duty shares)
//   heartbeat.ts          one heartbeat for the process, and its entry in each served queue
//   consumer.ts           consuming a checkout's queue: apply each job (processor.ts), record it
//   onDemand.ts           consume only while a checkout has work; watch the idle ones together
//   spareConnections.ts   a connection opened beforehand for the next checkout that gets work
//   discovery.ts          --discover: serve the registered checkouts inside the allowed roots
//   followCheckoutIds.ts  a checkout re-cloned meanwhile: serve its new queue
//   worktrees.ts          the linked worktrees of a served repository: serve added ones, drop removed ones
//   spoolDrain.ts         queue what hooks spooled while Redis was down
//   reconciler.ts         queue a reconcile job for a delegation past its grace
//   dutyRounds.ts         count the completed rounds of the periodic duties (evidence a round ran)
//   journal.ts            the event journal, pruned of what is past the deduplication window
//   shutdown.ts           stopping: finish the active jobs, leave the heartbeat sets, disconnect

export type { WorkerLog } from './serving.ts';

export type BatonWorkerOptions = ConsumerOptions &
  Readonly<{
    queue: QueueConfig;
    repos: readonly string[];
    /** Serve any repository that enqueues a job, when its real path is inside one of these roots. */
    discoverRoots?: readonly string[];
    createFingerprinter: () => WorkspaceFingerprinter;
    log?: WorkerLog;
    /** How long a checkout keeps its queue consumer after its last job (docs/architecture.md "Serving on demand"). */
    keepWarmMs?: number;
    /** How long events stay deduplicated by the journal. */
    journalRetentionMs?: number;
    spoolPollMs?: number;
    discoverPollMs?: number;
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

const DEFAULT_JOURNAL_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
export const DEFAULT_KEEP_WARM_MS = 120_000;
const JOURNAL_PRUNE_INTERVAL_MS = 60 * 60 * 1000;

export async function startBatonWorker(options: BatonWorkerOptions): Promise<BatonWorker> {
  const workerId = `w-${randomUUID()}`;
  const log = options.log ?? (() => undefined);
  const { prefix } = options.queue;
  assertPrefixFits(options.queue.redisUrl, prefix);
  const connection: Redis = connectDurable(options.queue.redisUrl, `baton-worker-${workerId}`);
  connection.on('error', (error: Error) => {
    trace('redis-error', { connection: 'worker', message: error.message });
    log(`redis: ${error.message}`);
  });
  let closing = false;
  const scope: WorkerScope = { workerId, hostName: os.hostname(), connection, prefix, log, closing: () => closing };
  const graces = options.graces ?? DEFAULT_GRACES;
  const discoverRoots = (options.discoverRoots ?? []).map((root) => realpathOrNull(root)).filter((root): root is string => root !== null);
  await warnAboutRedisConfig(connection, log);

  const checkouts: ServedCheckouts = new ServedCheckouts(scope, {
    queue: options.queue,
    graces,
    createFingerprinter: options.createFingerprinter,
    async onServed(entry) {
      await announce(scope, [entry], checkouts.limits);
      consumers.add(entry.repository.id, entry.queueName);
      log(`serving ${entry.repository.root} (queue ${entry.queueName})`);
    },
  });
  const queueConsumers = new QueueConsumers(scope, checkouts, options);
  const consumers = new OnDemandConsumers({
    connection,
    redisUrl: options.queue.redisUrl,
    prefix,
    workerId,
    keepWarmMs: options.keepWarmMs ?? DEFAULT_KEEP_WARM_MS,
    log,
    consume: (id) => queueConsumers.consume(id),
  });
  // As many spares as there are checkouts that could get work, up to SPARE_CONNECTIONS.
  const spares = keepSpareConnections(
    connection,
    () => Math.min(SPARE_CONNECTIONS, checkouts.entries().length - consumers.held().length),
    `baton-spare-${workerId}`,
    log,
  );
  const heartbeat = new ProcessHeartbeat(scope, checkouts, consumers, discoverRoots);
  // After a reconnect (e.g. Redis restarted), beat at once (and re-announce if Redis forgot us).
  connection.on('ready', () => {
    if (heartbeat.beaten) void heartbeat.beat().catch(() => undefined);
  });

  const timers: ReturnType<typeof setInterval>[] = [];
  /** Runs `duty` every `ms` (never two at once); a `counted` duty's completed rounds are counted in Redis (dutyRounds.ts). */
  const every = (ms: number, duty: () => unknown, counted?: CountedDuty) => {
    let running = false;
    const timer = setInterval(() => {
      if (running || closing) return;
      running = true;
      Promise.resolve()
        .then(duty)
        .then(() => (counted && !closing ? countRound(scope, counted) : undefined))
        .catch((error: unknown) => log(`background task: ${(error as Error).message}`))
        .finally(() => {
          running = false;
        });
    }, ms);
    timer.unref?.();
    timers.push(timer);
  };
  // The process beats before it serves anything: its queue entries mean something from the start.
  await heartbeat.beat();
  // And it keeps beating while it sets up: announcing hundreds of checkouts and draining their spools
  // can outlast the heartbeat's TTL on a loaded machine, and hooks would take the worker for gone
  // meanwhile (seen in test/workers/onDemand.test.ts: 200 checkouts at load 9). Once it serves, the
  // same duty first follows its checkouts' ids and then adjusts the spares.
  let serving = false;
  const worktrees = new RepositoryWorktrees(scope, checkouts, consumers);
  every(HEARTBEAT_INTERVAL_MS, () =>
    serving
      ? followCheckoutIds(scope, checkouts, consumers)
          .then(() => worktrees.follow())
          .then(() => heartbeat.beat())
          .then(() => spares.adjust())
      : // A beat that fails while it sets up is not reported: the next one comes within the interval.
        heartbeat.beat().catch(() => undefined),
  );
  try {
    for (const repo of options.repos) {
      await checkouts.serve(repoIdentity(repo));
      worktrees.add(repo);
    }
    await worktrees.follow();
    if (discoverRoots.length > 0) await discover(scope, checkouts, discoverRoots, worktrees);
    await drainSpools(scope, checkouts, consumers);
  } catch (error) {
    for (const timer of timers) clearInterval(timer);
    throw error;
  }
  serving = true;
  spares.adjust();
  const retention = options.journalRetentionMs ?? DEFAULT_JOURNAL_RETENTION_MS;
  pruneJournals(checkouts.repositories(), retention);

  every(options.spoolPollMs ?? 1_000, () => drainSpools(scope, checkouts, consumers));
  if (discoverRoots.length > 0)
    every(options.discoverPollMs ?? 2_000, () => discover(scope, checkouts, discoverRoots, worktrees), 'discover');
  every(scanIntervalMs(graces), reconciliationScan(scope, checkouts, consumers, graces), 'reconcile-scan');
  every(JOURNAL_PRUNE_INTERVAL_MS, () => pruneJournals(checkouts.repositories(), retention));
  log(`worker ${workerId} connected to ${redactRedisUrl(options.queue.redisUrl)} (prefix ${prefix})`);

  return {
    id: workerId,
    served: () => checkouts.repositories(),
    queues: () => checkouts.entries().map((entry) => checkouts.queueOf(entry)),
    held: () => consumers.held(),
    close(deadlineMs = 10_000) {
      closing = true;
      for (const timer of timers) clearInterval(timer);
      spares.close();
      // The spans still pending go out last (docs/architecture.md "Traces"; nothing when not tracing).
      return closeWorker(scope, { consumers, checkouts, applying: () => queueConsumers.applying }, deadlineMs).then(async (closed) => {
        await flushJobTraces();
        return closed;
      });
    },
  };
}
