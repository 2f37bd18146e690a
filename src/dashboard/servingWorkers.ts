import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { isWithin } from '../queue/outcome.ts';
import { liveServers, scorePairs, servingCheck } from '../queue/keys.ts';

// bull-board asks "does anything consume this queue?" with CLIENT LIST: a BullMQ Worker's connection
// is named after its queue. A baton worker serves on demand
// (docs/architecture.md "Serving on demand"): while a repository's queue is idle it holds no BullMQ
// Worker on it, so CLIENT LIST finds
// nobody and the board would warn that no worker serves a queue that one does. Its answer is what
// `baton task` reads before BATON_WORKER_UNAVAILABLE: the queue's serving workers (their heartbeat)
// and the roots of `--discover` workers.

type BoardWorker = NonNullable<Awaited<ReturnType<BullMQAdapter['getWorkers']>>>[number];

/** The baton workers serving `queue` (of the checkout at `root`) at `now`, in the shape bull-board lists workers. */
export async function servingWorkers(queue: Queue, root: string, now: number = Date.now()): Promise<BoardWorker[]> {
  // The queue's own Redis connection (BullMQ's Redis backend exposes it), as metrics.ts reads it.
  const client = (await queue.getBackend().client) as unknown as Redis;
  const pipeline = client.pipeline();
  for (const [command, ...args] of servingCheck(queue.opts.prefix ?? 'bull', queue.name, now)) pipeline.call(command, ...args);
  const replies = (await pipeline.exec()) ?? [];
  const failure = replies.find(([error]) => error);
  if (failure) throw failure[0];
  const list = (reply: unknown): unknown[] => (Array.isArray(reply) ? reply : []);
  const [members, workers, roots] = replies.map(([, reply]) => reply);
  const started = new Map(scorePairs(list(members)));
  const serving: BoardWorker[] = liveServers(list(members), list(workers), now).map(([id]) => ({
    id,
    name: `baton worker ${id} (serving on demand: it consumes the queue while there is work)`,
    addr: 'baton heartbeat',
    age: Math.max(0, Math.round((now - Math.min(started.get(id) ?? now, now)) / 1000)),
  }));
  if (serving.length > 0) return serving;
  // ioredis hands HGETALL back as an object through `call` on RESP2, or as the flat reply.
  const record: Record<string, string> = Array.isArray(roots)
    ? Object.fromEntries(scorePairs(roots).map(([field, expiry]) => [field, String(expiry)]))
    : ((roots ?? {}) as Record<string, string>);
  return Object.entries(record)
    .filter(([allowed, expiry]) => Number(expiry) > now && isWithin(root, allowed))
    .map(([allowed]) => ({
      id: `discover:${allowed}`,
      name: `a baton worker --discover serving the repositories below ${allowed} (on demand)`,
      addr: 'baton heartbeat',
      age: 0,
    }));
}

/** bull-board's BullMQ adapter, which also counts the baton workers that serve the queue on demand. */
export class ServingAwareAdapter extends BullMQAdapter {
  readonly #queue: Queue;
  readonly #root: string;

  constructor(queue: Queue, root: string, options: ConstructorParameters<typeof BullMQAdapter>[1]) {
    super(queue, options);
    this.#queue = queue;
    this.#root = root;
  }

  override async getWorkers(): ReturnType<BullMQAdapter['getWorkers']> {
    // CLIENT LIST first: a Worker consuming now (a job in hand), or any other BullMQ consumer.
    const connected = await super.getWorkers().catch(() => null);
    if (connected !== null && connected.length > 0) return connected;
    const serving = await servingWorkers(this.#queue, this.#root).catch(() => null);
    // null keeps "could not ask" apart from "nobody serves" (bull-board then shows no warning).
    return serving !== null && serving.length > 0 ? serving : connected;
  }
}
