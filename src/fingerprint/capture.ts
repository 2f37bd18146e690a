// Building the fingerprint tree: what
//   GIT_INDEX_FILE=<temp> git read-tree HEAD && git add -A -- :/ &&
//   git add -f -- <forcePath> && git write-tree
// produces, from the work tree, the ignore rules and (only where they matter) HEAD's trees.
//
// Why the walk can mostly ignore HEAD: after `read-tree HEAD`, `add -A` brings every entry that is
// not excluded by the ignore rules to its work-tree state (modified, deleted, added). HEAD only still
// matters for paths that are excluded (a tracked file stays tracked and is updated even if ignored;
// an untracked ignored one is not added), for tracked submodules, and for the modes git keeps from
// the index when core.fileMode/core.symlinks are false. HEAD's trees are read lazily, just for
// those paths.
//
// Not applied (documented): content filters from .gitattributes (end-of-line conversion, LFS,
// ident, filter drivers). Blobs are the files' bytes, as `git hash-object --no-filters` would hash
// them; a repository relying on such filters gets different ids than git.
import fs from 'node:fs';
import type { Buffer } from 'node:buffer';
import type { IndexSnapshot } from './indexFile.ts';
import { isExcluded, matcherFor, pushLevel, type DirMatcher, type RuleFileCache, type RuleStack } from './ignoreRules.ts';
import { hashWrapped, readFileAsBlob, wrapObject, type ObjectDatabase } from './objects.ts';
import { findGitDir, readCommonDir, resolveHead, type RepoConfig } from './repository.ts';
import { checkForcedPath, NOT_A_REPOSITORY, nestedRepository } from './workTree.ts';
import { listDirectory, sameEntries, type DirCache, type Listing } from './dirCache.ts';
import { NO_HEAD, childHeadDir, headDir, headEntry, rootHeadDir, type HeadDir, type HeadTrees } from './headTrees.ts';
import { fileKind, KIND_FILE, KIND_SYMLINK, lookupIndex, lookupOwn, remember, type CachedStat, type FileKind } from './statCache.ts';
import {
  MODE_EXECUTABLE,
  MODE_FILE,
  MODE_GITLINK,
  MODE_SYMLINK,
  MODE_TREE,
  serializeTreeTransient,
  sortTreeEntries,
  type TreeEntry,
  type TreeMode,
} from './tree.ts';

export type CaptureContext = {
  /** Absolute work tree root. */
  root: string;
  config: RepoConfig;
  db: ObjectDatabase;
  index: IndexSnapshot;
  rules: RuleFileCache;
  /** Stat cache from earlier captures (read) and the one being built (written; null: not kept). */
  previous: StatCache;
  next: StatCache | null;
  /** Directory listings, verdicts and trees from earlier captures (read) and this one (written; null: not kept). */
  previousDirs: DirCache;
  nextDirs: DirCache | null;
  /** Hashed files whose mtime or ctime is at or after this are not remembered (racy). */
  trustBeforeNs: bigint;
  /** Repo-relative path force-added like `git add -f`, or null. */
  forcePath: string | null;
  headTrees: HeadTrees;
  /** HEAD's root tree id, or null without commits (resolved on first use). */
  headTree: () => Promise<string | null>;
  stats: CaptureStats;
};

export type CaptureStats = {
  files: number;
  hashed: number;
  fromIndex: number;
  fromCache: number;
  /** Trees serialised and hashed. */
  trees: number;
  /** Trees whose entries were the remembered ones (id reused), and listings reused instead of read. */
  treesReused: number;
  listingsReused: number;
};

/**
 * The stat cache a fingerprinter keeps between captures: directory (repo-relative, '' for the root)
 * → entry name → what was learned. Per directory, like the index (indexFile.ts), so that the walk
 * looks a file up by its name instead of hashing its whole path.
 */
export type StatCache = Map<string, Map<string, CachedStat>>;

/** What the caches know about the entries of one directory. */
type DirCaches = {
  index: ReadonlyMap<string, number> | undefined;
  previous: ReadonlyMap<string, CachedStat> | undefined;
  next: Map<string, CachedStat> | null;
};

