// The work tree's directories as `git add` meets them (capture.ts): listing a directory, the forced
// path's symlink check, and a nested repository recorded as a gitlink.
import fs from 'node:fs';
import { headEntry, type HeadDir } from './headTrees.ts';
import { findGitDir, readCommonDir, resolveHead } from './repository.ts';
import { MODE_GITLINK, type TreeEntry } from './tree.ts';

/**
 * `git add -f -- <path>` refuses a path that goes through a symbolic link; so does the procedure
 * (it throws), and so do we.
 */
export function checkForcedPath(root: string, forcePath: string): void {
  const parts = forcePath.split('/');
  let rel = '';
  for (let i = 0; i < parts.length - 1; i++) {
    rel = rel ? `${rel}/${parts[i]}` : (parts[i] ?? '');
    if (fs.lstatSync(`${root}/${rel}`).isSymbolicLink()) {
      throw new Error(`pathspec '${forcePath}' is beyond a symbolic link (git add -f would fail)`);
    }
  }
}

export function readDir(abs: string): fs.Dirent[] {
  try {
    return fs.readdirSync(abs, { withFileTypes: true });
  } catch (error) {
    // git warns "could not open directory" and goes on; a directory that vanished is empty.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM' || code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw error;
  }
}

export const NOT_A_REPOSITORY = Symbol('not a repository');

/**
 * A directory holding `.git`. If it is a valid repository, `git add` records it as a gitlink to its
 * HEAD commit; without a commit, `git add -A` fails ("does not have a commit checked out") unless
 * the path is already a gitlink in HEAD, which is then kept.
 */
export async function nestedRepository(
  rel: string,
  abs: string,
  name: string,
  parentHead: HeadDir,
): Promise<TreeEntry | null | typeof NOT_A_REPOSITORY> {
  const gitDir = findGitDir(abs);
  if (!gitDir) return NOT_A_REPOSITORY;
  const commit = resolveHead(gitDir, readCommonDir(gitDir));
  if (commit) return { name, mode: MODE_GITLINK, oid: commit };
  const he = await headEntry(parentHead, name);
  if (he && he.mode === MODE_GITLINK) return he;
  throw new Error(`'${rel}/' does not have a commit checked out (git add -A fails on it)`);
}
