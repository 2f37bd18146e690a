import os from 'node:os';
import { UnrecoverableError } from 'bullmq';
import { applyEventNow, prepareEvent } from '../core/engine.ts';
import { workspaceDir } from '../core/taskLayout.ts';
import { batonEntryIn } from '../base/batonDir.ts';
import { parseEnvelope } from '../queue/envelopeSchema.ts';
import type { JobEnvelope } from '../queue/envelope.ts';
import { READ_ONLY_INTENTS } from '../core/intents.ts';
import { EventJournal } from './journal.ts';
import { stopCostOf } from './stageCost.ts';
import type { SpanAttributes, SpanHandle } from './jobSpans.ts';
import type { OrchestrationResult, WorkspaceFingerprinter } from '../core/types.ts';
import type { LifecycleEvent } from '../core/events.ts';
import type { StageCost } from '../core/stageCost.ts';

// What the worker does with one job of one repository: validate, refuse what is not ours, apply
// through the engine exactly once (journal), retry transient faults in place, and pause the run
// when an event cannot be applied at all.

export type ServedRepository = Readonly<{
  id: string;
  root: string;
  /** A linked worktree's main repository root (the registry records it beside the root). */
  main?: string;
  fingerprinter: WorkspaceFingerprinter;
  journal: EventJournal;
}>;

export function servedRepository(
  id: string,
  root: string,
  fingerprinter: WorkspaceFingerprinter,
  stateDir: string,
  main?: string,
): ServedRepository {
  return {
    id,
    root,
    ...(main ? { main } : {}),
    fingerprinter,
    journal: new EventJournal(batonEntryIn(stateDir, 'journal'), workspaceDir(root)),
  };
}

export type ProcessedJob = Readonly<{
  envelope: JobEnvelope;
  result: OrchestrationResult;
  replayed: boolean;
  /** The cost this job sealed a receipt with (for /metrics, counted once: the seal, not a later turn). */
  sealedCost?: Readonly<{ role: string; cost: StageCost }>;
}>;

/** Filesystem errors worth another try in place (BullMQ-level retries would reorder the queue). */
const TRANSIENT_CODES = new Set(['EBUSY', 'EAGAIN', 'EMFILE', 'ENFILE', 'EINTR', 'ETIMEDOUT']);
const RETRY_DELAYS_MS = [25, 100, 400];

function isTransient(error: unknown): boolean {
  return TRANSIENT_CODES.has((error as NodeJS.ErrnoException | null)?.code ?? '');
}

async function withTransientRetry<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      const delay = RETRY_DELAYS_MS[attempt];
      if (!isTransient(error) || delay === undefined) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

export const EVENT_FAILED_CODE = 'BATON_EVENT_FAILED';
export const CHECKOUT_MISMATCH_CODE = 'BATON_CHECKOUT_MISMATCH';

export async function processJobData(repository: ServedRepository, data: unknown, span?: SpanHandle): Promise<ProcessedJob> {
  try {
    const processed = await processJob(repository, data, span);
    span?.set(spanOutcome(processed));
    if (sealedNow(processed)) span?.rename('baton.seal');
    span?.end();
    return processed;
  } catch (error) {
    span?.end(error);
    throw error;
  }
}

const SEALING_INTENTS: ReadonlySet<string> = new Set(['hook-stop', 'reconcile', 'child-gone']);

/** The job sealed its receipt (a stop, a reconciliation or the client's report; a later turn of a sealed child too). */
function sealedNow({ envelope, result }: ProcessedJob): boolean {
  return SEALING_INTENTS.has(envelope.intent) && result.changed && result.run?.pendingDelegation?.status === 'sealed';
}

/** What a job's span says of it once applied: its task, the receipt it left, the result. */
function spanOutcome({ result, replayed }: ProcessedJob): SpanAttributes {
  const receipt = result.run?.pendingDelegation ?? result.run?.receipts.at(-1);
  return {
    'baton.task': result.taskId,
    'baton.stage': receipt?.stage,
    'baton.round': receipt?.round,
    'baton.role': receipt?.role,
    'baton.receipt.status': receipt?.status,
    'baton.result': result.status,
    'baton.changed': result.changed,
    'baton.replayed': replayed,
    'baton.error_code': result.error?.code,
  };
}

