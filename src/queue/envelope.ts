import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { z } from 'zod';
import { LIFECYCLE_INTENTS, lifecycleEventSchema } from '../core/events.ts';
import type { LifecycleEvent } from '../core/events.ts';
import { describeSchemaError as describe } from '../core/runSchema.ts';

// The job contract between callers (CLI, hooks) and workers (ARCHITECTURE.md "Job envelope"):
// versioned, validated with zod on both sides; the worker refuses anything that does not parse.

export const ENVELOPE_VERSION = 1;

/** BullMQ job ids may not contain ':' nor be all digits; baton's ids are a letter prefix + [A-Za-z0-9_.-]. */
export const EVENT_ID_PATTERN = /^[a-z]-[A-Za-z0-9_.-]{1,120}$/;

export const jobEnvelopeSchema = z.strictObject({
  v: z.literal(ENVELOPE_VERSION),
  eventId: z.string().regex(EVENT_ID_PATTERN, 'eventId must be a letter, a dash and 1-120 of [A-Za-z0-9_.-]'),
  repo: z.strictObject({ id: z.string().regex(/^[0-9a-f]{16}$/, 'repo.id must be 16 hex digits'), root: z.string().min(1) }),
  source: z.enum(['cli', 'hook']),
  intent: z.enum(LIFECYCLE_INTENTS),
  taskRef: z.string().min(1).max(256),
  args: z.record(z.string(), z.unknown()),
  enqueuedAt: z.string().min(1),
});

export type JobEnvelope = z.infer<typeof jobEnvelopeSchema>;

export type RepoIdentity = Readonly<{ id: string; root: string }>;

/** repoId = first 16 hex digits of sha256 of the repository's real path. */
export function repoIdentity(root: string): RepoIdentity {
  const real = fs.realpathSync.native(root);
  return { id: createHash('sha256').update(real).digest('hex').slice(0, 16), root: real };
}

export function queueNameFor(repoId: string): string {
  return `baton-${repoId}`;
}

export function randomEventId(): string {
  return `c-${randomUUID()}`;
}

/** A caller-chosen key maps to a stable id: repeating the command applies the intent once. */
export function eventIdForKey(key: string): string {
  return `k-${createHash('sha256').update(key).digest('hex').slice(0, 40)}`;
}

/** Native hook events: the same payload delivered twice gets the same id. */
export function eventIdForNative(parts: readonly (string | null | undefined)[]): string {
  return `h-${createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 40)}`;
}

export function envelopeFor(
  event: LifecycleEvent,
  repo: RepoIdentity,
  source: 'cli' | 'hook',
  eventId: string,
  now: Date = new Date(),
): JobEnvelope {
  const { intent, taskRef, ...args } = event;
  return { v: ENVELOPE_VERSION, eventId, repo: { id: repo.id, root: repo.root }, source, intent, taskRef, args, enqueuedAt: now.toISOString() };
}

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

