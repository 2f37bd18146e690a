import * as z from 'zod/mini';
import '../core/zodEnglish.ts';
import { lifecycleEventSchema } from '../core/events.ts';
import { LIFECYCLE_INTENTS } from '../core/intents.ts';
import type { LifecycleEvent } from '../core/events.ts';
import { describeSchemaError as describe } from '../core/runSchema.ts';
import { ENVELOPE_VERSION } from './envelope.ts';
import type { JobEnvelope } from './envelope.ts';
import { EVENT_ID_PATTERN } from './eventIds.ts';
import { TRACEPARENT_PATTERN } from '../base/traceContext.ts';

// The job envelope's validation (docs/architecture.md "Job envelope"), on both sides: a caller
// checks what it queues, a worker refuses anything that does not parse.

/** A job carries a task ref of 1–256 characters; `baton task` answers other refs itself (INVALID_TASK_REF …). */
export const envelopeTaskRefSchema = z.string().check(z.minLength(1), z.maxLength(256));

export const jobEnvelopeSchema: z.ZodMiniType<JobEnvelope> = z.strictObject({
  v: z.literal(ENVELOPE_VERSION),
  eventId: z.string().check(z.regex(EVENT_ID_PATTERN, 'eventId must be a letter, a dash and 1-120 of [A-Za-z0-9_.-]')),
  repo: z.strictObject({
    id: z.string().check(z.regex(/^[0-9a-f]{16}$/, 'repo.id must be 16 hex digits')),
    root: z.string().check(z.minLength(1)),
    host: z.optional(z.string().check(z.minLength(1), z.maxLength(255))),
  }),
  source: z.enum(['cli', 'hook', 'worker']),
  intent: z.enum(LIFECYCLE_INTENTS),
  taskRef: envelopeTaskRefSchema,
  args: z.record(z.string(), z.unknown()),
  enqueuedAt: z.string().check(z.minLength(1)),
  trace: z.optional(z.string().check(z.regex(TRACEPARENT_PATTERN, 'trace must be a W3C traceparent (00-<trace id>-<span id>-<flags>)'))),
});

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
