import { hexDigest, randomId } from '../core/digest.ts';
import fs from 'node:fs';
import type { LifecycleEvent } from '../core/events.ts';
import type { JobEnvelope } from './envelope.ts';

// The parts of the job contract (envelope.ts) that need no validation library: event ids, queue
// names, repository identity and building an envelope. Hooks use only these on their fast path;
// envelope.ts re-exports them next to the zod schema.

export const ENVELOPE_VERSION = 1;

/** BullMQ job ids may not contain ':' nor be all digits; baton's ids are a letter prefix + [A-Za-z0-9_.-]. */
export const EVENT_ID_PATTERN = /^[a-z]-[A-Za-z0-9_.-]{1,120}$/;

export type RepoIdentity = Readonly<{ id: string; root: string }>;

/** repoId = first 16 hex digits of sha256 of the repository's real path. */
export function repoIdentity(root: string): RepoIdentity {
  const real = fs.realpathSync.native(root);
  return { id: hexDigest('sha256', real).slice(0, 16), root: real };
}

export function queueNameFor(repoId: string): string {
  return `baton-${repoId}`;
}

export function randomEventId(): string {
  return `c-${randomId()}`;
}

/** A caller-chosen key maps to a stable id: repeating the command applies the intent once. */
export function eventIdForKey(key: string): string {
  return `k-${hexDigest('sha256', key).slice(0, 40)}`;
}

/** Native hook events: the same payload delivered twice gets the same id. */
export function eventIdForNative(parts: readonly (string | null | undefined)[]): string {
  return `h-${hexDigest('sha256', JSON.stringify(parts)).slice(0, 40)}`;
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