function dirCaches(ctx: CaptureContext, rel: string): DirCaches {
  let next: Map<string, CachedStat> | null = null;
  if (ctx.next !== null) {
    next = ctx.next.get(rel) ?? null;
    if (next === null) {
      next = new Map();
      ctx.next.set(rel, next);
    }
  }
  return { index: ctx.index.dirs.get(rel), previous: ctx.previous.get(rel), next };
}

type Dirent = fs.Dirent;

/** Nanosecond times (bigint), and undefined instead of a throw for a path that is gone. */
const EXACT_LSTAT = { bigint: true, throwIfNoEntry: false } as const;

/** Computes (and writes) the fingerprint tree. Returns its id; an empty work tree gives the empty tree. */
export async function buildFingerprint(ctx: CaptureContext, rootStack: RuleStack): Promise<string> {
  // The procedure runs `git add -f` only if the path exists (following symlinks, like fs.existsSync).
  if (ctx.forcePath !== null && !fs.existsSync(`${ctx.root}/${ctx.forcePath}`)) ctx.forcePath = null;
  if (ctx.forcePath !== null) checkForcedPath(ctx.root, ctx.forcePath);
  const listed = listDir(ctx, '', ctx.root);
  const head = rootHeadDir(ctx.headTrees, ctx.headTree);
  const oid = await buildDir(ctx, '', ctx.root, listed, rootStack, head);
  return oid ?? writeTree(ctx, [], true);
}

/**
 * One work-tree directory. `stack` null means forced mode (inside the `git add -f` path: nothing is
 * excluded and no .gitignore is read).
 */
function listDir(ctx: CaptureContext, rel: string, abs: string): Listing {
  const listed = listDirectory(ctx.previousDirs, ctx.nextDirs, ctx.trustBeforeNs, rel, abs);
  if (listed.reused) ctx.stats.listingsReused++;
  return listed;
}

async function buildDir(
  ctx: CaptureContext,
  rel: string,
  abs: string,
  listed: Listing,
  stack: RuleStack | null,
  head: HeadDir,
): Promise<string | null> {
  const list = listed.list;
  let here = stack;
  if (here !== null) {
    for (const d of list) {
      if (d.name === '.gitignore') {
        // git does not follow a symlinked in-tree .gitignore.
        if (d.isFile()) {
          const ig = ctx.rules.load(`${abs}/.gitignore`);
          if (ig) here = pushLevel(here, rel, ig);
        }
        break;
      }
    }
  }
  const matcher = here === null ? null : matcherFor(here, rel);
  // Ignore verdicts: the remembered ones when the listing and the rule files in force are the same.
  const rulesKey = here === null ? '' : here.key;
  const previous = listed.previous;
  const verdicts =
    listed.reused && previous?.rulesKey === rulesKey && previous.verdicts !== null ? previous.verdicts : new Uint8Array(list.length);
  const excluded = (i: number, name: string, isDir: boolean): boolean => {
    let v = verdicts[i];
    if (v === 0) {
      v = isExcluded(matcher as DirMatcher, rel, name, isDir) ? 2 : 1;
      verdicts[i] = v;
    }
    return v === 2;
  };
  const caches = dirCaches(ctx, rel);
  const out: TreeEntry[] = [];
  const needHeadModes = !ctx.config.fileMode || !ctx.config.symlinks;
  // The forced path's parent directory and name, to spot it without building every entry's path.
  const forcedHere = forcedNameIn(ctx.forcePath, rel);
  for (let i = 0; i < list.length; i++) {
    const d = list[i] as Dirent;
    const name = d.name;
    if (name === '.git') continue;
    const childAbs = `${abs}/${name}`;
    if (name === forcedHere) {
      const e = await forcedEntry(ctx, caches, childPath(rel, name), childAbs, name, head);
      if (e) out.push(e);
      continue;
    }
    if (d.isDirectory()) {
      const childRel = childPath(rel, name);
      if (matcher !== null && excluded(i, name, true)) {
        const e = await excludedDir(ctx, caches, childRel, childAbs, name, head);
        if (e) out.push(e);
        continue;
      }
      const e = await enterDir(ctx, caches, childRel, childAbs, name, here, head);
      if (e) out.push(e);
    } else if (d.isFile() || d.isSymbolicLink()) {
      if (matcher !== null && excluded(i, name, false)) {
        // An ignored file stays in the fingerprint only if HEAD tracks it (then it is updated).
        const he = await headEntry(head, name);
        if (!he || he.mode === MODE_TREE) continue;
        const e = await trackedEntry(ctx, caches, childAbs, name, he);
        if (e) out.push(e);
        continue;
      }
      const headMode = needHeadModes ? (await headEntry(head, name))?.mode : undefined;
      const e = fileEntry(ctx, caches, childAbs, name, headMode);
      if (e) out.push(e);
    }
    // Sockets, FIFOs and devices are not added by git.
  }
  const record = listed.record;
  if (record === null) return writeTree(ctx, out);
  // The same entries as last time: the same tree.
  let oid: string | null;
  if (previous?.entries && sameEntries(previous.entries, out)) {
    oid = previous.oid;
    ctx.stats.treesReused++;
  } else {
    oid = writeTree(ctx, out.slice());
  }
  record.rulesKey = rulesKey;
  record.verdicts = verdicts;
  record.entries = out;
  record.oid = oid;
  return oid;
}

