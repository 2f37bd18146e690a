// Test support: temporary repositories and the git procedure as the oracle (git is used by the tests
// only, never by baton).
import { execFileSync, type ExecFileSyncOptions } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const HOME = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-fp-home-'));

/** An environment where git reads no user or system configuration and has an identity. */
export const GIT_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  HOME,
  XDG_CONFIG_HOME: path.join(HOME, '.config'),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
  GIT_TERMINAL_PROMPT: '0',
};
delete GIT_ENV.GIT_INDEX_FILE;
delete GIT_ENV.GIT_DIR;
delete GIT_ENV.GIT_WORK_TREE;

export function git(cwd: string, args: string[], options: ExecFileSyncOptions & { env?: NodeJS.ProcessEnv } = {}): string {
  return execFileSync('git', args, {
    cwd,
    env: { ...GIT_ENV, ...options.env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  }) as string;
}

const tmpRoots: string[] = [];

export function tempDir(prefix = 'baton-fp-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  tmpRoots.push(dir);
  return dir;
}

export function cleanup(): void {
  for (const dir of tmpRoots.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(HOME, { recursive: true, force: true });
}

/** A new repository (branch main), optionally with files; `commit` makes an initial commit. */
export function makeRepo(files: Record<string, string> = {}, commit = Object.keys(files).length > 0): string {
  const root = tempDir();
  git(root, ['init', '-q', '-b', 'main']);
  writeFiles(root, files);
  if (commit) commitAll(root);
  return root;
}

/**
 * Files from a listing, one a line: a path (no white space in it), white space, then the file's
 * content (the rest of the line, trimmed). Blank lines are passed over.
 */
export function files(listing: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const line of listing.split('\n')) {
    if (line.trim() === '') continue;
    const match = /^\s*(\S+)\s+(\S.*?)\s*$/.exec(line);
    if (!match) throw new Error(`not a "path content" line: ${JSON.stringify(line)}`);
    found[match[1]!] = match[2]!;
  }
  return found;
}

export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(root, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
  }
}

export function commitAll(root: string, message = 'commit'): void {
  git(root, ['add', '-A']);
  git(root, ['commit', '-q', '--allow-empty', '--no-verify', '-m', message]);
}

/**
 * A packed repository (150 files `fNNN.txt` at HEAD) whose HEAD root tree is smaller than its
 * parent's, so pack-objects stores it as a delta against the bigger one: reading it takes
 * isomorphic-git.
 */
export function makeDeltifiedRepo(): string {
  const files: Record<string, string> = {};
  for (let i = 0; i < 300; i++) files[`f${String(i).padStart(3, '0')}.txt`] = `content ${i}\n`.repeat(20);
  const root = makeRepo(files);
  for (let i = 0; i < 150; i++) fs.rmSync(path.join(root, `f${String(i).padStart(3, '0')}.txt`));
  commitAll(root, 'shrink');
  git(root, ['gc', '-q', '--aggressive', '--prune=now']);
  return root;
}

/**
 * The oracle: docs/lifecycle.md §9's procedure, on a temporary index (`read-tree HEAD`, or an empty index
 * without commits). Returns the tree id, or throws git's error.
 */
export function gitFingerprint(root: string, forcePath = '.agents/workspace/active'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-fp-index-'));
  try {
    const env = { GIT_INDEX_FILE: path.join(dir, 'index') };
    let hasHead = true;
    try {
      git(root, ['rev-parse', '--verify', '-q', 'HEAD^{commit}']);
    } catch {
      hasHead = false;
    }
    if (hasHead) git(root, ['read-tree', 'HEAD'], { env });
    git(root, ['add', '-A', '--', ':/'], { env });
    if (fs.existsSync(path.join(root, forcePath))) git(root, ['add', '-f', '--', forcePath], { env });
    return git(root, ['write-tree'], { env }).trim();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** `git diff --name-only -z --no-renames a b`, split (what 0.9.2 records as changed paths). */
export function gitDiff(root: string, a: string, b: string): string[] {
  return git(root, ['diff', '--name-only', '-z', '--no-renames', a, b])
    .split('\0')
    .filter((p) => p !== '');
}

export function snapshotIndex(root: string): { bytes: Buffer; mtimeNs: bigint } | null {
  const file = path.join(root, '.git', 'index');
  if (!fs.existsSync(file)) return null;
  return { bytes: fs.readFileSync(file), mtimeNs: fs.statSync(file, { bigint: true }).mtimeNs };
}

/** Sets a file's mtime (and atime) to the given nanosecond-resolution instant. */
export function setMtimeNs(file: string, mtimeNs: bigint): void {
  const seconds = Number(mtimeNs / 1_000_000_000n) + Number(mtimeNs % 1_000_000_000n) / 1e9;
  fs.utimesSync(file, seconds, seconds);
}

/** Makes every timestamp in the work tree old enough that no stat data counts as racy. */
export function ageWorkTree(root: string, secondsAgo = 60): void {
  const when = Date.now() / 1000 - secondsAgo;
  const walk = (dir: string): void => {
    for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
      if (d.name === '.git') continue;
      const p = path.join(dir, d.name);
      if (d.isSymbolicLink()) continue;
      if (d.isDirectory()) walk(p);
      fs.utimesSync(p, when, when);
    }
  };
  walk(root);
}
