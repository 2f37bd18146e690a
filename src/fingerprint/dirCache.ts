// What a long-running fingerprinter remembers per work-tree directory between captures, so that a
// repeated capture with little changed does little more than one `lstat` per file and directory:
//
// - the directory's listing, reused instead of `readdir` while the directory's own inode, mtime and
//   ctime (to the nanosecond) are unchanged: adding, removing or renaming an entry changes them. A
//   listing is only trusted if the directory's mtime and ctime are more than RACY_MARGIN_MS older
//   than the capture that read it (an entry created in the same timestamp tick, after the listing,
//   would leave them unchanged), the rule statCache.ts applies to files;
// - the ignore verdicts of its entries, reused with the listing while the rule files in force are the
//   same compiled files (RuleStack.key);
// - the entries of its tree, in listing order, and the tree id: when a capture arrives at the same
//   entries (name, mode, id; a file's blob id still comes from its stat data), the tree is neither
//   serialised nor hashed again. Everything HEAD decides (ignored tracked files, submodules, modes
//   with core.fileMode false) and nested repositories' HEADs are looked at again on every capture;
//   only their result is compared.
import fs from 'node:fs';
import type { TreeEntry } from './tree.ts';
import { readDir } from './workTree.ts';

export type DirRecord = {
  ino: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  /** The listing may be reused while ino, mtime and ctime are unchanged (they were not racy). */
  trusted: boolean;
  listing: fs.Dirent[];
  /** RuleStack.key of the verdicts ('' in forced mode, where nothing is excluded). */
  rulesKey: string | null;
  /** Per listing position: 0 not computed, 1 not excluded, 2 excluded. */
  verdicts: Uint8Array | null;
  /** The tree's entries in listing order (unsorted), and its id (null: empty, not a tree). */
  entries: TreeEntry[] | null;
  oid: string | null;
};

/** Repo-relative directory ('' for the root) → what the last capture learned about it. */
export type DirCache = Map<string, DirRecord>;

export type Listing = {
  list: fs.Dirent[];
  /** This capture's record of the directory (null when nothing is remembered). */
  record: DirRecord | null;
  /** The previous capture's record, if any. */
  previous: DirRecord | undefined;
  /** The listing is the previous one (so are its ignore verdicts, under the same rules). */
  reused: boolean;
};

const EXACT_LSTAT = { bigint: true, throwIfNoEntry: false } as const;

/**
 * A directory's entries: the remembered listing while the directory's stat data vouches for it,
 * else `readdir`. The stat comes first: a change between it and the `readdir` only makes the next
 * capture read the directory again.
 */
export function listDirectory(previousDirs: DirCache, nextDirs: DirCache | null, trustBeforeNs: bigint, rel: string, abs: string): Listing {
  if (nextDirs === null) return { list: readDir(abs), record: null, previous: undefined, reused: false };
  const previous = previousDirs.get(rel);
  const st = fs.lstatSync(abs, EXACT_LSTAT);
  if (!st?.isDirectory()) return { list: readDir(abs), record: null, previous, reused: false };
  const reused =
    previous?.trusted === true && previous.mtimeNs === st.mtimeNs && previous.ctimeNs === st.ctimeNs && previous.ino === st.ino;
  const list = reused ? previous.listing : readDir(abs);
  const record: DirRecord = {
    ino: st.ino,
    mtimeNs: st.mtimeNs,
    ctimeNs: st.ctimeNs,
    trusted: st.mtimeNs < trustBeforeNs && st.ctimeNs < trustBeforeNs,
    listing: list,
    rulesKey: null,
    verdicts: null,
    entries: null,
    oid: null,
  };
  nextDirs.set(rel, record);
  return { list, record, previous, reused };
}

/** Whether a directory's entries (in listing order) are the ones its remembered tree was built from. */
export function sameEntries(a: readonly TreeEntry[], b: readonly TreeEntry[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as TreeEntry;
    const y = b[i] as TreeEntry;
    if (x !== y && (x.oid !== y.oid || x.name !== y.name || x.mode !== y.mode)) return false;
  }
  return true;
}
