import type { ChainableCommander, Redis } from 'ioredis';
import { queueMetaKey } from '../queue/keys.ts';

// The queue-wide global concurrency of 1 (docs/architecture.md "Queue semantics"), set once per
// queue rather than before every start of a consumer: written with the other commands when the
// process starts serving the checkout (heartbeat.ts `announce`, one pipeline for all of them) and
// again with every beat for the queues consumed then, and remembered here, so that the first job of
// an idle checkout is fetched without a round trip for it (and without a BullMQ Queue object). The
// memory is dropped whenever the connection comes back: a Redis that restarted without persistence
// forgot the limit, and the next consumer sets it again before it takes a job.

/** BullMQ's field for the queue-wide limit (see `Queue.setGlobalConcurrency`). */
const CONCURRENCY_FIELD = 'concurrency';

export class QueueLimits {
  readonly #connection: Redis;
  readonly #prefix: string;
  readonly #set = new Set<string>();

  constructor(connection: Redis, prefix: string) {
    this.#connection = connection;
    this.#prefix = prefix;
    let connectedBefore = connection.status === 'ready';
    connection.on('ready', () => {
      if (connectedBefore) this.#set.clear();
      connectedBefore = true;
    });
    connection.on('close', () => this.#set.clear());
  }

  /** Adds the command that limits `queueName` to one job at a time; `remember` once the pipeline succeeded. */
  write(pipeline: ChainableCommander, queueName: string): ChainableCommander {
    return pipeline.hset(queueMetaKey(this.#prefix, queueName), CONCURRENCY_FIELD, 1);
  }

  remember(queueNames: Iterable<string>): void {
    if (this.#connection.status !== 'ready') return;
    for (const name of queueNames) this.#set.add(name);
  }

  /** Whether this process set the limit on `queueName` since its connection was last (re)established. */
  isSet(queueName: string): boolean {
    return this.#set.has(queueName);
  }

  /** Sets the limit unless it is known to be set: no round trip in the usual case. */
  async ensure(queueName: string): Promise<void> {
    if (this.#set.has(queueName)) return;
    await this.#connection.hset(queueMetaKey(this.#prefix, queueName), CONCURRENCY_FIELD, 1);
    this.remember([queueName]);
  }
}
