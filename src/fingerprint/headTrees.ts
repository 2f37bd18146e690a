import type { ObjectDatabase } from './objects.ts';
import { MODE_TREE, parseTree, type TreeEntry } from './tree.ts';

// HEAD's trees for a capture (capture.ts): read only for the paths where HEAD still matters, parsed
// on demand, one directory at a time, and kept by id across captures.

/** HEAD's trees, parsed on demand and kept by id (tree objects never change). */
export class HeadTrees {
  private readonly db: ObjectDatabase;
  private readonly cache: Map<string, Map<string, TreeEntry>>;
  private readonly pending = new Map<string, Promise<Map<string, TreeEntry>>>();

  constructor(db: ObjectDatabase, cache: Map<string, Map<string, TreeEntry>>) {
    this.db = db;
    this.cache = cache;
  }

  entries(oid: string): Promise<Map<string, TreeEntry>> | Map<string, TreeEntry> {
    const hit = this.cache.get(oid);
    if (hit) return hit;
    let p = this.pending.get(oid);
    if (!p) {
      p = this.db.read(oid).then((obj) => {
        if (obj.type !== 'tree') throw new Error(`HEAD refers to ${oid} as a tree but it is a ${obj.type}`);
        const map = new Map<string, TreeEntry>();
        for (const e of parseTree(obj.content)) map.set(e.name, e);
        if (this.cache.size > 20_000) this.cache.clear();
        this.cache.set(oid, map);
        this.pending.delete(oid);
        return map;
      });
      this.pending.set(oid, p);
    }
    return p;
  }
}

/** Lazily resolved HEAD tree of one directory (null: the directory is not a tree in HEAD). */
export type HeadDir = { get(): Promise<Map<string, TreeEntry> | null> };

export const NO_HEAD: HeadDir = { get: () => Promise.resolve(null) };

export function headDir(trees: HeadTrees, oid: string | null): HeadDir {
  if (oid === null) return NO_HEAD;
  let memo: Promise<Map<string, TreeEntry> | null> | undefined;
  return { get: () => (memo ??= Promise.resolve(trees.entries(oid))) };
}

/** HEAD's root directory; the commit is only read when some path actually needs HEAD. */
export function rootHeadDir(trees: HeadTrees, headTree: () => Promise<string | null>): HeadDir {
  let memo: Promise<Map<string, TreeEntry> | null> | undefined;
  return { get: () => (memo ??= headTree().then((oid) => (oid === null ? null : trees.entries(oid)))) };
}

export function childHeadDir(trees: HeadTrees, parent: HeadDir, name: string): HeadDir {
  if (parent === NO_HEAD) return NO_HEAD;
  let memo: Promise<Map<string, TreeEntry> | null> | undefined;
  return {
    get: () =>
      (memo ??= parent.get().then((entries) => {
        const e = entries?.get(name);
        return e && e.mode === MODE_TREE ? trees.entries(e.oid) : null;
      })),
  };
}

export async function headEntry(head: HeadDir, name: string): Promise<TreeEntry | undefined> {
  if (head === NO_HEAD) return undefined;
  return (await head.get())?.get(name);
}
