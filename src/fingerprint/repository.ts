// Locating a repository's git directories and reading the little of its configuration and refs that
// a fingerprint needs, straight from the files (no git binary, no environment variables).
import fs from 'node:fs';
import path from 'node:path';
import { commonDirOf, gitDirOf } from '../base/repoRoot.ts';

export type RepoConfig = {
  /** core.fileMode (default true): whether the executable bit of the work tree is trusted. */
  fileMode: boolean;
  /** core.symlinks (default true): whether symbolic links are stored as links. */
  symlinks: boolean;
  /** core.ignoreCase (default false): case-insensitive matching of ignore rules. */
  ignoreCase: boolean;
};

export type RepoLayout = {
  /** Absolute path of the work tree root. */
  root: string;
  /** The git directory of this work tree: HEAD and index live here. */
  gitDir: string;
  /** The common git directory (differs from gitDir in a linked worktree): objects, refs, config. */
  commonDir: string;
  objectsDir: string;
  config: RepoConfig;
};

/** Thrown when a path is not the root of a usable git work tree. */
export class NotARepositoryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotARepositoryError';
  }
}

/** Resolves `<root>/.git`, a directory or a `gitdir: …` file, into a repository layout. */
export function openRepository(repoRoot: string): RepoLayout {
  const root = path.resolve(repoRoot);
  const gitDir = findGitDir(root);
  if (!gitDir) throw new NotARepositoryError(`not a git repository (no usable .git): ${root}`);
  const commonDir = readCommonDir(gitDir);
  const config = readConfig(path.join(commonDir, 'config'));
  return { root, gitDir, commonDir, objectsDir: path.join(commonDir, 'objects'), config };
}

/**
 * The git directory `<dir>/.git` designates, or null if there is none or it is not a valid git
 * directory (what git's is_nonbare_repository_dir checks: HEAD, objects/ and refs/ present).
 */
export function findGitDir(dir: string): string | null {
  let gitDir: string;
  try {
    gitDir = gitDirOf(dir);
  } catch {
    return null; // no .git, unreadable, or a `.git` file without a `gitdir:` line
  }
  return isGitDirectory(gitDir) ? gitDir : null;
}

function isGitDirectory(gitDir: string): boolean {
  let head: string;
  try {
    head = fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8');
  } catch {
    return false;
  }
  if (!/^ref: refs\/|^[0-9a-f]{40}\s*$/.test(head)) return false;
  const common = readCommonDir(gitDir);
  return fs.existsSync(path.join(common, 'objects')) && fs.existsSync(path.join(common, 'refs'));
}

/** The common git directory of `gitDir` (itself unless it is a linked worktree's git dir). */
export const readCommonDir = commonDirOf;

/**
 * A deliberately small reader of git's config format: `[core]` booleans and the repository format
 * extensions. `include`/`includeIf` and user-global or system config files are not read.
 */
export function readConfig(file: string): RepoConfig {
  const config: RepoConfig = { fileMode: true, symlinks: true, ignoreCase: false };
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return config;
  }
  let section = '';
  for (const rawLine of text.split(/\r?\n/)) {
    let line = rawLine.trim();
    // A section header may share its line with a key (`[core] filemode = false`).
    for (;;) {
      const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"(?:[^"\\]|\\.)*")?\s*\]\s*/.exec(line);
      if (!header) break;
      section = (header[1] ?? '').toLowerCase();
      line = line.slice(header[0].length);
    }
    if (line && !line.startsWith('#') && !line.startsWith(';')) applyLine(config, section, line);
  }
  return config;
}

function applyLine(config: RepoConfig, section: string, line: string): void {
  const match = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*?))?\s*(?:[#;].*)?$/.exec(line);
  if (!match) return;
  const key = (match[1] ?? '').toLowerCase();
  const value = match[2];
  if (section === 'core') {
    if (key === 'filemode') config.fileMode = parseBool(value);
    else if (key === 'symlinks') config.symlinks = parseBool(value);
    else if (key === 'ignorecase') config.ignoreCase = parseBool(value);
  } else if (section === 'extensions') {
    if (key === 'objectformat' && value !== undefined && unquote(value).toLowerCase() !== 'sha1') {
      throw new Error(`unsupported repository object format '${unquote(value)}' (only sha1 is supported)`);
    }
    if (key === 'refstorage' && value !== undefined && unquote(value).toLowerCase() !== 'files') {
      throw new Error(`unsupported ref storage '${unquote(value)}' (only 'files' is supported)`);
    }
  }
}

function unquote(value: string): string {
  return value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}

function parseBool(value: string | undefined): boolean {
  if (value === undefined) return true; // `[core] filemode` alone means true
  const v = unquote(value).trim().toLowerCase();
  if (v === 'false' || v === 'no' || v === 'off' || v === '0' || v === '') return false;
  return true;
}

const OID_RE = /^[0-9a-f]{40}$/;

/**
 * The commit id HEAD points at, or null on an unborn branch (a repository without commits).
 * Follows symbolic refs through loose ref files and packed-refs.
 */
export function resolveHead(gitDir: string, commonDir: string): string | null {
  let ref = 'HEAD';
  for (let depth = 0; depth < 10; depth++) {
    const value = readRef(gitDir, commonDir, ref);
    if (value === null) return null;
    if (OID_RE.test(value)) return value;
    const sym = /^ref:\s*(\S+)$/.exec(value);
    if (!sym?.[1]) throw new Error(`cannot parse ref ${ref}: ${JSON.stringify(value)}`);
    ref = sym[1];
  }
  throw new Error('symbolic ref chain too long resolving HEAD');
}

function readRef(gitDir: string, commonDir: string, ref: string): string | null {
  // HEAD and other pseudo refs, and per-worktree refs, live in the worktree's own git dir.
  const perWorktree = ref === 'HEAD' || ref.startsWith('refs/worktree/') || ref.startsWith('refs/bisect/');
  const base = perWorktree ? gitDir : commonDir;
  try {
    const text = fs.readFileSync(path.join(base, ref), 'utf8').trim();
    if (text) return text;
  } catch {
    // not a loose ref: look in packed-refs
  }
  if (ref === 'HEAD') return null;
  let packed: string;
  try {
    packed = fs.readFileSync(path.join(commonDir, 'packed-refs'), 'utf8');
  } catch {
    return null;
  }
  for (const line of packed.split('\n')) {
    if (line.length > 41 && line.charCodeAt(40) === 0x20 && line.slice(41).trimEnd() === ref) {
      return line.slice(0, 40);
    }
  }
  return null;
}
