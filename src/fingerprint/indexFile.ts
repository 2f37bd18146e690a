// A read-only reader of git's index file (`.git/index`), used only as a stat cache: path → the stat
// data git recorded when it hashed the file, and the blob id it got.
//
// Why our own reader rather than isomorphic-git's GitIndex: GitIndex accepts versions 2 and 3 only
// (git writes version 4 with `index.version=4` or `feature.manyFiles`), and it builds an object per
// entry up front. This reader supports versions 2–4, keeps the file's bytes and decodes an entry's
// fields only when that path is looked up, which is what a stat-cache lookup needs. Extensions are
// skipped; a split index (`link` extension) is not followed: its entries are then not trusted at all
// (everything is re-hashed, which is slower but still exact).
import fs from 'node:fs';
import { Buffer } from 'node:buffer';

export type IndexStat = {
  /** Seconds and nanoseconds of the index file's own mtime: the racy-git reference point. */
  timestampSec: number;
  timestampNsec: number;
};

export type IndexSnapshot = IndexStat & {
  /** Identity of the file this was parsed from, to reuse the parse while it is unchanged. */
  stamp: string;
  buf: Buffer;
  /**
   * Directory (repo-relative, '' for the root) → entry name → byte offset of its entry in `buf`.
   * Stage-0, trusted entries only. Per directory, so that a walk looks a file up by its name (a
   * string it already has) rather than by its whole path (which it would have to build and hash).
   */
  dirs: Map<string, Map<string, number>>;
};

const SIGNATURE = 0x44495243; // 'DIRC'
const FLAG_ASSUME_VALID = 0x8000;
const FLAG_EXTENDED = 0x4000;
const FLAG_STAGE_MASK = 0x3000;
const EXT_SKIP_WORKTREE = 0x4000;
const EXT_INTENT_TO_ADD = 0x2000;

export const EMPTY_INDEX: IndexSnapshot = {
  stamp: 'empty',
  timestampSec: 0,
  timestampNsec: 0,
  buf: Buffer.alloc(0),
  dirs: new Map(),
};

/**
 * Reads the index at `file`, reusing `previous` if the file has not changed. A missing, unreadable or
 * unsupported index yields an empty snapshot (nothing is trusted, everything is hashed).
 */
export function readIndex(file: string, previous?: IndexSnapshot): IndexSnapshot {
  let st: fs.BigIntStats;
  try {
    st = fs.statSync(file, { bigint: true });
  } catch {
    return EMPTY_INDEX;
  }
  const stamp = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  if (previous && previous.stamp === stamp) return previous;
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch {
    return EMPTY_INDEX;
  }
  const timestampSec = Number(st.mtimeNs / 1_000_000_000n);
  const timestampNsec = Number(st.mtimeNs % 1_000_000_000n);
  const dirs = parseEntries(buf);
  if (!dirs) return EMPTY_INDEX;
  return { stamp, timestampSec, timestampNsec, buf, dirs };
}

function parseEntries(buf: Buffer): Map<string, Map<string, number>> | null {
  if (buf.length < 12 + 20 || buf.readUInt32BE(0) !== SIGNATURE) return null;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return null;
  const count = buf.readUInt32BE(8);
  const dirs = new Map<string, Map<string, number>>();
  // Entries are sorted by path: most follow one of the same directory.
  let dirName = '';
  let dir: Map<string, number> | undefined;
  const end = buf.length - 20;
  let at = 12;
  let previousPath: Buffer = Buffer.alloc(0);
  for (let i = 0; i < count; i++) {
    if (at + 62 > end) return null;
    const flags = buf.readUInt16BE(at + 60);
    let extFlags = 0;
    let nameStart = at + 62;
    if (flags & FLAG_EXTENDED) {
      if (version < 3) return null;
      extFlags = buf.readUInt16BE(at + 62);
      nameStart += 2;
    }
    let name: string;
    let next: number;
    if (version === 4) {
      // Prefix compression: varint N = bytes to drop from the previous path, then a NUL-terminated suffix.
      let p = nameStart;
      let c = buf[p++] ?? 0;
      let drop = c & 0x7f;
      while (c & 0x80) {
        drop += 1;
        c = buf[p++] ?? 0;
        drop = (drop << 7) + (c & 0x7f);
      }
      const nul = buf.indexOf(0, p);
      if (nul < 0 || nul > end || drop > previousPath.length) return null;
      const pathBytes = Buffer.concat([previousPath.subarray(0, previousPath.length - drop), buf.subarray(p, nul)]);
      previousPath = pathBytes;
      name = pathBytes.toString('utf8');
      next = nul + 1;
    } else {
      const nameLength = flags & 0x0fff;
      const nul = nameLength < 0x0fff ? nameStart + nameLength : buf.indexOf(0, nameStart);
      if (nul < 0 || nul > end) return null;
      name = buf.toString('utf8', nameStart, nul);
      // Entries are padded with 1–8 NULs to a multiple of 8 bytes.
      next = at + ((nul - at + 8) & ~7);
    }
    const trusted = (flags & (FLAG_STAGE_MASK | FLAG_ASSUME_VALID)) === 0 && (extFlags & (EXT_SKIP_WORKTREE | EXT_INTENT_TO_ADD)) === 0;
    if (trusted) {
      const slash = name.lastIndexOf('/');
      const parent = slash < 0 ? '' : name.slice(0, slash);
      if (dir === undefined || parent !== dirName) {
        dirName = parent;
        dir = dirs.get(parent);
        if (dir === undefined) {
          dir = new Map();
          dirs.set(parent, dir);
        }
      }
      dir.set(slash < 0 ? name : name.slice(slash + 1), at);
    }
    at = next;
  }
  // A split index keeps most entries in a shared index file; do not trust a partial picture.
  if (hasExtension(buf, at, end, 'link')) return new Map();
  return dirs;
}

function hasExtension(buf: Buffer, at: number, end: number, name: string): boolean {
  while (at + 8 <= end) {
    const sig = buf.toString('latin1', at, at + 4);
    const size = buf.readUInt32BE(at + 4);
    if (sig === name) return true;
    at += 8 + size;
  }
  return false;
}
