import type { Redis } from 'ioredis';

// What a Redis that holds baton's queues must do (docs/architecture.md "Deployment (compose)"): never
// evict a key (an evicted key is a lost job) and persist (a restart must not forget queued events).
// The worker warns at start; `baton doctor` reports the same.

/** The problems of this Redis's settings (empty: none), or null when CONFIG is not allowed (managed Redis) and nothing can be said. */
export async function redisSettingsProblems(connection: Redis): Promise<string[] | null> {
  try {
    const [, policy] = (await connection.config('GET', 'maxmemory-policy')) as string[];
    const [, appendonly] = (await connection.config('GET', 'appendonly')) as string[];
    const [, save] = (await connection.config('GET', 'save')) as string[];
    const problems: string[] = [];
    if (policy && policy !== 'noeviction')
      problems.push(`Redis maxmemory-policy is '${policy}'; queued events may be evicted. Set maxmemory-policy noeviction.`);
    if (appendonly !== 'yes' && !save)
      problems.push('Redis persists nothing (appendonly no, no save points); a Redis restart loses queued events. Enable appendonly yes.');
    return problems;
  } catch {
    return null;
  }
}

/** A queue store that evicts or forgets loses jobs: say so at start (docs/architecture.md "Deployment (compose)"). */
export async function warnAboutRedisConfig(connection: Redis, log: (line: string) => void): Promise<void> {
  // CONFIG may be disabled (managed Redis): nothing to check then.
  for (const problem of (await redisSettingsProblems(connection)) ?? []) log(`warning: ${problem}`);
}
