import fs from 'node:fs';
import path from 'node:path';
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { runLogEntryFor, runLogFile } from '../runs/runLog.ts';
import { LATENCY_BUCKETS_S, jobKey, metricsKey } from '../queue/keys.ts';
import { batonDir } from '../base/batonDir.ts';
import type { ProcessedJob, ServedRepository } from './processor.ts';

// What the worker records about each job besides applying it: the task's job log (run view links
// receipt steps to jobs), the job's name in bull-board (a hook job names the task `auto` resolved
// to), and the counters behind /metrics. None of it may fail the job: the event is applied already.

/** Field of the events hash: checkout id, intent and outcome, tab-separated. */
export function eventsField(checkoutId: string, intent: string, outcome: string): string {
  return `${checkoutId}\t${intent}\t${outcome}`;
}

/** Field of the latency hash: the count of the smallest bucket holding the value (`+Inf` beyond). */
export function latencyBucketField(checkoutId: string, seconds: number): string {
  const bucket = LATENCY_BUCKETS_S.find((bound) => seconds <= bound);
  return `${checkoutId}\t${bucket === undefined ? '+Inf' : String(bucket)}`;
}

/** Field of the costs hash: checkout id, role, model and kind (a token kind, or `requests`), tab-separated. */
export function costsField(checkoutId: string, role: string, model: string, kind: string): string {
  return `${checkoutId}\t${role}\t${model.replace(/\s/g, ' ')}\t${kind}`;
}

/** `intent · TASK-…`: what bull-board lists for the job once its task is known. */
export function jobNameFor(intent: string, taskId: string | null): string {
  return taskId ? `${intent} · ${taskId}` : intent;
}

export function recordApplied(
  connection: Redis,
  prefix: string,
  repository: ServedRepository,
  job: Pick<Job, 'id' | 'queueName' | 'timestamp'>,
  processed: ProcessedJob,
  log: (line: string) => void,
): void {
  const { envelope, result, replayed } = processed;
  const appliedAt = Date.now();
  if (!replayed) {
    const entry = runLogEntryFor(
      {
        jobId: job.id ?? envelope.eventId,
        queue: job.queueName,
        intent: envelope.intent,
        source: envelope.source,
        enqueuedAt: envelope.enqueuedAt,
        appliedAt: new Date(appliedAt).toISOString(),
      },
      result,
    );
    if (entry) {
      try {
        const file = runLogFile(batonDir(repository.root), entry.taskId);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.appendFileSync(file, `${JSON.stringify(entry)}\n`);
      } catch (error) {
        log(`${repository.root}: cannot append to the job log of ${entry.taskId}: ${(error as Error).message}`);
      }
    }
  }
  const seconds = Math.max(0, appliedAt - job.timestamp) / 1000;
  const pipeline = connection.pipeline();
  // A native hook names no task (`auto`); once applied, the job's name says which one it was.
  if (envelope.taskRef === 'auto' && result.taskId && job.id)
    pipeline.hset(jobKey(prefix, job.queueName, job.id), 'name', jobNameFor(envelope.intent, result.taskId));
  pipeline.hincrby(metricsKey(prefix, 'events'), eventsField(repository.id, envelope.intent, `applied:${result.status}`), 1);
  // A reconciliation that changed the run (docs/architecture.md "Reconciliation"), by kind.
  const reconciled =
    envelope.intent === 'reconcile' && result.changed && !replayed ? (envelope.args as { kind?: unknown }).kind : undefined;
  if (typeof reconciled === 'string')
    pipeline.hincrby(metricsKey(prefix, 'events'), eventsField(repository.id, 'reconcile', `reconciled:${reconciled}`), 1);
  // What the stage this job sealed cost, by role and model (docs/run-view.md "Metrics").
  for (const model of processed.sealedCost?.cost.models ?? []) {
    const role = processed.sealedCost!.role;
    const costs = metricsKey(prefix, 'costs');
    for (const kind of ['input', 'output', 'cacheRead', 'cacheCreation', 'requests'] as const) {
      if (model[kind] > 0) pipeline.hincrby(costs, costsField(repository.id, role, model.model, kind), model[kind]);
    }
  }
  if (!replayed) {
    const latency = metricsKey(prefix, 'latency');
    pipeline.hincrby(latency, latencyBucketField(repository.id, seconds), 1);
    pipeline.hincrby(latency, `${repository.id}\tcount`, 1);
    pipeline.hincrbyfloat(latency, `${repository.id}\tsum`, seconds);
  }
  // Not awaited: the job's completion goes over the same connection after these commands, so they
  // are applied first anyway, and the worker does not wait a round trip for bookkeeping.
  pipeline.exec().catch((error: unknown) => log(`${repository.root}: cannot record job ${job.id}: ${(error as Error).message}`));
}

export async function recordFailed(connection: Redis, prefix: string, repositoryId: string, intent: string): Promise<void> {
  await connection.hincrby(metricsKey(prefix, 'events'), eventsField(repositoryId, intent, 'failed'), 1).catch(() => undefined);
}

/** Drops a repository's counters (a demo repository that is deleted again leaves nothing behind). */
export async function forgetRepositoryMetrics(
  connection: Pick<Redis, 'hkeys' | 'hdel'>,
  prefix: string,
  checkoutId: string,
): Promise<void> {
  for (const metric of ['events', 'latency', 'costs'] as const) {
    const key = metricsKey(prefix, metric);
    const fields = (await connection.hkeys(key)).filter((field) => field.startsWith(`${checkoutId}\t`));
    if (fields.length > 0) await connection.hdel(key, ...fields);
  }
}
