// Workspace fingerprints (docs/architecture.md "Fingerprints", docs/lifecycle.md §9), computed without a git
// binary: the tree id of
//   GIT_INDEX_FILE=<temp> git read-tree HEAD && git add -A -- :/ &&
//   git add -f -- .agents/workspace/active && git write-tree
// with the blob and tree objects written into the repository, so `git diff <a> <b>` works on them.
//
// Module map: repository.ts (git dir, config, HEAD) · indexFile.ts (.git/index reader) ·
// statCache.ts (when stat data vouches for a blob id, racy-git rules) · ignoreRules.ts (gitignore
// via the `ignore` package) · tree.ts (tree order and format) · objects.ts + packIndex.ts (object
// database) · packedObjects.ts (deltified packed objects, read with isomorphic-git) · capture.ts (the
// walk) · diff.ts (changed paths).
//
// Known differences from git (documented, see README and capture.ts / ignoreRules.ts):
// - .gitattributes content filters (eol, LFS, filter drivers) are not applied;
// - core.excludesFile and the user-global ignore file are not read;
// - file names must be valid UTF-8; core.precomposeUnicode and case-insensitive file systems are not
//   emulated.
import path from 'node:path';
import { ACTIVE_TASKS_PATH } from '../core/taskLayout.ts';
import type { WorkspaceFingerprinter } from '../core/types.ts';
import { buildFingerprint, type CaptureStats, type StatCache } from './capture.ts';
import type { DirCache } from './dirCache.ts';
import { HeadTrees } from './headTrees.ts';
import { diffTrees, resolveTreeId } from './diff.ts';
import { rootStack, RuleFileCache } from './ignoreRules.ts';
import { EMPTY_INDEX, readIndex, type IndexSnapshot } from './indexFile.ts';
import { ObjectDatabase, peelToTree } from './objects.ts';
import { openRepository, resolveHead, type RepoLayout } from './repository.ts';
import { RACY_MARGIN_MS } from './statCache.ts';
import type { TreeEntry } from './tree.ts';

export { InvalidFingerprintError } from './diff.ts';
export { NotARepositoryError } from './repository.ts';
export { EMPTY_TREE_OID } from './tree.ts';
export type { CaptureStats } from './capture.ts';

/** The path `git add -f` force-includes: the (git-ignored) active task workspace. */
export const DEFAULT_FORCE_PATH = ACTIVE_TASKS_PATH;

export type FingerprinterOptions = {
  /**
   * Repo-relative POSIX path force-added like `git add -f` when it exists. Default
   * '.agents/workspace/active'; null for none.
   */
  forcePath?: string | null;
  /** Trust `.git/index` stat data to skip hashing unchanged files (default true). */
  useIndex?: boolean;
  /**
   * Keep what was learned (stat → blob id, objects known to exist, compiled ignore files, HEAD
   * trees) between captures of a repository (default true).
   */
  remember?: boolean;
  /**
   * Forget a repository's cached state after this long (default one hour), so objects pruned by
   * `git gc` meanwhile are noticed and written again.
   */
  cacheTtlMs?: number;
  /** Wall clock in ms, for the racy-timestamp rule and the TTL (default Date.now). */
  now?: () => number;
};

export type CaptureResult = { fingerprint: string; stats: CaptureStats & { ms: number } };

export interface Fingerprinter extends WorkspaceFingerprinter {
  /** capture() with counters: files seen, hashed, taken from the index or the cache, trees built. */
  captureWithStats(repoRoot: string): Promise<CaptureResult>;
}

type RepoState = {
  createdAt: number;
  objectsDir: string;
  db: ObjectDatabase;
  index: IndexSnapshot;
  statCache: StatCache;
  dirCache: DirCache;
  rules: RuleFileCache;
  ignoreCase: boolean;
  headTreeCache: Map<string, Map<string, TreeEntry>>;
  commitTrees: Map<string, string>;
  /** Serialises operations on one repository within this instance. */
  queue: Promise<unknown>;
};