/** The forced path's name within directory `rel` if it lies directly or deeper below it (then it has a '/'). */
function forcedNameIn(forcePath: string | null, rel: string): string | null {
  if (forcePath === null || rel === '') return forcePath;
  return forcePath.startsWith(`${rel}/`) ? forcePath.slice(rel.length + 1) : null;
}

function childPath(rel: string, name: string): string {
  return rel ? `${rel}/${name}` : name;
}

/** A directory that is not excluded: a nested repository becomes a gitlink, anything else a tree. */
async function enterDir(
  ctx: CaptureContext,
  parent: DirCaches,
  rel: string,
  abs: string,
  name: string,
  stack: RuleStack | null,
  parentHead: HeadDir,
): Promise<TreeEntry | null> {
  const listed = listDir(ctx, rel, abs);
  for (const d of listed.list) {
    if (d.name === '.git') {
      const e = await nestedRepository(rel, abs, name, parentHead);
      if (e !== NOT_A_REPOSITORY) return e;
      break;
    }
  }
  // A submodule that is not checked out (no .git inside): the index records it as a gitlink, and the
  // temporary index (from HEAD) keeps HEAD's gitlink without looking inside.
  const offset = parent.index?.get(name);
  if (offset !== undefined && (ctx.index.buf.readUInt32BE(offset + 24) & 0o170000) === 0o160000) {
    const he = await headEntry(parentHead, name);
    if (he && he.mode === MODE_GITLINK) return he;
  }
  const oid = await buildDir(ctx, rel, abs, listed, stack, childHeadDir(ctx.headTrees, parentHead, name));
  return oid ? { name, mode: MODE_TREE, oid } : null;
}

/** An excluded directory: only what HEAD tracks below it (and the forced path, if below it) remains. */
async function excludedDir(
  ctx: CaptureContext,
  parent: DirCaches,
  rel: string,
  abs: string,
  name: string,
  parentHead: HeadDir,
): Promise<TreeEntry | null> {
  const onForcedPath = ctx.forcePath?.startsWith(`${rel}/`);
  const he = await headEntry(parentHead, name);
  if (!he) {
    if (!onForcedPath) return null;
    const oid = await buildTracked(ctx, rel, abs, NO_HEAD);
    return oid ? { name, mode: MODE_TREE, oid } : null;
  }
  if (he.mode === MODE_TREE || onForcedPath) {
    const oid = await buildTracked(ctx, rel, abs, he.mode === MODE_TREE ? headDir(ctx.headTrees, he.oid) : NO_HEAD);
    return oid ? { name, mode: MODE_TREE, oid } : null;
  }
  return trackedEntry(ctx, parent, abs, name, he);
}

