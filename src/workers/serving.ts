import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { batonDir } from '../base/batonDir.ts';
import type { Graces } from '../core/reconciliation.ts';
import type { WorkspaceFingerprinter } from '../core/types.ts';
import type { RepoIdentity } from '../queue/checkoutId.ts';
import { recordEndpoint } from '../queue/endpoint.ts';
import { queueNameFor } from '../queue/keys.ts';
import type { QueueConfig } from '../queue/keys.ts';
import { checkoutStamp } from './checkouts.ts';
import { servedRepository } from './processor.ts';
import { QueueLimits } from './queueLimit.ts';
import type { ServedRepository } from './processor.ts';

// The checkouts one worker process serves, and what every duty of the process shares: its id, its
// Redis connection and prefix, its log, and whether it is stopping (worker.ts composes the duties).

export type WorkerLog = (line: string) => void;

export type WorkerScope = Readonly<{
  workerId: string;
  hostName: string;
  /** The process's one shared connection (heartbeat, announcements, queues). */
  connection: Redis;
  prefix: string;
  log: WorkerLog;
  /** True once the process is stopping: no duty starts anything new then. */
  closing(): boolean;
}>;

/** One served checkout. */
export type Serving = {
  repository: ServedRepository;
  queueName: string;
  /** Made on first use (a consumer, a spool drain, the dashboard): an idle checkout needs none. */
  queue: Queue | null;
  draining: boolean;
  /** What the checkout's id file and .git looked like when its id was last read (followCheckoutIds.ts). */
  idStamp: string;
};

export type ServedCheckoutsOptions = Readonly<{
  queue: QueueConfig;
  graces: Graces;
  createFingerprinter: () => WorkspaceFingerprinter;
  /** Called once a checkout is served: say so in Redis, watch its queue. */
  onServed(entry: Serving): Promise<void>;
}>;

export class ServedCheckouts {
  readonly #scope: WorkerScope;
  readonly #options: ServedCheckoutsOptions;
  readonly #entries = new Map<string, Serving>();
  /** Which served queues are known to have their queue-wide limit of one job (queueLimit.ts). */
  readonly limits: QueueLimits;

  constructor(scope: WorkerScope, options: ServedCheckoutsOptions) {
    this.#scope = scope;
    this.#options = options;
    this.limits = new QueueLimits(scope.connection, scope.prefix);
  }

  get(id: string): Serving | undefined {
    return this.#entries.get(id);
  }

  has(id: string): boolean {
    return this.#entries.has(id);
  }

  entries(): Serving[] {
    return [...this.#entries.values()];
  }

  repositories(): ServedRepository[] {
    return this.entries().map((entry) => entry.repository);
  }

  /** The checkout's BullMQ Queue, made on first use. */
  queueOf(entry: Serving): Queue {
    if (!entry.queue) {
      const { connection, prefix, log } = this.#scope;
      const queue = new Queue(entry.queueName, { connection, prefix, skipVersionCheck: true });
      queue.on('error', (error: Error) => log(`queue ${entry.queueName}: ${error.message}`));
      entry.queue = queue;
    }
    return entry.queue;
  }

  /** Serves a checkout (nothing when it is served already or the process is stopping). */
  async serve(identity: RepoIdentity): Promise<void> {
    if (this.#entries.has(identity.id) || this.#scope.closing()) return;
    const repository = servedRepository(
      identity.id,
      identity.root,
      this.#options.createFingerprinter(),
      batonDir(identity.root),
      identity.main,
    );
    // Hooks and `baton task` of this repository find this Redis and prefix there (docs/hooks.md "Which Redis").
    try {
      recordEndpoint(identity.root, this.#options.queue, new Date(), this.#options.graces);
    } catch (error) {
      this.#scope.log(`${identity.root}: could not record the Redis endpoint for hooks: ${(error as Error).message}`);
    }
    const entry: Serving = {
      repository,
      queueName: queueNameFor(identity.id),
      queue: null,
      draining: false,
      idStamp: checkoutStamp(identity.root),
    };
    this.#entries.set(identity.id, entry);
    await this.#options.onServed(entry);
  }

  /** Stops serving a checkout; returns what it was. */
  drop(id: string): Serving | undefined {
    const entry = this.#entries.get(id);
    this.#entries.delete(id);
    return entry;
  }
}
