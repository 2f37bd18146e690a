import { hexDigest, randomId } from '../base/digest.ts';
import fs from 'node:fs';
import os from 'node:os';
import { checkoutRecord } from './checkoutId.ts';
import type { LifecycleEvent } from '../core/events.ts';
import type { JobEnvelope } from './envelope.ts';

// The parts of the job contract (envelope.ts) that need no validation library: event ids, queue
// names, repository identity and building an envelope. Hooks use only these on their fast path;
// envelope.ts re-exports them next to the zod schema.

export const ENVELOPE_VERSION = 1;

/** BullMQ job ids may not contain ':' nor be all digits; baton's ids are a letter prefix + [A-Za-z0-9_.-]. */
export const EVENT_ID_PATTERN = /^[a-z]-[A-Za-z0-9_.-]{1,120}$/;

/** Which checkout (id), where it is on this machine (root), and which machine says so (host). */
export type RepoIdentity = Readonly<{ id: string; root: string; host: string }>;

/**
 * The checkout id (`id`) is the checkout's random id (`<gitdir>/baton/checkout.json`, see
 * checkoutId.ts), never a function of the path: two machines with a checkout at the same path get
 * two queues.
 */
export function repoIdentity(root: string): RepoIdentity {
  const real = fs.realpathSync.native(root);
  return { id: checkoutRecord(real).id, root: real, host: os.hostname() };
}

export function queueNameFor(checkoutId: string): string {
  return `baton-${checkoutId}`;
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
  repo: Pick<RepoIdentity, 'id' | 'root'> & Readonly<{ host?: string }>,
  source: 'cli' | 'hook' | 'worker',
  eventId: string,
  now: Date = new Date(),
): JobEnvelope {
  const { intent, taskRef, ...args } = event;
  return { v: ENVELOPE_VERSION, eventId, repo: repo.host === undefined ? { id: repo.id, root: repo.root } : { id: repo.id, root: repo.root, host: repo.host }, source, intent, taskRef, args, enqueuedAt: now.toISOString() };
}
