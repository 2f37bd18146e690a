import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';

// Where Redis is and how baton connects to it. URLs: redis://[user:pass@]host[:port][/db],
// rediss:// (TLS), unix:///path/to/redis.sock[?db=N] (private servers in tests and on shared boxes).

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export function redisUrlFrom(option: string | undefined, env: Record<string, string | undefined>): string {
  return option ?? env.REDIS_URL ?? DEFAULT_REDIS_URL;
}

export function redisOptionsFromUrl(url: string): RedisOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`invalid Redis URL '${url}': expected redis://, rediss:// or unix://`);
  }
  const db = parsed.searchParams.get('db') ?? (parsed.pathname.length > 1 && parsed.protocol !== 'unix:' ? parsed.pathname.slice(1) : null);
  const options: RedisOptions = {};
  if (db !== null && db !== '') {
    if (!/^\d+$/.test(db)) throw new Error(`invalid Redis URL '${url}': database must be a number`);
    options.db = Number(db);
  }
  if (parsed.username) options.username = decodeURIComponent(parsed.username);
  if (parsed.password) options.password = decodeURIComponent(parsed.password);
  switch (parsed.protocol) {
    case 'unix:':
      options.path = decodeURIComponent(parsed.pathname);
      return options;
    case 'rediss:':
      options.tls = { servername: parsed.hostname };
    // falls through
    case 'redis:':
      options.host = parsed.hostname || '127.0.0.1';
      options.port = parsed.port ? Number(parsed.port) : 6379;
      return options;
    default:
      throw new Error(`invalid Redis URL '${url}': expected redis://, rediss:// or unix://`);
  }
}

/** A URL safe to print: the password is masked. */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

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
