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

/**
 * The repository a working directory belongs to, found without git; a linked worktree maps to its
 * main repository (whose queue and worker serve it), named in `worktree`. Null outside any repository.
 */
export function repositoryOf(start: string): { root: string; worktree: string | null } | null {
  const root = findRepoRoot(path.resolve(start));
  if (!root) return null;
  const main = mainRepositoryOf(root);
  return main ? { root: main, worktree: root } : { root, worktree: null };
}