/** The fingerprints of a job, each capture and diff a span of its own. */
function tracedFingerprinter(fingerprinter: WorkspaceFingerprinter, span: SpanHandle | undefined): WorkspaceFingerprinter {
  if (!span) return fingerprinter;
  const traced = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    const child = span.child(name);
    try {
      const value = await work();
      child.end();
      return value;
    } catch (error) {
      child.end(error);
      throw error;
    }
  };
  return {
    capture: (root) => traced('baton.fingerprint.capture', () => fingerprinter.capture(root)),
    diff: (root, before, after) => traced('baton.fingerprint.diff', () => fingerprinter.diff(root, before, after)),
  };
}

async function processJob(repository: ServedRepository, data: unknown, span: SpanHandle | undefined): Promise<ProcessedJob> {
  const check = parseEnvelope(data);
  if (!check.ok) throw new UnrecoverableError(`${check.message}; nothing was changed`);
  const { envelope, event } = check;
  // The checkout id is the identity; the root may differ (a moved checkout, or one checkout seen
  // through two paths), the id may not: that job was meant for another checkout, maybe on another machine.
  if (envelope.repo.id !== repository.id) {
    const origin = `${envelope.repo.host ? `${envelope.repo.host}:` : ''}${envelope.repo.root}`;
    throw new UnrecoverableError(
      `${CHECKOUT_MISMATCH_CODE}: job is for checkout ${envelope.repo.id} (${origin}) but this worker serves checkout ${repository.id} (${os.hostname()}:${repository.root}); refused, nothing was changed`,
    );
  }
  try {
    // A stop's cost, from the client's record it names (read here, at the edge: the engine gets the figures).
    const recordSpan =
      'usageRecord' in event && event.usageRecord && event.intent !== 'hook-start'
        ? span?.child('baton.usage_record', { 'baton.usage_record.format': event.usageFormat })
        : undefined;
    const stopCost = await stopCostOf(event);
    recordSpan?.set({
      'baton.usage_record.read': stopCost?.read,
      'baton.usage_record.requests': stopCost?.requests,
      'baton.usage_record.note': stopCost?.note,
    });
    recordSpan?.end();
    const fingerprinter = tracedFingerprinter(repository.fingerprinter, span);
    const outcome = await withTransientRetry(() => {
      const prepared = prepareEvent(event, {
        repoRoot: repository.root,
        fingerprinter,
        ...(stopCost ? { stopCost } : {}),
      });
      return repository.journal.apply(envelope.eventId, prepared.apply, envelope.intent, prepared.target());
    });
    // The engine stored the very figures it was given on the receipt it sealed now; a later turn's stop
    // leaves the receipt's earlier figures (another object) in place.
    const sealed = outcome.result.run?.pendingDelegation;
    const sealedCost = stopCost && !outcome.replayed && sealed?.cost === stopCost ? { role: sealed.role, cost: stopCost } : undefined;
    return { envelope, ...outcome, ...(sealedCost ? { sealedCost } : {}) };
  } catch (error) {
    await pauseAfterFailure(repository, event, envelope, error);
    throw error;
  }
}

/** A state-applying event that cannot be applied pauses its run, so nobody proceeds past it. */
async function pauseAfterFailure(
  repository: ServedRepository,
  event: LifecycleEvent,
  envelope: JobEnvelope,
  error: unknown,
): Promise<void> {
  if (event.taskRef === 'auto' || READ_ONLY_INTENTS.has(event.intent)) return;
  const reason = error instanceof Error ? error.message : String(error);
  try {
    await applyEventNow(
      {
        intent: 'pause',
        taskRef: event.taskRef,
        code: EVENT_FAILED_CODE,
        message: `event ${envelope.eventId} (${envelope.intent}) could not be applied: ${reason}; retry the job from the dashboard or re-run the command`,
        recoverable: true,
      },
      { repoRoot: repository.root, fingerprinter: repository.fingerprinter },
    );
  } catch {
    // The run itself is unreadable; the failed job still records why.
  }
}
