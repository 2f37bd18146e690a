import { Redis } from 'ioredis';
import { redactRedisUrl, redisOptionsFromUrl } from './redisUrl.ts';

// How baton connects to Redis. Where Redis is (URLs, defaults) lives in redisUrl.ts, which loads no
// Redis client: hooks decide what to do before they pay for loading one.

export { DEFAULT_REDIS_URL, redactRedisUrl, redisOptionsFromUrl, redisUrlFrom } from './redisUrl.ts';

/**
 * A connection for short-lived callers (CLI, hooks): fails fast instead of retrying forever, so a
 * hook with Redis down spools its event within its budget rather than hanging the agent.
 */
export async function connectFast(url: string, timeoutMs: number): Promise<Redis> {
  const client = new Redis({
    ...redisOptionsFromUrl(url),
    lazyConnect: true,
    connectTimeout: timeoutMs,
    // ioredis otherwise keeps a 2 s timer alive after a refused connection: a hook spooling
    // because Redis is down would exit 2 s late.
    disconnectTimeout: 50,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    retryStrategy: () => null,
  });
  client.on('error', () => {
    // Reported through the failed command or connect(); without a listener ioredis logs to stderr.
  });
  try {
    await withTimeout(client.connect(), timeoutMs, `Redis at ${redactRedisUrl(url)} did not answer within ${timeoutMs} ms`);
  } catch (error) {
    client.disconnect();
    throw error;
  }
  return client;
}

/** A connection for long-lived workers: BullMQ needs maxRetriesPerRequest null; reconnects forever. */
export function connectDurable(url: string, name?: string): Redis {
  const client = new Redis({
    ...redisOptionsFromUrl(url),
    maxRetriesPerRequest: null,
    ...(name ? { connectionName: name } : {}),
    retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 5), 2000),
  });
  return client;
}

export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
