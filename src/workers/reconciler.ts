import { hexDigest } from '../base/digest.ts';
import { dueReconciliation, repositoryPendingDelegations } from '../core/orchestration/index.ts';
import type { Graces } from '../core/orchestration/index.ts';
import { envelopeFor } from '../queue/envelope.ts';
import type { JobEnvelope } from '../queue/envelope.ts';
import type { ReconciliationKind } from '../core/types.ts';
import { JOB_OPTIONS } from '../queue/keys.ts';
import type { OnDemandConsumers } from './onDemand.ts';
import type { ServedRepository } from './processor.ts';
import type { ServedCheckouts, WorkerScope } from './serving.ts';

// The worker's side of reconciliation (docs/architecture.md "Reconciliation"): now and then it
// reads the pending delegations of the checkouts it serves and queues a `reconcile` job for each
// one whose grace has passed. The job id is derived from the receipt and its clock, so several
// workers, a restarted worker and repeated scans queue it once; the engine checks again when it
// applies the job, in order with every other event of the checkout.

export { DEFAULT_GRACES } from '../core/orchestration/index.ts';

/** Scans come a quarter of the shorter grace apart: a delegation is settled at most that late. */
export function scanIntervalMs(graces: Graces): number {
  return Math.min(30_000, Math.max(250, Math.floor(Math.min(graces.stopGraceMs, graces.spawnGraceMs) / 4)));
}

/** One id per receipt, kind and clock start (BullMQ job ids may not contain ':'). */
export function reconcileEventId(receiptId: string, kind: ReconciliationKind, since: string): string {
  return `r-${hexDigest('sha256', JSON.stringify([receiptId, kind, since])).slice(0, 40)}`;
}

/** The `reconcile` jobs due in `repository` at `nowMs`. */
export function dueReconcileJobs(
  repository: Pick<ServedRepository, 'id' | 'root'>,
  graces: Graces,
  nowMs: number,
): { envelopes: JobEnvelope[]; warnings: string[] } {
  const { matches, warnings } = repositoryPendingDelegations(repository.root);
  const envelopes: JobEnvelope[] = [];
  for (const { taskId, receipt } of matches) {
    const due = dueReconciliation(receipt, graces);
    if (!due || due.dueAt > nowMs) continue;
    envelopes.push(
      envelopeFor(
        {
          intent: 'reconcile',
          taskRef: taskId,
          receiptId: receipt.id,
          kind: due.kind,
          since: due.since,
          graceMs: due.graceMs,
          // A seal reads the child's record SubagentStart named (docs/run-view.md "What a stage cost").
          ...(due.kind === 'sealed' && receipt.usageRecord
            ? { childId: receipt.childId ?? undefined, usageRecord: receipt.usageRecord.file, usageFormat: receipt.usageRecord.format }
            : {}),
        },
        { id: repository.id, root: repository.root },
        'worker',
        reconcileEventId(receipt.id, due.kind, due.since),
        new Date(nowMs),
      ),
    );
  }
  return { envelopes, warnings };
}

export type ReconcilerOptions = Readonly<{
  graces: Graces;
  served: () => readonly Pick<ServedRepository, 'id' | 'root'>[];
  /** Queues the job on the checkout's queue (a job with that id already there is left as it is). */
  enqueue: (repository: Pick<ServedRepository, 'id' | 'root'>, envelope: JobEnvelope) => Promise<void>;
  log: (line: string) => void;
  now?: () => number;
}>;

/** One pass over every served checkout; returns how many jobs it queued. */
export async function scanForReconciliation(options: ReconcilerOptions): Promise<number> {
  const now = (options.now ?? Date.now)();
  let queued = 0;
  for (const repository of options.served()) {
    let due: JobEnvelope[];
    try {
      due = dueReconcileJobs(repository, options.graces, now).envelopes;
    } catch (error) {
      options.log(`${repository.root}: cannot look for stuck delegations: ${(error as Error).message}`);
      continue;
    }
    for (const envelope of due) {
      await options.enqueue(repository, envelope);
      queued += 1;
    }
  }
  return queued;
}

/**
 * The worker's reconciliation duty: a scan over the served checkouts that queues each due job on its
 * checkout's queue (a second add of the same id is a no-op in BullMQ) and logs each job once.
 */
export function reconciliationScan(
  scope: WorkerScope,
  checkouts: ServedCheckouts,
  consumers: OnDemandConsumers,
  graces: Graces,
): () => Promise<number> {
  /** Reconcile jobs this process queued (logged once). */
  const reconciling = new Set<string>();
  return () =>
    scanForReconciliation({
      graces,
      log: scope.log,
      served: () => checkouts.repositories(),
      enqueue: async (repository, envelope) => {
        const entry = checkouts.get(repository.id);
        if (!entry || scope.closing()) return;
        await checkouts.queueOf(entry).add(envelope.intent, envelope, { ...JOB_OPTIONS, jobId: envelope.eventId });
        consumers.demand(repository.id);
        if (reconciling.has(envelope.eventId)) return;
        if (reconciling.size > 10_000) reconciling.clear();
        reconciling.add(envelope.eventId);
        const args = envelope.args as { kind: string; receiptId: string; since: string };
        scope.log(
          `${repository.root}: ${envelope.taskRef}: delegation ${args.receiptId} waited past its grace since ${args.since}; queued reconcile (${args.kind})`,
        );
      },
    });
}
