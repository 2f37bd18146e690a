import type { Redis } from 'ioredis';
import { addPlainJob } from './addJob.ts';
import { assertPrefixFits, connectFast } from './connection.ts';
import { queueNameFor } from './keys.ts';
import type { JobEnvelope } from './envelope.ts';
import type { RepoIdentity } from './checkoutId.ts';
import { JOB_OPTIONS, eventsStreamKey, jobKey, repositoriesKey, repositoryEntryValue, servingCheck } from './keys.ts';
import type { QueueConfig } from './keys.ts';
import { completedOutcome, fieldsToRecord, outcomeFromJobFields, resultSchema, workerServes } from './outcome.ts';
import type { JobOutcome } from './outcome.ts';
import { WITHDRAW_SCRIPT, withdrawKeysAndArgs, withdrawalKind, withdrawalOf } from './withdraw.ts';
import type { Withdrawal } from './withdraw.ts';
import { mainRepositoryOf } from '../base/repoRoot.ts';

// The caller's side of a repository queue: enqueue an envelope, find out whether a worker serves
// the repository, wait for the worker's result, and withdraw a job nobody took. Hooks use it on
// every agent event, so it loads neither BullMQ (jobs are added and withdrawn with BullMQ's own
// scripts) nor zod (results are validated with a schema loaded while waiting for them).

export type { JobOutcome } from './outcome.ts';
export type { Withdrawal } from './withdraw.ts';

const WITHDRAW_COMMAND = 'batonWithdrawJob';

type Withdrawing = { [WITHDRAW_COMMAND](...args: string[]): Promise<unknown> };

/** The checkout a client enqueues for (an envelope's `repo` will do: host is informational). */
export type QueueRepo = Pick<RepoIdentity, 'id' | 'root'> & Readonly<{ host?: string }>;

export class RepositoryQueueClient {
  readonly queueName: string;
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #repo: QueueRepo;
  readonly #mainQueue: string | undefined;
  #streamCursor = '0-0';

  private constructor(redis: Redis, config: QueueConfig, repo: QueueRepo) {
    this.queueName = queueNameFor(repo.id);
    this.#redis = redis;
    this.#prefix = config.prefix;
    this.#repo = repo;
    this.#mainQueue = config.mainQueue;
  }

  static async connect(config: QueueConfig, repo: QueueRepo, connectTimeoutMs: number): Promise<RepositoryQueueClient> {
    assertPrefixFits(config.redisUrl, config.prefix);
    const redis = await connectFast(config.redisUrl, connectTimeoutMs);
    return new RepositoryQueueClient(redis, config, repo);
  }

  /**
   * True when a live worker serves this queue, or a live discovering worker covers the root
   * (workerWithin in outcome.ts keeps looking for a while).
   */
  async workerAvailable(): Promise<boolean> {
    const now = Date.now();
    const pipeline = this.#redis.pipeline();
    for (const [command, ...args] of servingCheck(this.#prefix, this.queueName, now, this.#mainQueue)) pipeline.call(command, ...args);
    const replies = (await pipeline.exec()) ?? [];
    const failure = replies.find(([error]) => error);
    if (failure) throw failure[0];
    const [members, workers, roots, mainMembers] = replies.map(([, reply]) => reply);
    const list = (reply: unknown) => (Array.isArray(reply) ? (reply as unknown[]) : []);
    // ioredis may hand HGETALL back as an object or as the flat reply.
    const discoveryRoots = Array.isArray(roots) ? fieldsToRecord(roots) : ((roots ?? {}) as Record<string, string>);
    const serving = { queueMembers: list(members), liveWorkers: list(workers), discoveryRoots, mainQueueMembers: list(mainMembers) };
    return workerServes(serving, this.#repo.root, now);
  }

  /**
   * Adds the envelope as job `eventId`. A job with that id that is still retained is not added
   * again (BullMQ deduplicates by id); the worker's journal covers ids whose job was removed.
   */
  async enqueue(envelope: JobEnvelope): Promise<void> {
    // One round trip: remember where the events stream is (so waiting cannot miss this job's
    // completion), register the repository, and add the job as Queue.add would.
    const pipeline = this.#redis.pipeline();
    pipeline.xrevrange(eventsStreamKey(this.#prefix, this.queueName), '+', '-', 'COUNT', 1);
    pipeline.hset(
      repositoriesKey(this.#prefix),
      this.#repo.id,
      repositoryEntryValue({ ...this.#repo, main: mainRepositoryOf(this.#repo.root) }),
    );
    addPlainJob(this.#redis, pipeline, {
      prefix: this.#prefix,
      queueName: this.queueName,
      name: envelope.intent,
      data: envelope,
      jobId: envelope.eventId,
      opts: JOB_OPTIONS,
    });
    const replies = (await pipeline.exec()) ?? [];
    const failure = replies.find(([error]) => error);
    if (failure) throw failure[0];
    const added = replies.at(-1)?.[1];
    if (typeof added === 'number' && added < 0) throw new Error(`Redis refused job ${envelope.eventId} (BullMQ code ${added})`);
    const last = replies[0]?.[1] as [string, string[]][] | undefined;
    this.#streamCursor = last?.[0]?.[0] ?? '0-0';
  }

  /** Current outcome of a job, without waiting. */
  async outcomeOf(jobId: string): Promise<JobOutcome | null> {
    const [finishedOn, returnvalue, failedReason] = await this.#redis.hmget(
      jobKey(this.#prefix, this.queueName, jobId),
      'finishedOn',
      'returnvalue',
      'failedReason',
    );
    return outcomeFromJobFields(finishedOn, returnvalue, failedReason);
  }

  /** Waits for the job's completion or failure, reading the queue's event stream (no polling). */
  async waitFor(jobId: string, timeoutMs: number): Promise<JobOutcome> {
    const deadline = Date.now() + timeoutMs;
    // Load the result schema while the worker works (it is needed only once a result arrives).
    const schema = resultSchema();
    const current = await this.outcomeOf(jobId);
    if (current) return current;
    const stream = eventsStreamKey(this.#prefix, this.queueName);
    for (;;) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) return { kind: 'timeout' };
      const batch = (await this.#redis.xread('COUNT', 200, 'BLOCK', Math.max(1, remaining), 'STREAMS', stream, this.#streamCursor)) as
        | [string, [string, string[]][]][]
        | null;
      for (const [, entries] of batch ?? []) {
        for (const [id, fields] of entries) {
          this.#streamCursor = id;
          const event = fieldsToRecord(fields);
          if (event.jobId !== jobId) continue;
          if (event.event === 'completed') return completedOutcome(await schema, event.returnvalue);
          if (event.event === 'failed') return { kind: 'failed', reason: event.failedReason ?? 'job failed' };
        }
      }
    }
  }

  /**
   * Removes the job if no worker has taken it yet (a CLI that gives up must not leave it behind to
   * be applied later), else says what became of it. Throws when Redis cannot be asked.
   */
  async withdraw(jobId: string): Promise<Withdrawal> {
    const redis = this.#redis as Redis & Partial<Withdrawing>;
    if (!redis[WITHDRAW_COMMAND]) redis.defineCommand(WITHDRAW_COMMAND, { numberOfKeys: 2, lua: WITHDRAW_SCRIPT });
    const { keys, args } = withdrawKeysAndArgs(jobKey(this.#prefix, this.queueName, ''), jobId);
    const kind = withdrawalKind(await redis[WITHDRAW_COMMAND]!(...keys, ...args), jobId);
    return withdrawalOf(kind, kind === 'finished' ? await this.outcomeOf(jobId) : null);
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}
