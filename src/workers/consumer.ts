import { Worker } from 'bullmq';
import type { Job } from 'bullmq';
import { LIFECYCLE_INTENTS } from '../core/intents.ts';
import { recordApplied, recordFailed } from './jobRecords.ts';
import { processJobData } from './processor.ts';
import { trace } from './trace.ts';
import { jobTracer } from './jobTrace.ts';
import type { ProcessedJob, ServedRepository } from './processor.ts';
import type { ServedCheckouts, WorkerScope } from './serving.ts';

// Consuming a checkout's queue: a BullMQ Worker with concurrency 1 under the queue-wide global
// concurrency of 1 (docs/architecture.md "Queue semantics"), opened when the checkout has work
// (onDemand.ts), applying each job through the processor and recording it (jobRecords.ts).

export type ConsumerOptions = Readonly<{
  /** BullMQ lock duration: how soon a job of a killed worker is handed to another. */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  onJob?: (repository: ServedRepository, job: ProcessedJob, elapsedMs: number) => void;
}>;

export class QueueConsumers {
  readonly #scope: WorkerScope;
  readonly #checkouts: ServedCheckouts;
  readonly #options: ConsumerOptions;
  #applying = 0;

  constructor(scope: WorkerScope, checkouts: ServedCheckouts, options: ConsumerOptions) {
    this.#scope = scope;
    this.#checkouts = checkouts;
    this.#options = options;
  }

  /** Jobs being applied right now: at a stop, a close that timed out with none left nothing unfinished. */
  get applying(): number {
    return this.#applying;
  }

  /**
   * A BullMQ Worker on the checkout's queue, once the queue-wide limit is set: set when the checkout
   * was first served and remembered (queueLimit.ts), so the first job of an idle checkout waits for
   * no extra round trip and no BullMQ Queue object is made; set here only when the connection came
   * back since (Redis may have forgotten it).
   */
  async consume(id: string): Promise<Worker> {
    const entry = this.#checkouts.get(id);
    if (!entry) throw new Error(`checkout ${id} is no longer served`);
    const { connection, prefix, workerId, log } = this.#scope;
    const { repository, queueName } = entry;
    await this.#checkouts.limits.ensure(queueName);
    const worker = new Worker(
      queueName,
      async (job: Job) => {
        const started = performance.now();
        trace('fetched', { checkout: repository.id, job: job.id, processedOn: job.processedOn });
        this.#applying += 1;
        const span = (await jobTracer())?.job(
          (job.data as { trace?: string } | undefined)?.trace,
          {
            'baton.checkout': repository.id,
            'baton.event_id': job.id,
            'baton.intent': (job.data as { intent?: string } | undefined)?.intent,
            'baton.queue': queueName,
          },
          { addedAt: job.timestamp, takenAt: job.processedOn },
        );
        const processed = await processJobData(repository, job.data, span).finally(() => {
          this.#applying -= 1;
        });
        trace('applied', { checkout: repository.id, job: job.id });
        recordApplied(connection, prefix, repository, job, processed, log);
        this.#options.onJob?.(repository, processed, performance.now() - started);
        return processed.result;
      },
      {
        connection,
        prefix,
        concurrency: 1,
        name: workerId,
        skipVersionCheck: true,
        lockDuration: this.#options.lockDurationMs ?? 15_000,
        stalledInterval: this.#options.stalledIntervalMs ?? 5_000,
        // Applying is idempotent (journal), so a job may be handed over several times.
        maxStalledCount: 10,
      },
    );
    worker.on('error', (error: Error) => log(`worker ${queueName}: ${error.message}`));
    worker.on('failed', (job, error) => {
      log(`${repository.root}: job ${job?.id ?? '?'} failed: ${error.message}`);
      const intent = (job?.data as { intent?: unknown } | undefined)?.intent;
      // Bounded label values: a malformed job counts as `invalid`.
      void recordFailed(
        connection,
        prefix,
        repository.id,
        (LIFECYCLE_INTENTS as readonly unknown[]).includes(intent) ? String(intent) : 'invalid',
      );
    });
    return worker;
  }
}
