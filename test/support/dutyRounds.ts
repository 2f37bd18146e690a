import { Redis } from 'ioredis';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { dutyRoundsKey } from '../../src/queue/keys.ts';
import type { CountedDuty } from '../../src/workers/dutyRounds.ts';

// Waiting for a worker to have looked, instead of sleeping: a worker counts each completed round of
// its periodic duties in Redis (src/workers/dutyRounds.ts). A negative claim ("nothing else was
// queued", "it did not serve that checkout") holds once the rounds that would have broken it ran.

/** The id of a started worker, from its ready line (`baton worker w-… ready:`). */
export function workerIdOf(output: string): string {
  const id = /baton worker (w-[0-9a-f-]+) ready:/.exec(output)?.[1];
  if (!id) throw new Error(`no worker id in its output:\n${output}`);
  return id;
}

async function roundsOf(redis: Redis, prefix: string, workerId: string, duty: CountedDuty): Promise<number> {
  return Number((await redis.hget(dutyRoundsKey(prefix, workerId), duty)) ?? 0);
}

/**
 * Resolves once each of `workerIds` has completed `rounds` more rounds of `duty` than when called
 * (a round under way when called does not count: it may have started before the point of interest,
 * so one more is awaited).
 */
export async function afterRounds(
  redisUrl: string,
  prefix: string,
  workerIds: readonly string[],
  duty: CountedDuty,
  rounds = 1,
  timeoutMs = 30_000,
): Promise<void> {
  const redis = new Redis(redisOptionsFromUrl(redisUrl));
  try {
    const start = await Promise.all(workerIds.map((id) => roundsOf(redis, prefix, id, duty)));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const now = await Promise.all(workerIds.map((id) => roundsOf(redis, prefix, id, duty)));
      if (now.every((count, index) => count >= start[index]! + rounds + 1)) return;
      if (Date.now() > deadline)
        throw new Error(`${duty}: ${rounds} more round(s) of ${workerIds.join(', ')} not within ${timeoutMs} ms (${start} → ${now})`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    redis.disconnect();
  }
}