/**
 * Below an excluded directory (a real directory on disk): HEAD's entries, each brought to its
 * work-tree state, plus the forced path if it lies below.
 */
async function buildTracked(ctx: CaptureContext, rel: string, abs: string, head: HeadDir): Promise<string | null> {
  const entries = await head.get();
  const caches = dirCaches(ctx, rel);
  let forcedChild: string | null = null;
  if (ctx.forcePath?.startsWith(`${rel}/`)) {
    const rest = ctx.forcePath.slice(rel.length + 1);
    const slash = rest.indexOf('/');
    forcedChild = slash < 0 ? rest : rest.slice(0, slash);
  }
  const out: TreeEntry[] = [];
  let forcedHandled = false;
  if (forcedChild !== null) {
    const childRel = `${rel}/${forcedChild}`;
    const childAbs = `${abs}/${forcedChild}`;
    if (childRel === ctx.forcePath) {
      const e = await forcedEntry(ctx, caches, childRel, childAbs, forcedChild, head);
      if (e) out.push(e);
      forcedHandled = true;
    } else {
      const st = fs.lstatSync(childAbs, { throwIfNoEntry: false });
      if (st?.isDirectory()) {
        const he = entries?.get(forcedChild);
        const sub = he && he.mode === MODE_TREE ? headDir(ctx.headTrees, he.oid) : NO_HEAD;
        const oid = await buildTracked(ctx, childRel, childAbs, sub);
        if (oid) out.push({ name: forcedChild, mode: MODE_TREE, oid });
        forcedHandled = true;
      }
    }
  }
  if (entries) {
    for (const he of entries.values()) {
      if (forcedHandled && he.name === forcedChild) continue;
      const childRel = `${rel}/${he.name}`;
      const childAbs = `${abs}/${he.name}`;
      if (he.mode === MODE_TREE) {
        const st = fs.lstatSync(childAbs, { throwIfNoEntry: false });
        if (!st?.isDirectory()) continue; // gone, or replaced by an (ignored, untracked) file
        const oid = await buildTracked(ctx, childRel, childAbs, headDir(ctx.headTrees, he.oid));
        if (oid) out.push({ name: he.name, mode: MODE_TREE, oid });
      } else {
        const e = await trackedEntry(ctx, caches, childAbs, he.name, he);
        if (e) out.push(e);
      }
    }
  }
  return writeTree(ctx, out);
}

/** A path HEAD tracks as a file, symlink or gitlink, brought to its work-tree state. */
async function trackedEntry(ctx: CaptureContext, dir: DirCaches, abs: string, name: string, he: TreeEntry): Promise<TreeEntry | null> {
  const st = fs.lstatSync(abs, EXACT_LSTAT);
  if (!st) return null; // deleted
  if (st.isDirectory()) {
    // A tracked path that is now a directory: a repository there is recorded as a gitlink (a
    // tracked gitlink whose checkout has no commit is kept); otherwise the path counts as deleted.
    const gitDir = findGitDir(abs);
    const commit = gitDir ? resolveHead(gitDir, readCommonDir(gitDir)) : null;
    if (commit) return { name, mode: MODE_GITLINK, oid: commit };
    return he.mode === MODE_GITLINK ? he : null;
  }
  const mode = Number(st.mode);
  if (fileKind(mode) === 0) return null;
  return fileEntryFromStat(ctx, dir, abs, name, st, mode, he.mode);
}

/** The `git add -f` path itself: everything there is added, ignore rules do not apply. */
async function forcedEntry(
  ctx: CaptureContext,
  parent: DirCaches,
  rel: string,
  abs: string,
  name: string,
  parentHead: HeadDir,
): Promise<TreeEntry | null> {
  const st = fs.lstatSync(abs, EXACT_LSTAT);
  if (!st) return null;
  if (st.isDirectory()) return enterDir(ctx, parent, rel, abs, name, null, parentHead);
  const mode = Number(st.mode);
  if (fileKind(mode) === 0) return null;
  const needHeadModes = !ctx.config.fileMode || !ctx.config.symlinks;
  const headMode = needHeadModes ? (await headEntry(parentHead, name))?.mode : undefined;
  return fileEntryFromStat(ctx, parent, abs, name, st, mode, headMode);
}

