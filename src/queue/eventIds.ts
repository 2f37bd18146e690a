import { hexDigest, randomId } from '../base/digest.ts';

// Event ids, which are the BullMQ job ids (docs/architecture.md "Job envelope"): a letter, a dash and
// 1–120 characters of [A-Za-z0-9_.-]. Light: the hook derives its id on every event.

/** BullMQ job ids may not contain ':' nor be all digits; baton's ids are a letter prefix + [A-Za-z0-9_.-]. */
export const EVENT_ID_PATTERN = /^[a-z]-[A-Za-z0-9_.-]{1,120}$/;

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
