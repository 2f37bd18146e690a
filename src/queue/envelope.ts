import { z } from 'zod';
import { ENVELOPE_VERSION, EVENT_ID_PATTERN } from './eventIds.ts';
import { LIFECYCLE_INTENTS, lifecycleEventSchema } from '../core/events.ts';
import type { LifecycleEvent } from '../core/events.ts';
import { describeSchemaError as describe } from '../core/runSchema.ts';

// The job contract between callers (CLI, hooks) and workers (docs/architecture.md "Job envelope"):
// versioned, validated with zod on both sides; the worker refuses anything that does not parse.

export { ENVELOPE_VERSION, EVENT_ID_PATTERN, envelopeFor, eventIdForKey, eventIdForNative, queueNameFor, randomEventId, repoIdentity } from './eventIds.ts';
export type { RepoIdentity } from './eventIds.ts';

/** A job carries a task ref of 1–256 characters; `baton task` answers other refs itself (INVALID_TASK_REF …). */
export const envelopeTaskRefSchema = z.string().min(1).max(256);

export const jobEnvelopeSchema = z.strictObject({
  v: z.literal(ENVELOPE_VERSION),
  eventId: z.string().regex(EVENT_ID_PATTERN, 'eventId must be a letter, a dash and 1-120 of [A-Za-z0-9_.-]'),
  // host is informational (which machine enqueued it); optional so events spooled before it existed still drain.
  repo: z.strictObject({ id: z.string().regex(/^[0-9a-f]{16}$/, 'repo.id must be 16 hex digits'), root: z.string().min(1), host: z.string().min(1).max(255).optional() }),
  // worker: jobs a worker queues itself (reconciliation, docs/architecture.md "Reconciliation").
  source: z.enum(['cli', 'hook', 'worker']),
  intent: z.enum(LIFECYCLE_INTENTS),
  taskRef: envelopeTaskRefSchema,
  args: z.record(z.string(), z.unknown()),
  enqueuedAt: z.string().min(1),
});

export type JobEnvelope = z.infer<typeof jobEnvelopeSchema>;

export type EnvelopeCheck = { ok: true; envelope: JobEnvelope; event: LifecycleEvent } | { ok: false; message: string };

/** Validates a job's data and the lifecycle event inside it; messages name the offending field. */
export function parseEnvelope(data: unknown): EnvelopeCheck {
  const envelope = jobEnvelopeSchema.safeParse(data);
  if (!envelope.success) return { ok: false, message: `malformed job envelope: ${describe(envelope.error)}` };
  const { intent, taskRef, args } = envelope.data;
  const event = lifecycleEventSchema.safeParse({ ...args, intent, taskRef });
  if (!event.success) return { ok: false, message: `malformed '${intent}' event: ${describe(event.error)}` };
  return { ok: true, envelope: envelope.data, event: event.data };
}

