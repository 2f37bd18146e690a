import { Cluster, Redis } from 'ioredis';
import type { ClusterOptions, RedisOptions } from 'ioredis';
import { withDeadline } from '../base/deadline.ts';
import { prefixProblem } from './keys.ts';
import { redactRedisUrl, redisTargetFromUrl } from './redisUrl.ts';
import type { RedisTarget } from './redisUrl.ts';

// How baton connects to Redis: one server, a Sentinel-managed master (ioredis Redis with
// `sentinels`), or a Redis Cluster (ioredis Cluster; BullMQ supports both). Where Redis is (URLs,
// defaults) lives in redisUrl.ts, which loads no Redis client: hooks decide what to do before they
// pay for loading one.

export { DEFAULT_REDIS_URL, isClusterUrl, redactRedisUrl, redisOptionsFromUrl, redisTargetFromUrl } from './redisUrl.ts';

/** Throws the prefixProblem message, for callers that cannot go on with such a prefix. */
export function assertPrefixFits(url: string, prefix: string): void {
  const problem = prefixProblem(url, prefix);
  if (problem) throw new Error(problem);
}

type Tuning = { fast: boolean; timeoutMs?: number; name?: string };

/**
 * A connection to whatever the target names. baton only uses commands both classes have, with every
 * key of one call under one hash-tagged prefix on a Cluster, so callers treat a Cluster as a Redis.
 */
function createClient(target: RedisTarget, tuning: Tuning): Redis {
  const common: RedisOptions = tuning.fast
    ? {
        lazyConnect: true,
        connectTimeout: tuning.timeoutMs,
        // ioredis otherwise keeps a 2 s timer alive after a refused connection: a hook spooling
        // because Redis is down would exit 2 s late.
        disconnectTimeout: 50,
        maxRetriesPerRequest: 1,
        enableOfflineQueue: true,
      }
    : { maxRetriesPerRequest: null, ...(tuning.name ? { connectionName: tuning.name } : {}) };
  const durableRetry = (times: number) => Math.min(100 * 2 ** Math.min(times, 5), 2000);
  if (target.kind === 'cluster') {
    const options: ClusterOptions = {
      redisOptions: {
        ...target.options,
        ...common,
        lazyConnect: undefined,
        enableOfflineQueue: undefined,
      } as ClusterOptions['redisOptions'],
      lazyConnect: tuning.fast,
      enableOfflineQueue: true,
      // A failover moves slots: wait for the replica to take over rather than fail the command.
      retryDelayOnFailover: 200,
      retryDelayOnClusterDown: 200,
      retryDelayOnTryAgain: 200,
      maxRedirections: 32,
      slotsRefreshTimeout: 2_000,
      clusterRetryStrategy: tuning.fast ? (times) => (times > 3 ? null : 200) : durableRetry,
      // TLS certificates name hosts, not the addresses a lookup would return.
      dnsLookup: (address, callback) => callback(null, address),
    };
    return new Cluster(
      target.nodes.map((node) => ({ host: node.host, port: node.port })),
      options,
    ) as unknown as Redis;
  }
  const retryStrategy = tuning.fast
    ? target.kind === 'sentinel'
      ? (times: number) => (times > 3 ? null : 200) // a failover may be under way: ask the sentinels again
      : () => null
    : durableRetry;
  return new Redis({ ...target.options, ...common, retryStrategy });
}

/**
 * A connection for short-lived callers (CLI, hooks): fails fast instead of retrying forever, so a
 * hook with Redis down spools its event within its budget rather than hanging the agent.
 */
export async function connectFast(url: string, timeoutMs: number): Promise<Redis> {
  const client = createClient(redisTargetFromUrl(url), { fast: true, timeoutMs });
  let cause: Error | null = null;
  client.on('error', (error: Error) => {
    // Reported through the failed command or connect(); without a listener ioredis logs to stderr.
    cause = error;
  });
  try {
    await withDeadline(client.connect(), timeoutMs, `Redis at ${redactRedisUrl(url)} did not answer within ${timeoutMs} ms`);
  } catch (error) {
    client.disconnect();
    // ioredis rejects with "Connection is closed." when TLS or AUTH failed: say why instead.
    const why = cause as Error | null;
    if (why && why.message !== (error as Error).message) throw new Error(`${(error as Error).message} (${why.message})`, { cause: why });
    throw error;
  }
  return client;
}

/** A connection for long-lived workers: BullMQ needs maxRetriesPerRequest null; reconnects forever. */
export function connectDurable(url: string, name?: string): Redis {
  return createClient(redisTargetFromUrl(url), { fast: false, name });
}
