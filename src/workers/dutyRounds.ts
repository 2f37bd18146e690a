import { dutyRoundsKey } from '../queue/keys.ts';
import type { WorkerScope } from './serving.ts';

// Each completed round of a periodic duty is counted in Redis (`dutyRoundsKey`): one HINCRBY and
// one PEXPIRE in a pipeline, after the round. A round that looked and found nothing to do leaves
// no other trace; this counter is what shows it happened (a test waits on it rather than on a
// fixed sleep before a negative assertion).

/** The duties whose rounds are counted. */
export type CountedDuty = 'reconcile-scan' | 'discover';

/** The counter outlives its worker by this much, then expires. */
const ROUNDS_TTL_MS = 10 * 60 * 1000;

export async function countRound(scope: WorkerScope, duty: CountedDuty): Promise<void> {
  const key = dutyRoundsKey(scope.prefix, scope.workerId);
  await scope.connection.pipeline().hincrby(key, duty, 1).pexpire(key, ROUNDS_TTL_MS).exec();
}
