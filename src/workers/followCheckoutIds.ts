import { repoIdentity } from '../queue/checkoutId.ts';
import type { RepoIdentity } from '../queue/checkoutId.ts';
import { heartbeatKey, queueNameFor } from '../queue/keys.ts';
import { checkoutStamp } from './checkouts.ts';
import type { OnDemandConsumers } from './onDemand.ts';
import type { ServedCheckouts, Serving, WorkerScope } from './serving.ts';

/**
 * A checkout re-cloned (or its id file removed) while the worker runs has a new id, so its hooks
 * and commands use a new queue: serve that one, and stop serving the old queue, whose waiting
 * events were meant for the checkout that is gone (left in Redis, visible in the dashboard).
 * The id is read again only when the id file or `.git` changed (a stat each, per checkout).
 */
export async function followCheckoutIds(scope: WorkerScope, checkouts: ServedCheckouts, consumers: OnDemandConsumers): Promise<void> {
  const { log } = scope;
  for (const entry of checkouts.entries()) {
    const id = entry.repository.id;
    const stamp = checkoutStamp(entry.repository.root);
    if (stamp === entry.idStamp) continue;
    let current: RepoIdentity;
    try {
      current = repoIdentity(entry.repository.root);
    } catch {
      continue; // moved away or unreadable: keep serving what we have
    }
    entry.idStamp = checkoutStamp(entry.repository.root);
    if (current.id === id || scope.closing()) continue;
    const waiting = await stopServing(scope, checkouts, consumers, entry);
    log(
      `${entry.repository.root}: checkout id changed from ${id} to ${current.id} (re-cloned, or .git/baton/checkout.json removed); ` +
        `now serving queue ${queueNameFor(current.id)}; queue ${entry.queueName} is orphaned with ${waiting} waiting event(s)`,
    );
    await checkouts.serve(current);
  }
}

/**
 * Stops serving a checkout: its consumer closed once its active job is done, its heartbeat entry
 * removed, its queue closed. Returns how many events wait in that queue (left in Redis, for the log).
 */
export async function stopServing(
  scope: WorkerScope,
  checkouts: ServedCheckouts,
  consumers: OnDemandConsumers,
  entry: Serving,
): Promise<number> {
  const id = entry.repository.id;
  checkouts.drop(id);
  await consumers.remove(id);
  await scope.connection.zrem(heartbeatKey(scope.prefix, entry.queueName), scope.workerId).catch(() => undefined);
  const waiting = await checkouts
    .queueOf(entry)
    .getWaitingCount()
    .catch(() => 0);
  await entry.queue?.close().catch(() => undefined);
  return waiting;
}
