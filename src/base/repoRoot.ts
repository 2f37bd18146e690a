import fs from 'node:fs';
import path from 'node:path';

/**
 * Produced by callers that fail to find a repository root (baton finds it without git). 0.9.2 starts
 * it with `ai task: `, its own command's name; baton keeps those words under the agent-infra shim only
 * (src/cli/agentInfraWords.ts).
 */
export const REPO_ROOT_NOT_FOUND_MESSAGE = 'current directory is not inside a git repository';

/**
 * The nearest ancestor of `startDir` (itself included) that holds a `.git` entry (a directory, or the
 * file a worktree or submodule has), found without a git binary. Null when there is none.
 */
export function findRepoRoot(startDir: string): string | null {
  let dir = path.resolve(startDir);
  for (;;) {
    if (fs.existsSync(path.join(dir, '.git'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/**
 * The repository's git directory: `<root>/.git`, or the directory a `.git` file points at
 * (`gitdir: …`, used by linked worktrees and submodules).
 */
export function gitDirOf(repoRoot: string): string {
  const dotGit = path.join(repoRoot, '.git');
  const stat = fs.statSync(dotGit);
  if (stat.isDirectory()) return dotGit;
  const text = fs.readFileSync(dotGit, 'utf8');
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(text);
  if (!match?.[1]) throw new Error(`${dotGit} is not a git directory or a 'gitdir:' file`);
  return path.resolve(repoRoot, match[1]);
}

/** The common git directory of `gitDir`: what its `commondir` names (a linked worktree's), else itself. */
export function commonDirOf(gitDir: string): string {
  try {
    const text = fs.readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim();
    if (text) return path.resolve(gitDir, text);
  } catch {
    // not a linked worktree
  }
  return gitDir;
}

/**
 * For a linked worktree (`.git` is a file `gitdir: <main>/.git/worktrees/<name>`, whose `commondir`
 * names the main `.git`), the main repository's root; null for anything else.
 */
export function mainRepositoryOf(root: string): string | null {
  try {
    if (fs.statSync(path.join(root, '.git')).isDirectory()) return null;
    const gitDir = gitDirOf(root);
    const common = commonDirOf(gitDir);
    if (common === gitDir || path.basename(common) !== '.git' || !fs.statSync(common).isDirectory()) return null;
    return path.dirname(common);
  } catch {
    return null;
  }
}

/** Where a checkout sits: its own root (a linked worktree is a checkout of its own), and for a linked worktree its main repository's root. */
export type Checkout = Readonly<{ root: string; main: string | null }>;

/**
 * The checkout a working directory belongs to, found without git. A linked worktree is a checkout of
 * its own (its own id, queue, tasks and fingerprint: docs/architecture.md "Worktrees"), as upstream's
 * `git rev-parse --show-toplevel` has it; `main` names its main repository (whose worker serves it
 * and whose recorded Redis it falls back to). Null outside any repository.
 */
export function repositoryOf(start: string): Checkout | null {
  const root = findRepoRoot(path.resolve(start));
  if (!root) return null;
  return { root, main: mainRepositoryOf(root) };
}

/**
 * Why the checkout at `root` cannot be served, or null when it can: a `.git` file whose git directory
 * is gone (the main repository moved or deleted, or the worktree pruned). Only a `.git` file can be
 * like that; baton never creates a missing git directory.
 */
export function checkoutProblem(root: string): string | null {
  const dotGit = path.join(root, '.git');
  try {
    if (fs.statSync(dotGit).isDirectory()) return null;
    const gitDir = gitDirOf(root);
    if (!fs.statSync(gitDir).isDirectory()) return `${dotGit} names ${gitDir}, which is not a directory`;
    const common = commonDirOf(gitDir);
    if (!fs.existsSync(path.join(common, 'objects'))) {
      return `${root} is a linked worktree whose main repository's git directory ${common} is gone (moved or deleted); move it back, or run 'git worktree repair ${root}' in the main repository where it is now`;
    }
    return null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return `${dotGit}: ${(error as Error).message}`;
    return `${root} is a linked worktree whose git directory is gone: its main repository was moved or deleted, or the worktree was pruned ('git worktree prune'); run 'git worktree repair ${root}' in the main repository, or add the worktree again`;
  }
}

/** One linked worktree of a repository, as `<common>/worktrees/<name>/` describes it. */
export type LinkedWorktree = Readonly<{
  name: string;
  /** Its git directory, `<common>/worktrees/<name>`. */
  gitDir: string;
  /** Its work tree's root (what `gitdir` names, without `/.git`); null when that is gone (removed by hand, awaiting prune). */
  root: string | null;
}>;

/** The linked worktrees of the repository whose common git directory is `commonDir` (`git worktree list` without git). */
export function linkedWorktreesOf(commonDir: string): LinkedWorktree[] {
  const dir = path.join(commonDir, 'worktrees');
  let names: string[];
  try {
    names = fs.readdirSync(dir).sort();
  } catch {
    return [];
  }
  const found: LinkedWorktree[] = [];
  for (const name of names) {
    const gitDir = path.join(dir, name);
    let dotGit: string;
    try {
      dotGit = path.resolve(gitDir, fs.readFileSync(path.join(gitDir, 'gitdir'), 'utf8').trim());
    } catch {
      continue; // being added or pruned
    }
    const root = path.dirname(dotGit);
    let live = false;
    try {
      live = gitDirOf(root) === gitDir || fs.realpathSync(gitDirOf(root)) === fs.realpathSync(gitDir);
    } catch {
      live = false;
    }
    found.push({ name, gitDir, root: live ? root : null });
  }
  return found;
}

/** The branch a checkout's HEAD is on (`refs/heads/` left out), or null on a detached HEAD. */
export function branchOf(root: string): string | null {
  try {
    const head = fs.readFileSync(path.join(gitDirOf(root), 'HEAD'), 'utf8').trim();
    const match = /^ref:\s*refs\/heads\/(.+)$/.exec(head);
    return match?.[1] ?? null;
  } catch {
    return null;
  }
}
