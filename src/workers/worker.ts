import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { assertPrefixFits, connectDurable, redactRedisUrl } from '../queue/connection.ts';
import { queueNameFor, repoIdentity } from '../queue/envelope.ts';
import type { JobEnvelope, RepoIdentity } from '../queue/envelope.ts';
import {
  HEARTBEAT_INTERVAL_MS,
  HEARTBEAT_TTL_MS,
  JOB_OPTIONS,
  discoveryRootsKey,
  heartbeatKey,
  parseRepositoryEntry,
  repositoriesKey,
  repositoryEntryValue,
} from '../queue/keys.ts';
import type { QueueConfig } from '../queue/keys.ts';
import { drainSpool, spooledFiles } from '../queue/spool.ts';
import { redisSettingsProblems } from '../queue/redisSettings.ts';
import { batonDir } from '../core/batonDir.ts';
import { processJobData, servedRepository } from './processor.ts';
import { recordApplied, recordFailed } from './jobRecords.ts';
import { LIFECYCLE_INTENTS } from '../core/events.ts';
import { recordEndpoint } from '../queue/endpoint.ts';
import type { ProcessedJob, ServedRepository } from './processor.ts';
import type { WorkspaceFingerprinter } from '../core/types.ts';

// The baton worker: ONE module that runs unchanged on Node, Bun and Deno. It serves one or more
// repositories, each through its own BullMQ queue consumed with concurrency 1 under a queue-wide
// global concurrency of 1, so at most one job per repository is applied at any moment across all
// worker processes. It also keeps a heartbeat (so callers know someone serves the repository),
// drains events that hooks spooled while Redis was down, and prunes the event journal.

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
  /** How long events stay deduplicated by the journal. */
  journalRetentionMs?: number;
  spoolPollMs?: number;
  discoverPollMs?: number;
  onJob?: (repository: ServedRepository, job: ProcessedJob, elapsedMs: number) => void;
}>;

export type BatonWorker = Readonly<{
  id: string;
  served(): readonly ServedRepository[];
  queues(): readonly Queue[];
  /** Finishes the active jobs, then stops; after `deadlineMs` it stops regardless. */
  close(deadlineMs?: number): Promise<{ clean: boolean }>;
}>;

type Serving = { repository: ServedRepository; queue: Queue; worker: Worker; draining: boolean };

