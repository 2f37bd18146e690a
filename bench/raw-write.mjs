// The floor of the hook benchmark: a runtime starts, loads the Redis client, connects to Redis,
// does one write (XADD, what a queue add boils down to) and exits. Prints its own breakdown
// (module load, connect + write) as one JSON line. Usage: REDIS_SOCKET=/path node bench/raw-write.mjs
const started = performance.now();
const { Redis } = await import('ioredis');
const loaded = performance.now();
const redis = new Redis({ path: process.env.REDIS_SOCKET, maxRetriesPerRequest: 1 });
await redis.xadd('bench:floor', 'MAXLEN', '~', '1000', '*', 'event', 'floor');
const written = performance.now();
redis.disconnect();
process.stdout.write(`${JSON.stringify({ loadMs: loaded - started, connectWriteMs: written - loaded })}\n`);