function fileEntry(ctx: CaptureContext, dir: DirCaches, abs: string, name: string, headMode: TreeMode | undefined): TreeEntry | null {
  const st = fs.lstatSync(abs, EXACT_LSTAT);
  if (!st) return null; // removed under our feet
  const mode = Number(st.mode);
  if (fileKind(mode) === 0) return null; // replaced by something else under our feet
  return fileEntryFromStat(ctx, dir, abs, name, st, mode, headMode);
}

/**
 * Mode and blob of a file or symlink (`statMode`: st.mode as a number, converted once; the
 * BigIntStats is*() methods do bigint arithmetic on every call). Modes as git's ce_mode_from_stat: the owner's executable bit
 * decides 100755/100644, unless core.fileMode is false (then the mode HEAD has is kept, 100644 for new
 * files); with core.symlinks false, a regular file where HEAD has a symlink stays a symlink.
 */
function fileEntryFromStat(
  ctx: CaptureContext,
  dir: DirCaches,
  abs: string,
  name: string,
  st: fs.BigIntStats,
  statMode: number,
  headMode: TreeMode | undefined,
): TreeEntry {
  ctx.stats.files++;
  if (fileKind(statMode) === KIND_SYMLINK) {
    return { name, mode: MODE_SYMLINK, oid: blobId(ctx, dir, name, abs, st, KIND_SYMLINK) };
  }
  let mode: TreeMode;
  if (!ctx.config.symlinks && headMode === MODE_SYMLINK) mode = MODE_SYMLINK;
  else if (ctx.config.fileMode) mode = statMode & 0o100 ? MODE_EXECUTABLE : MODE_FILE;
  else mode = headMode === MODE_EXECUTABLE ? MODE_EXECUTABLE : MODE_FILE;
  return { name, mode, oid: blobId(ctx, dir, name, abs, st, KIND_FILE) };
}

/** The blob id of a file or link: from the stat caches when they vouch for it, else hashed (and written). */
function blobId(ctx: CaptureContext, dir: DirCaches, name: string, abs: string, st: fs.BigIntStats, kind: FileKind): string {
  const next = dir.next;
  const cached = dir.previous?.get(name);
  let oid = lookupOwn(cached, st, kind);
  if (oid !== null) {
    ctx.stats.fromCache++;
    next?.set(name, cached as CachedStat);
    return oid;
  }
  const at = dir.index?.get(name);
  oid = at === undefined ? null : lookupIndex(ctx.index, at, st, kind);
  if (oid !== null) {
    ctx.stats.fromIndex++;
    next?.set(name, { ino: st.ino, size: st.size, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs, kind, oid });
    return oid;
  }
  ctx.stats.hashed++;
  const wrapped =
    kind === KIND_SYMLINK
      ? wrapObject('blob', fs.readlinkSync(abs, { encoding: 'buffer' }) as Buffer)
      : (readFileAsBlob(abs, Number(st.size)) ?? wrapObject('blob', fs.readFileSync(abs)));
  oid = hashWrapped(wrapped);
  ctx.db.writeWrapped(oid, wrapped);
  const record = next ? remember(st, kind, oid, ctx.trustBeforeNs) : null;
  if (record) next?.set(name, record);
  return oid;
}

/** Sorts, serialises, hashes and writes (if missing) one tree; null for an empty directory. */
function writeTree(ctx: CaptureContext, entries: TreeEntry[]): string | null;
function writeTree(ctx: CaptureContext, entries: TreeEntry[], allowEmpty: true): string;
function writeTree(ctx: CaptureContext, entries: TreeEntry[], allowEmpty = false): string | null {
  if (entries.length === 0 && !allowEmpty) return null;
  const wrapped = serializeTreeTransient(sortTreeEntries(entries));
  const oid = hashWrapped(wrapped);
  ctx.db.writeWrapped(oid, wrapped);
  ctx.stats.trees++;
  return oid;
}
