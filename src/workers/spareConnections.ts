import type { Redis, RedisOptions } from 'ioredis';
import { trace } from './trace.ts';

// Spare connections for the Workers opened on demand (docs/architecture.md "Serving on demand",
// "Performance"). A BullMQ Worker makes its blocking connection by duplicating the shared one, and
// completes its first job only once that connection is ready: connecting it (connect, ready check,
// CLIENT SETNAME) was the part of an idle checkout's first event that a later event never pays
// (bench/results/busyBox.md). So the shared connection hands out a connection opened beforehand
// and opens the next spare in the background. The Worker owns what it is given, as before (it
// closes it when the checkout is released); only the moment it was opened changes. A Redis
// Cluster connection is left alone (its duplicates are made differently).

/**
 * Ready connections kept aside. Checkouts tend to get work together (agents started at once, a
 * swap of active checkouts): a burst larger than the pool opens the rest as before. Each idle
 * connection costs Redis ~20 KB and a file descriptor.
 */
export const SPARE_CONNECTIONS = 8;

export type SpareConnections = Readonly<{
  /** How many spares are open now. */
  count(): number;
  /** Opens or closes spares to have `wanted()` of them (called when that may have changed). */
  adjust(): void;
  close(): void;
}>;

/** `wanted`: how many spares to keep now (never more than the checkouts that could get work); none until `adjust()`. */
export function keepSpareConnections(connection: Redis, wanted: () => number, name: string, log: (line: string) => void): SpareConnections {
  const pool: Redis[] = [];
  let closed = false;
  if ((connection as Redis & { isCluster?: boolean }).isCluster) return { count: () => 0, adjust() {}, close() {} };
  const duplicate = connection.duplicate.bind(connection);
  const onError = (error: Error) => {
    trace('redis-error', { connection: 'spare', message: error.message });
    log(`redis (spare connection): ${error.message}`);
  };
  const open = () => duplicate({ connectionName: name }).on('error', onError);
  const fill = () => {
    const target = closed ? 0 : wanted();
    while (pool.length < target) pool.push(open());
    for (const extra of pool.splice(target)) extra.disconnect();
  };
  connection.duplicate = (override?: Partial<RedisOptions>): Redis => {
    const otherOptions = Object.keys(override ?? {}).filter((key) => key !== 'connectionName');
    const at = pool.findIndex((spare) => spare.status === 'ready');
    const spared = !closed && otherOptions.length === 0 && at >= 0;
    trace('connection', { name: override?.connectionName, spare: spared });
    if (!spared) return duplicate(override);
    const [spare] = pool.splice(at, 1) as [Redis];
    // Its errors are the new owner's to report from now on (BullMQ listens on it).
    spare.off('error', onError);
    setTimeout(fill, 0);
    if (override?.connectionName) {
      // The name the caller asked for (the dashboard finds a queue's consumers by it), now and after a reconnect.
      spare.options.connectionName = override.connectionName;
      void spare.client('SETNAME', override.connectionName).catch(() => undefined);
    }
    return spare;
  };
  return {
    count: () => pool.length,
    adjust: fill,
    close() {
      closed = true;
      for (const spare of pool.splice(0)) spare.disconnect();
    },
  };
}
