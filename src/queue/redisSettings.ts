import type { Redis } from 'ioredis';

// What a Redis that holds baton's queues must do (docs/architecture.md "Deployment (compose)"): never
// evict a key (an evicted key is a lost job) and persist (a restart must not forget queued events).
// The worker warns at start; `baton doctor` reports the same.

/**
 * One problem of a Redis's settings: `eviction` loses jobs while Redis runs; `persistence` loses the
 * queued ones only when Redis restarts (`baton doctor` warns about it on a development machine).
 */
export type RedisSettingProblem = Readonly<{ setting: 'eviction' | 'persistence'; message: string }>;

/** The problems of this Redis's settings (empty: none), or null when CONFIG is not allowed (managed Redis) and nothing can be said. */
export async function redisSettingProblems(connection: Redis): Promise<RedisSettingProblem[] | null> {
  try {
    const [, policy] = (await connection.config('GET', 'maxmemory-policy')) as string[];
    const [, appendonly] = (await connection.config('GET', 'appendonly')) as string[];
    const [, save] = (await connection.config('GET', 'save')) as string[];
    const problems: RedisSettingProblem[] = [];
    if (policy && policy !== 'noeviction')
      problems.push({
        setting: 'eviction',
        message: `Redis maxmemory-policy is '${policy}'; queued events may be evicted. Set maxmemory-policy noeviction.`,
      });
    if (appendonly !== 'yes' && !save)
      problems.push({
        setting: 'persistence',
        message: 'Redis persists nothing (appendonly no, no save points); a Redis restart loses queued events. Enable appendonly yes.',
      });
    return problems;
  } catch {
    return null;
  }
}

/** The messages of redisSettingProblems. */
export async function redisSettingsProblems(connection: Redis): Promise<string[] | null> {
  return (await redisSettingProblems(connection))?.map((problem) => problem.message) ?? null;
}

/** A queue store that evicts or forgets loses jobs: say so at start (docs/architecture.md "Deployment (compose)"). */
export async function warnAboutRedisConfig(connection: Redis, log: (line: string) => void): Promise<void> {
  // CONFIG may be disabled (managed Redis): nothing to check then.
  for (const problem of (await redisSettingsProblems(connection)) ?? []) log(`warning: ${problem}`);
}
