import type { JobEnvelope } from '../queue/envelope.ts';
import { JOB_OPTIONS } from '../queue/keys.ts';
import { drainSpool, spooledFiles } from '../queue/spool.ts';
import type { OnDemandConsumers } from './onDemand.ts';
import type { ServedCheckouts, WorkerScope } from './serving.ts';

/**
 * Queues the events hooks spooled while Redis was down (docs/architecture.md "The spool"), for every
 * served checkout that has some, in order; a checkout that got events is consumed at once.
 */
export async function drainSpools(scope: WorkerScope, checkouts: ServedCheckouts, consumers: OnDemandConsumers): Promise<void> {
  const { log } = scope;
  for (const entry of checkouts.entries()) {
    if (entry.draining || spooledFiles(entry.repository.root).length === 0) continue;
    entry.draining = true;
    try {
      const report = await drainSpool(entry.repository.root, (envelope: JobEnvelope) =>
        checkouts
          .queueOf(entry)
          .add(envelope.intent, envelope, { ...JOB_OPTIONS, jobId: envelope.eventId })
          .then(() => undefined),
      );
      if (report.added > 0) {
        log(`${entry.repository.root}: queued ${report.added} spooled event(s)`);
        consumers.demand(entry.repository.id);
      }
      for (const name of report.rejected) log(`${entry.repository.root}: spooled file ${name} is unreadable, moved to spool/rejected`);
    } catch (error) {
      log(`${entry.repository.root}: spool drain paused: ${(error as Error).message}`);
    } finally {
      entry.draining = false;
    }
  }
}
