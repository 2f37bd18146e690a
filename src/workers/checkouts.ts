import fs from 'node:fs';
import path from 'node:path';
import { checkoutFile } from '../base/batonDir.ts';
import { repoIdentity } from '../queue/checkoutId.ts';
import type { RepoIdentity } from '../queue/checkoutId.ts';

// What the worker reads of a checkout to follow its identity: cheap stat stamps, real paths, ids.

/**
 * What a checkout's identity depends on, as cheap stat data: `.git` and the id file (a re-clone
 * replaces both; removing the id file changes the second).
 */
export function checkoutStamp(root: string): string {
  const stamp = (file: string) => {
    try {
      const stat = fs.statSync(file);
      return `${stat.ino}:${stat.mtimeMs}:${stat.size}`;
    } catch {
      return '-';
    }
  };
  let idFile: string;
  try {
    idFile = checkoutFile(root);
  } catch {
    return `${stamp(path.join(root, '.git'))}|?`;
  }
  return `${stamp(path.join(root, '.git'))}|${stamp(idFile)}`;
}

export function realpathOrNull(dir: string): string | null {
  try {
    return fs.realpathSync.native(dir);
  } catch {
    return null;
  }
}

export function safeIdentity(root: string): RepoIdentity | null {
  try {
    if (!fs.existsSync(path.join(root, '.git'))) return null;
    return repoIdentity(root);
  } catch {
    return null;
  }
}
