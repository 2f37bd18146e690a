import { withDeadline } from '../base/deadline.ts';
import { heartbeatKey, workersKey } from '../queue/keys.ts';
import { CLOSE_STEP_MS } from './onDemand.ts';
import type { OnDemandConsumers } from './onDemand.ts';
import type { ServedCheckouts, WorkerScope } from './serving.ts';

/**
 * Stops a worker process (docs/architecture.md "Queue semantics": shutdown): finishes the active
 * jobs within `deadlineMs`, takes the process out of the heartbeat sets, closes the queues and the
 * connection. Every step that waits for Redis is bounded: a Redis that is gone must not hold it.
 * `applying()`: the jobs being applied right now.
 */
export async function closeWorker(
  scope: WorkerScope,
  parts: Readonly<{ consumers: OnDemandConsumers; checkouts: ServedCheckouts; applying: () => number }>,
  deadlineMs: number,
): Promise<{ clean: boolean }> {
  const { connection, prefix, workerId } = scope;
  const { clean } = await parts.consumers.close(deadlineMs);
  const entries = parts.checkouts.entries();
  try {
    const pipeline = connection.pipeline();
    pipeline.zrem(workersKey(prefix), workerId);
    for (const { queueName } of entries) pipeline.zrem(heartbeatKey(prefix, queueName), workerId);
    await withDeadline(pipeline.exec(), CLOSE_STEP_MS, 'Redis did not answer');
  } catch {
    // The process heartbeat expires on its own; other workers drop the stale entries.
  }
  await Promise.all(
    entries.map((entry) =>
      entry.queue ? withDeadline(entry.queue.close(), CLOSE_STEP_MS, 'Redis did not answer').catch(() => undefined) : undefined,
    ),
  );
  connection.disconnect();
  // BullMQ's graceful close also waits for Redis: when Redis is gone it times out even though no
  // job was being applied, and then nothing is unfinished.
  return { clean: clean || parts.applying() === 0 };
}