const DEFAULT_JOURNAL_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

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
  // After a reconnect (e.g. Redis restarted), re-assert heartbeats and queue limits at once.
  connection.on('ready', () => {
    if (serving.size > 0 || discoverRoots.length > 0) void heartbeat().catch(() => undefined);
  });

  async function serve(identity: RepoIdentity): Promise<void> {
    if (serving.has(identity.id) || closing) return;
    const repository = servedRepository(identity.id, identity.root, options.createFingerprinter(), batonDir(identity.root));
    // Hooks and `baton task` of this repository find this Redis and prefix there (docs/hooks.md "Which Redis").
    try {
      recordEndpoint(identity.root, options.queue);
    } catch (error) {
      log(`${identity.root}: could not record the Redis endpoint for hooks: ${(error as Error).message}`);
    }
    const name = queueNameFor(identity.id);
    const queue = new Queue(name, { connection, prefix, skipVersionCheck: true });
    queue.on('error', (error: Error) => log(`queue ${name}: ${error.message}`));
    await queue.setGlobalConcurrency(1);
    const worker = new Worker(
      name,
      async (job: Job) => {
        const started = performance.now();
        const processed = await processJobData(repository, job.data);
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
    worker.on('error', (error: Error) => log(`worker ${name}: ${error.message}`));
    worker.on('failed', (job, error) => {
      log(`${identity.root}: job ${job?.id ?? '?'} failed: ${error.message}`);
      const intent = (job?.data as { intent?: unknown } | undefined)?.intent;
      // Bounded label values: a malformed job counts as `invalid`.
      void recordFailed(connection, prefix, identity.id, (LIFECYCLE_INTENTS as readonly unknown[]).includes(intent) ? String(intent) : 'invalid');
    });
    serving.set(identity.id, { repository, queue, worker, draining: false });
    await connection.hset(repositoriesKey(prefix), identity.id, repositoryEntryValue(identity));
    await heartbeat();
    log(`serving ${identity.root} (queue ${name})`);
  }

  async function heartbeat(): Promise<void> {
    const expiry = Date.now() + HEARTBEAT_TTL_MS;
    const pipeline = connection.pipeline();
    for (const { queue, repository } of serving.values()) {
      const key = heartbeatKey(prefix, queue.name);
      pipeline.zadd(key, expiry, workerId).zremrangebyscore(key, '-inf', Date.now()).pexpire(key, HEARTBEAT_TTL_MS * 4);
      pipeline.hset(repositoriesKey(prefix), repository.id, repositoryEntryValue({ root: repository.root, host: hostName }));
    }
    for (const root of discoverRoots) pipeline.hset(discoveryRootsKey(prefix), root, expiry);
    await pipeline.exec();
    // A Redis that restarted without persistence forgot the queue-wide limit: set it again, or
    // two worker processes could apply two jobs of one repository at once.
    await Promise.all([...serving.values()].map(({ queue }) => queue.setGlobalConcurrency(1)));
  }

  /**
   * A checkout re-cloned (or its id file removed) while the worker runs has a new id, so its hooks
   * and commands use a new queue: serve that one, and stop serving the old queue, whose waiting
   * events were meant for the checkout that is gone (left in Redis, visible in the dashboard).
   */
  async function followCheckoutIds(): Promise<void> {
    for (const [id, entry] of [...serving.entries()]) {
      let current: RepoIdentity;
      try {
        current = repoIdentity(entry.repository.root);
      } catch {
        continue; // moved away or unreadable: keep serving what we have
      }
      if (current.id === id || closing) continue;
      serving.delete(id);
      await entry.worker.close();
      await connection.zrem(heartbeatKey(prefix, entry.queue.name), workerId).catch(() => undefined);
      const waiting = await entry.queue.getWaitingCount().catch(() => 0);
      await entry.queue.close().catch(() => undefined);
      log(
        `${entry.repository.root}: checkout id changed from ${id} to ${current.id} (re-cloned, or .git/baton/checkout.json removed); ` +
          `now serving queue ${queueNameFor(current.id)}; queue ${entry.queue.name} is orphaned with ${waiting} waiting event(s)`,
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
          entry.queue.add(envelope.intent, envelope, { ...JOB_OPTIONS, jobId: envelope.eventId }).then(() => undefined),
        );
        if (report.added > 0) log(`${entry.repository.root}: queued ${report.added} spooled event(s)`);
        for (const name of report.rejected) log(`${entry.repository.root}: spooled file ${name} is unreadable, moved to spool/rejected`);
      } catch (error) {
        log(`${entry.repository.root}: spool drain paused: ${(error as Error).message}`);
      } finally {
        entry.draining = false;
      }
    }
  }

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

  for (const repo of options.repos) await serve(repoIdentity(repo));
  if (discoverRoots.length > 0) {
    await heartbeat();
    await discover();
  }
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
    queues: () => [...serving.values()].map((entry) => entry.queue),
    async close(deadlineMs = 10_000) {
      closing = true;
      for (const timer of timers) clearInterval(timer);
      const graceful = Promise.all([...serving.values()].map((entry) => entry.worker.close())).then(() => true);
      const deadline = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), deadlineMs).unref?.());
      const clean = await Promise.race([graceful, deadline]);
      if (!clean) await Promise.all([...serving.values()].map((entry) => entry.worker.close(true).catch(() => undefined)));
      try {
        const pipeline = connection.pipeline();
        for (const { queue } of serving.values()) pipeline.zrem(heartbeatKey(prefix, queue.name), workerId);
        await pipeline.exec();
      } catch {
        // Heartbeats expire on their own.
      }
      await Promise.all([...serving.values()].map((entry) => entry.queue.close().catch(() => undefined)));
      connection.disconnect();
      return { clean };
    },
  };
}

function realpathOrNull(dir: string): string | null {
  try {
    return fs.realpathSync.native(dir);
  } catch {
    return null;
  }
}

function safeIdentity(root: string): RepoIdentity | null {
  try {
    if (!fs.existsSync(path.join(root, '.git'))) return null;
    return repoIdentity(root);
  } catch {
    return null;
  }
}

/** A queue store that evicts or forgets loses jobs: say so at start (docs/architecture.md "Deployment (compose)"). */
async function warnAboutRedisConfig(connection: Redis, log: WorkerLog): Promise<void> {
  // CONFIG may be disabled (managed Redis): nothing to check then.
  for (const problem of (await redisSettingsProblems(connection)) ?? []) log(`warning: ${problem}`);
}
