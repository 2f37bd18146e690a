import { evalInsteadOfEvalsha, plainJobRawCommands } from './addJob.ts';
import { queueNameFor } from './keys.ts';
import type { JobEnvelope } from './envelope.ts';
import type { RepoIdentity } from './checkoutId.ts';

/** The checkout a hook enqueues for (an envelope's `repo` will do: host is informational). */
export type QueueRepo = Pick<RepoIdentity, 'id' | 'root'> & Readonly<{ host?: string }>;
import { JOB_OPTIONS, eventsStreamKey, jobKey, repositoriesKey, repositoryEntryValue, servingCheck } from './keys.ts';
import type { QueueConfig } from './keys.ts';
import { fieldsToRecord, outcomeFromJobFields, resultSchema, completedOutcome, workerServes } from './outcome.ts';
import type { JobOutcome } from './outcome.ts';
import { RedisReplyError, RespClient, rawRedisTarget } from './resp.ts';
import type { RespArg, RespReply, RespTarget } from './resp.ts';
import type { Withdrawal } from './withdraw.ts';
import { mainRepositoryOf } from '../base/repoRoot.ts';

// The hook's side of a repository queue over the raw RESP client (resp.ts): what
// RepositoryQueueClient (client.ts) does for enqueue / worker check / wait, without loading ioredis,
// BullMQ or zod. The job is added by BullMQ's own script (addJob.ts), so it is the job Queue.add
// would create (test/queue/addJob.test.ts compares both byte for byte).

/** What `deliver` (src/cli/hook.ts) needs from a queue transport; RepositoryQueueClient has the same shape. */
export interface HookQueue {
  enqueue(envelope: JobEnvelope): Promise<void>;
  workerAvailable(): Promise<boolean>;
  waitFor(jobId: string, timeoutMs: number): Promise<JobOutcome>;
  /** Removes the job unless a worker has taken it (src/queue/withdraw.ts); throws when Redis cannot be asked. */
  withdraw(jobId: string): Promise<Withdrawal>;
  close(): Promise<void>;
}

/**
 * The raw target for a queue configuration, or null when it needs ioredis (cluster, sentinel,
 * options the raw client lacks). BATON_HOOK_TRANSPORT=ioredis forces ioredis (a way out should the
 * raw client ever misread a server, and how the tests run both paths).
 */
export function rawTargetFor(config: QueueConfig, env: Record<string, string | undefined> = process.env): RespTarget | null {
  if (env.BATON_HOOK_TRANSPORT === 'ioredis') return null;
  // Any connection setting besides the URL and prefix (e.g. a cluster flag) is one the raw client does not know.
  for (const [key, value] of Object.entries(config) as [string, unknown][]) {
    if (key !== 'redisUrl' && key !== 'prefix' && key !== 'mainQueue' && value !== undefined && value !== null && value !== false)
      return null;
  }
  return rawRedisTarget(config.redisUrl);
}

export class RawQueueClient implements HookQueue {
  readonly queueName: string;
  readonly #redis: RespClient;
  readonly #prefix: string;
  readonly #repo: QueueRepo;
  readonly #mainQueue: string | undefined;
  /** Where in the events stream waiting starts (noted before the job could complete); null until noted. */
  #streamCursor: string | null = null;
  /** The worker check made in the same round trip as the last enqueue, until workerAvailable reads it. */
  #workerSeen: boolean | null = null;

  private constructor(redis: RespClient, prefix: string, repo: QueueRepo, mainQueue: string | undefined) {
    this.queueName = queueNameFor(repo.id);
    this.#redis = redis;
    this.#prefix = prefix;
    this.#repo = repo;
    this.#mainQueue = mainQueue;
  }

  static async connect(
    target: RespTarget,
    prefix: string,
    repo: QueueRepo,
    connectTimeoutMs: number,
    mainQueue?: string,
  ): Promise<RawQueueClient> {
    return new RawQueueClient(await RespClient.connect(target, connectTimeoutMs), prefix, repo, mainQueue);
  }

