import { Redis } from 'ioredis';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { startTcpRedis } from './redisServer.ts';

// A Redis that belongs to something else, as one on 127.0.0.1:6379 may: a private redis-server on a
// free loopback TCP port the test owns (never the machine's 6379), holding someone's keys. Point
// BATON_DEFAULT_REDIS_URL at it and it is "whatever answers on the default address". `touches()`
// says what anyone did to it after it was seeded: the keys now there, and every command run on it
// other than looking (PING, INFO, connection set-up), from Redis's own command statistics.

/** What a client may do to a Redis without writing into it: find out whether it answers. */
const LOOKING = new Set(['ping', 'info', 'hello', 'auth', 'select', 'quit', 'client|setname', 'client|setinfo', 'config|resetstat']);

export const FOREIGN_KEYS = { 'shop:cart:42': 'three apples', 'shop:sessions': 'someone else' } as const;

export type ForeignRedis = Readonly<{
  url: string;
  /** The keys now in it, sorted, and the commands run on it since seeding that are more than looking. */
  touches(): Promise<{ keys: string[]; commands: string[] }>;
  stop(): Promise<void>;
}>;

export async function startForeignRedis(): Promise<ForeignRedis> {
  const server = await startTcpRedis();
  const admin = new Redis(redisOptionsFromUrl(server.url));
  try {
    for (const [key, value] of Object.entries(FOREIGN_KEYS)) await admin.set(key, value);
    await admin.config('RESETSTAT');
  } finally {
    admin.disconnect();
  }
  return {
    url: server.url,
    async touches() {
      const client = new Redis(redisOptionsFromUrl(server.url));
      try {
        // INFO first: the KEYS below must not count as a touch.
        const stats = (await client.info('commandstats')) as string;
        const commands = [...stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)]
          .map(([, name]) => name!)
          .filter((name) => !LOOKING.has(name))
          .sort();
        const keys = (await client.keys('*')).sort();
        return { keys, commands };
      } finally {
        client.disconnect();
      }
    },
    stop: () => server.stop(),
  };
}

/** What `touches()` answers for a Redis nobody wrote into. */
export const UNTOUCHED = { keys: Object.keys(FOREIGN_KEYS).sort(), commands: [] as string[] };
