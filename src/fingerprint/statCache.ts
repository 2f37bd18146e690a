// Deciding, from stat data alone, that a file still has the blob id we (or git) hashed before.
//
// Trusted stat data is always: inode, size, mtime and ctime, both to the nanosecond, and the kind
// (file or symlink). ctime cannot be set back by a program, so an edit whose mtime was restored
// afterwards (`touch -d`, `utimes`) is still seen.
//
// The racy-git problem: a file changed twice within one timestamp tick can have identical stat data
// with different contents. So stat data is only trusted when the file's timestamps are older than
// the moment the blob id was obtained:
// - for `.git/index` entries, git's rule: an entry whose mtime is not older than the index file's
//   mtime is re-hashed (git also smudges such entries to size 0 when it writes the index; a size-0
//   entry whose blob is not the empty blob is re-hashed too, as git does);
// - for our own cache, an entry is remembered only if its mtime and ctime are older than the capture
//   start minus RACY_MARGIN_MS; otherwise the next capture hashes the file again.
import type fs from 'node:fs';
import type { IndexSnapshot } from './indexFile.ts';
import { EMPTY_BLOB_OID } from './tree.ts';

/**
 * How much earlier than the wall clock a file system may stamp a write: the coarse kernel clock lags
 * by up to a tick, and some file systems store whole (FAT: even) seconds.
 */
export const RACY_MARGIN_MS = 3000;

export const KIND_FILE = 1;
export const KIND_SYMLINK = 2;
export type FileKind = typeof KIND_FILE | typeof KIND_SYMLINK;

/** The kind of a stat's mode (given as a number): a regular file, a symlink, or 0 for anything else. */
export function fileKind(mode: number): FileKind | 0 {
  const type = mode & 0o170000;
  return type === 0o100000 ? KIND_FILE : type === 0o120000 ? KIND_SYMLINK : 0;
}

export type CachedStat = {
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  kind: FileKind;
  oid: string;
};

const U32 = 0xffffffffn;
const TWO_POW_53 = 2n ** 53n;

/** The low 32 bits of a non-negative stat field, as the index stores it (exact, no bigint math below 2^53). */
function low32(v: bigint): number {
  return v < TWO_POW_53 ? Number(v) % 4_294_967_296 : Number(v & U32);
}

/**
 * Whether a stat time in nanoseconds is exactly `sec` seconds and `nsec` nanoseconds as the index
 * records them. Without bigint division (it runs for every file): the two agree within 2^12 as
 * doubles (rounding errs by less than 2^10 there) and modulo 2^32, so they are equal. An index
 * time whose seconds were truncated to 32 bits (after 2106) never matches: the file is re-hashed.
 */
export function sameTime(ns: bigint, sec: number, nsec: number): boolean {
  const approx = Number(ns) - (sec * 1e9 + nsec);
  if (approx > 4096 || approx < -4096) return false;
  return Number(BigInt.asUintN(32, ns)) === (Math.imul(sec, 1_000_000_000) + nsec) >>> 0;
}

/** The blob id the cache remembers for this stat, or null if the stat changed. */
export function lookupOwn(cached: CachedStat | undefined, st: fs.BigIntStats, kind: FileKind): string | null {
  if (
    cached !== undefined &&
    cached.kind === kind &&
    cached.mtimeNs === st.mtimeNs &&
    cached.ctimeNs === st.ctimeNs &&
    cached.size === st.size &&
    cached.ino === st.ino
  ) {
    return cached.oid;
  }
  return null;
}

/** The blob id the `.git/index` entry at byte offset `at` records if its stat data matches and is not racy. */
export function lookupIndex(index: IndexSnapshot, at: number, st: fs.BigIntStats, kind: FileKind): string | null {
  const b = index.buf;
  const type = b.readUInt32BE(at + 24) & 0o170000;
  if (kind === KIND_FILE ? type !== 0o100000 : type !== 0o120000) return null;
  const size = b.readUInt32BE(at + 36);
  if (size !== low32(st.size) || b.readUInt32BE(at + 20) !== low32(st.ino)) return null;
  const mtimeSec = b.readUInt32BE(at + 8);
  const mtimeNsec = b.readUInt32BE(at + 12);
  if (!sameTime(st.mtimeNs, mtimeSec, mtimeNsec) || !sameTime(st.ctimeNs, b.readUInt32BE(at), b.readUInt32BE(at + 4))) return null;
  // Racily clean: modified in the same tick the index was written, so stat data cannot vouch for it.
  if (mtimeSec > index.timestampSec || (mtimeSec === index.timestampSec && mtimeNsec >= index.timestampNsec)) {
    return null;
  }
  const oid = b.toString('hex', at + 40, at + 60);
  if (size === 0 && oid !== EMPTY_BLOB_OID) return null; // smudged racy entry
  return oid;
}

/** A cache record for a freshly hashed file, or null when its timestamps are too recent to trust. */
export function remember(st: fs.BigIntStats, kind: FileKind, oid: string, trustBeforeNs: bigint): CachedStat | null {
  if (st.mtimeNs >= trustBeforeNs || st.ctimeNs >= trustBeforeNs) return null;
  return { ino: st.ino, size: st.size, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs, kind, oid };
}