  /**
   * Adds the envelope as job `eventId` (a retained job with that id is left alone), in one round
   * trip that also notes where the events stream is (so waiting cannot miss the job's completion),
   * registers the repository and checks for a worker.
   */
  async enqueue(envelope: JobEnvelope): Promise<void> {
    const job = plainJobRawCommands({
      prefix: this.#prefix,
      queueName: this.queueName,
      name: envelope.intent,
      data: envelope,
      jobId: envelope.eventId,
      opts: JOB_OPTIONS,
    });
    const now = Date.now();
    const replies = await this.#redis.pipeline([
      ['XREVRANGE', eventsStreamKey(this.#prefix, this.queueName), '+', '-', 'COUNT', 1],
      [
        'HSET',
        repositoriesKey(this.#prefix),
        this.#repo.id,
        repositoryEntryValue({ ...this.#repo, main: mainRepositoryOf(this.#repo.root) }),
      ],
      job.meta,
      job.evalsha,
      ...this.#workerCheck(now),
    ]);
    let added = replies[3];
    if (added instanceof RedisReplyError && added.code === 'NOSCRIPT') {
      // The server has not seen the script since it started: send its text once (it caches it by sha).
      [added] = await this.#redis.pipeline([evalInsteadOfEvalsha(job.evalsha)]);
    }
    const failure = [...replies.slice(0, 3), added, ...replies.slice(4)].find((reply) => reply instanceof RedisReplyError);
    if (failure) throw failure;
    if (typeof added === 'number' && added < 0) throw new Error(`Redis refused job ${envelope.eventId} (BullMQ code ${added})`);
    const last = replies[0];
    this.#streamCursor = lastStreamId(last ?? null);
    this.#workerSeen = this.#workerFrom(replies.slice(4), now);
  }

  /**
   * True when a live worker serves this queue, or a live discovering worker covers the root. The
   * first call after an enqueue answers with the check made in its round trip; any later call asks
   * Redis again (a caller that keeps looking, e.g. `baton task` right after Redis restarted, must
   * see the worker's next heartbeat).
   */
  async workerAvailable(): Promise<boolean> {
    const seen = this.#workerSeen;
    this.#workerSeen = null;
    if (seen !== null) return seen;
    const now = Date.now();
    return this.#workerFrom(await this.#redis.pipeline(this.#workerCheck(now)), now);
  }

  #workerCheck(now: number): RespArg[][] {
    return servingCheck(this.#prefix, this.queueName, now, this.#mainQueue);
  }

  #workerFrom(replies: RespReply[], now: number): boolean {
    // An ACL that denies these keys is not "no worker" (BATON_REDIS_NO_PERMISSION, not BATON_WORKER_UNAVAILABLE).
    const refused = replies.find((reply) => reply instanceof RedisReplyError);
    if (refused) throw refused;
    const [members, workers, roots, mainMembers] = replies;
    const list = (reply: RespReply | undefined) => (Array.isArray(reply) ? reply : []);
    return workerServes(
      {
        queueMembers: list(members),
        liveWorkers: list(workers),
        discoveryRoots: fieldsToRecord(list(roots)),
        mainQueueMembers: list(mainMembers),
      },
      this.#repo.root,
      now,
    );
  }

  /** Current outcome of a job, without waiting. */
  async outcomeOf(jobId: string): Promise<JobOutcome | null> {
    const [reply] = await this.#redis.pipeline([this.#jobFieldsCommand(jobId)]);
    return outcomeFromReply(reply!);
  }

  #jobFieldsCommand(jobId: string): RespArg[] {
    return ['HMGET', jobKey(this.#prefix, this.queueName, jobId), 'finishedOn', 'returnvalue', 'failedReason'];
  }

  /**
   * Waits up to `timeoutMs` for the job's completion or failure: blocks on BullMQ's events stream
   * (XREAD BLOCK from the position noted at enqueue), so there is no polling.
   */
  async waitFor(jobId: string, timeoutMs: number): Promise<JobOutcome> {
    const deadline = Date.now() + timeoutMs;
    // Load the result schema while the worker works (it is needed only once a result arrives).
    const schema = resultSchema();
    schema.catch(() => undefined);
    const stream = eventsStreamKey(this.#prefix, this.queueName);
    if (this.#streamCursor === null) {
      // Not enqueued on this connection: note the stream's end in the same round trip as the look at the job.
      const [last, fields] = await this.#redis.pipeline([['XREVRANGE', stream, '+', '-', 'COUNT', 1], this.#jobFieldsCommand(jobId)]);
      this.#streamCursor = lastStreamId(last!);
      const current = await outcomeFromReply(fields!);
      if (current) return current;
    } else {
      const current = await this.outcomeOf(jobId);
      if (current) return current;
    }
    for (;;) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) return { kind: 'timeout' };
      const batch = await this.#redis.call(
        'XREAD',
        'COUNT',
        200,
        'BLOCK',
        Math.max(1, remaining),
        'STREAMS',
        stream,
        this.#streamCursor ?? '0-0',
      );
      if (!Array.isArray(batch)) continue;
      for (const streamReply of batch) {
        const entries = Array.isArray(streamReply) ? streamReply[1] : null;
        if (!Array.isArray(entries)) continue;
        for (const entry of entries) {
          if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !Array.isArray(entry[1])) continue;
          this.#streamCursor = entry[0];
          const event = fieldsToRecord(entry[1]);
          if (event.jobId !== jobId) continue;
          if (event.event === 'completed') return completedOutcome(await schema, event.returnvalue);
          if (event.event === 'failed') return { kind: 'failed', reason: event.failedReason ?? 'job failed' };
        }
      }
    }
  }

