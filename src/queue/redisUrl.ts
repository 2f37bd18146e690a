import type { RedisOptions } from 'ioredis';

// Where Redis is. URLs: redis://[user:pass@]host[:port][/db], rediss:// (TLS),
// unix:///path/to/redis.sock[?db=N] (private servers in tests and on shared boxes).
// No runtime dependency (only ioredis' option type): the hook imports this before it knows whether
// it will talk to Redis at all.

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