export function createFingerprinter(options: FingerprinterOptions = {}): Fingerprinter {
  const forcePath = normalizeForcePath(options.forcePath === undefined ? DEFAULT_FORCE_PATH : options.forcePath);
  const useIndex = options.useIndex ?? true;
  const keep = options.remember ?? true;
  const ttl = options.cacheTtlMs ?? 3_600_000;
  const now = options.now ?? Date.now;
  const states = new Map<string, RepoState>();

  function stateFor(layout: RepoLayout): RepoState {
    const t = now();
    let state = states.get(layout.root);
    if (
      !state ||
      !keep ||
      t - state.createdAt > ttl ||
      state.objectsDir !== layout.objectsDir ||
      state.ignoreCase !== layout.config.ignoreCase
    ) {
      if (state) retire(state);
      state = {
        createdAt: t,
        objectsDir: layout.objectsDir,
        db: new ObjectDatabase(layout.commonDir, layout.objectsDir),
        index: EMPTY_INDEX,
        statCache: new Map(),
        dirCache: new Map(),
        rules: new RuleFileCache(layout.config.ignoreCase),
        ignoreCase: layout.config.ignoreCase,
        headTreeCache: new Map(),
        commitTrees: new Map(),
        queue: Promise.resolve(),
      };
      if (keep) states.set(layout.root, state);
    }
    return state;
  }

  /** Closes a replaced state's pack files once the operations already queued on it are done. */
  function retire(state: RepoState): void {
    void state.queue.then(() => state.db.close());
  }

  function serialized<T>(state: RepoState, fn: () => Promise<T>): Promise<T> {
    const run = state.queue.then(fn, fn);
    state.queue = run.catch(() => undefined);
    return run;
  }

  async function captureWithStats(repoRoot: string): Promise<CaptureResult> {
    const layout = openRepository(repoRoot);
    const state = stateFor(layout);
    return serialized(state, async () => {
      const started = now();
      const t0 = performance.now();
      state.db.refresh();
      const index = useIndex ? readIndex(path.join(layout.gitDir, 'index'), state.index) : EMPTY_INDEX;
      state.index = index;
      const commit = resolveHead(layout.gitDir, layout.commonDir);
      const headTree = async (): Promise<string | null> => {
        if (!commit) return null;
        let tree = state.commitTrees.get(commit);
        if (!tree) {
          tree = await peelToTree(state.db, commit);
          if (state.commitTrees.size > 100) state.commitTrees.clear();
          state.commitTrees.set(commit, tree);
        }
        return tree;
      };
      const exclude = state.rules.load(path.join(layout.commonDir, 'info', 'exclude'));
      const stats: CaptureStats = { files: 0, hashed: 0, fromIndex: 0, fromCache: 0, trees: 0, treesReused: 0, listingsReused: 0 };
      const ctx = {
        root: layout.root,
        config: layout.config,
        db: state.db,
        index,
        rules: state.rules,
        previous: state.statCache,
        next: keep ? (new Map() as StatCache) : null,
        previousDirs: state.dirCache,
        nextDirs: keep ? (new Map() as DirCache) : null,
        trustBeforeNs: BigInt(Math.floor(started - RACY_MARGIN_MS)) * 1_000_000n,
        forcePath,
        headTrees: new HeadTrees(state.db, state.headTreeCache),
        headTree,
        stats,
      };
      try {
        const fingerprint = await buildFingerprint(ctx, rootStack(exclude));
        if (ctx.next) state.statCache = ctx.next;
        if (ctx.nextDirs) state.dirCache = ctx.nextDirs;
        state.rules.sweep();
        return { fingerprint, stats: { ...stats, ms: performance.now() - t0 } };
      } finally {
        if (!keep) state.db.close();
      }
    });
  }

  return {
    async capture(repoRoot: string): Promise<string> {
      return (await captureWithStats(repoRoot)).fingerprint;
    },
    captureWithStats,
    async diff(repoRoot: string, before: string, after: string): Promise<string[]> {
      const layout = openRepository(repoRoot);
      const state = stateFor(layout);
      return serialized(state, async () => {
        state.db.refresh();
        try {
          const a = await resolveTreeId(state.db, before);
          const b = await resolveTreeId(state.db, after);
          return await diffTrees(state.db, a, b);
        } finally {
          if (!keep) state.db.close();
        }
      });
    },
  };
}

function normalizeForcePath(p: string | null): string | null {
  if (p === null) return null;
  const norm = path.posix
    .normalize(p.replace(/\\/g, '/'))
    .replace(/^\.\/+/, '')
    .replace(/\/+$/, '');
  if (!norm || norm === '.' || norm.startsWith('../') || norm === '..' || path.posix.isAbsolute(norm)) {
    throw new Error(`forcePath must be a path inside the repository, got ${JSON.stringify(p)}`);
  }
  return norm;
}