  /**
   * Removes the job unless a worker has taken it, in one script (src/queue/withdraw.ts, loaded only
   * now: a hook withdraws only the claim of a spawn it blocks), by its sha, sending the script's
   * text once after a Redis restart.
   */
  async withdraw(jobId: string): Promise<Withdrawal> {
    const { withdrawCommands, withdrawalKind, withdrawalOf } = await import('./withdraw.ts');
    const { evalsha, evalScript } = withdrawCommands(jobKey(this.#prefix, this.queueName, ''), jobId);
    let [reply] = await this.#redis.pipeline([evalsha]);
    if (reply instanceof RedisReplyError && reply.code === 'NOSCRIPT') [reply] = await this.#redis.pipeline([evalScript]);
    if (reply instanceof RedisReplyError) throw reply;
    const kind = withdrawalKind(reply, jobId);
    return withdrawalOf(kind, kind === 'finished' ? await this.outcomeOf(jobId) : null);
  }

  async close(): Promise<void> {
    this.#redis.close();
  }
}

function lastStreamId(reply: RespReply): string {
  return Array.isArray(reply) && Array.isArray(reply[0]) && typeof reply[0][0] === 'string' ? reply[0][0] : '0-0';
}

function outcomeFromReply(reply: RespReply): Promise<JobOutcome | null> {
  if (reply instanceof RedisReplyError) throw reply;
  const [finishedOn, returnvalue, failedReason] = Array.isArray(reply) ? reply : [];
  return outcomeFromJobFields(finishedOn, returnvalue, failedReason);
}

/**
 * A hook's connection to the repository queue: the raw client for plain Redis URLs, else (cluster,
 * sentinel) RepositoryQueueClient over ioredis, loaded only then.
 */
export async function connectHookQueue(config: QueueConfig, repo: QueueRepo, connectTimeoutMs: number): Promise<HookQueue> {
  const target = rawTargetFor(config);
  if (target) return RawQueueClient.connect(target, config.prefix, repo, connectTimeoutMs, config.mainQueue);
  const { RepositoryQueueClient } = await import('./client.ts');
  return RepositoryQueueClient.connect(config, repo, connectTimeoutMs);
}

/** Waits for `jobId`'s outcome on a fresh raw connection (for callers that did not enqueue it themselves). */
export async function waitForResult(config: QueueConfig, repo: QueueRepo, jobId: string, timeoutMs: number): Promise<JobOutcome> {
  const queue = await connectHookQueue(config, repo, Math.max(50, Math.min(1_000, timeoutMs / 2)));
  try {
    return await queue.waitFor(jobId, timeoutMs);
  } finally {
    await queue.close();
  }
}
