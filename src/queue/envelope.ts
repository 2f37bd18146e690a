import type { LifecycleEvent } from '../core/events.ts';
import type { LifecycleIntent } from '../core/intents.ts';
import type { RepoIdentity } from './checkoutId.ts';

// The job contract between callers (CLI, hooks) and workers (docs/architecture.md "Job envelope"):
// what a job carries, versioned, and how a caller builds one. Light (no validation library): the
// hook builds its envelope on every event. Both sides validate it with envelopeSchema.ts.

export const ENVELOPE_VERSION = 1;

export type JobEnvelope = {
  v: typeof ENVELOPE_VERSION;
  eventId: string;
  /** host is informational (which machine enqueued it); optional so events spooled before it existed still drain. */
  repo: { id: string; root: string; host?: string | undefined };
  /** worker: jobs a worker queues itself (reconciliation, docs/architecture.md "Reconciliation"). */
  source: 'cli' | 'hook' | 'worker';
  intent: LifecycleIntent;
  taskRef: string;
  args: Record<string, unknown>;
  enqueuedAt: string;
  /** The W3C traceparent of the caller's span, when it traces (docs/architecture.md "Traces"); the worker's spans are its children. */
  trace?: string;
};

export function envelopeFor(
  event: LifecycleEvent,
  repo: Pick<RepoIdentity, 'id' | 'root'> & Readonly<{ host?: string }>,
  source: JobEnvelope['source'],
  eventId: string,
  now: Date = new Date(),
  trace?: string,
): JobEnvelope {
  const { intent, taskRef, ...args } = event;
  return {
    v: ENVELOPE_VERSION,
    eventId,
    repo: repo.host === undefined ? { id: repo.id, root: repo.root } : { id: repo.id, root: repo.root, host: repo.host },
    source,
    intent,
    taskRef,
    args,
    enqueuedAt: now.toISOString(),
    ...(trace === undefined ? {} : { trace }),
  };
}
