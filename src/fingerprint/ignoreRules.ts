// gitignore rules as `git add -A` applies them: `.gitignore` in every directory the walk enters
// (deeper files take precedence, within a file the last matching pattern wins) and then
// `$GIT_COMMON_DIR/info/exclude`.
//
// Matching library: the `ignore` package (7.x), a maintained implementation of gitignore(5) pattern
// semantics. isomorphic-git's own `isIgnored` uses an older copy of the same package but re-reads
// every .gitignore from the root for each path it is asked about, which is far too slow for a
// 20,000-file walk. Each rule file gets one `ignore` instance, compiled once and reused while the
// file's text is unchanged.
//
// Not read (documented limitation): `core.excludesFile` and the default user-global
// `$XDG_CONFIG_HOME/git/ignore`. They are per-user, not per-repository, settings; reading them would
// tie a fingerprint to whoever runs the worker.
import fs from 'node:fs';
import ignore, { type Ignore } from 'ignore';

type Verdict = { ignored: boolean; unignored: boolean };

/** One rule file, with the directory (repo-relative, '' for the root) its patterns are relative to. */
export type RuleLevel = RuleFile & { readonly base: string };

/**
 * A compiled rule file. git matches a pattern without a '/' (except a trailing one) against the
 * basename only, and a pattern with one against the path relative to the file's directory. Most
 * path patterns name a fixed directory (`/dist`, `.agents/workspace/`, `logs/*`): they can only match
 * entries of that one directory. Everywhere else only the bare-name patterns can match, so entries
 * are tested by name alone, against `nameIg` (the bare-name patterns, in their order), with
 * directories' verdicts cached by name across directories and captures.
 */
export type RuleFile = {
  /** Distinct per compiled content (a rule stack's key is made of these). */
  readonly id: number;
  /** All patterns. */
  readonly ig: Ignore;
  /** Only bare-name patterns (null if there are none). */
  readonly nameIg: Ignore | null;
  /** Directory name (with its '/') → verdict of nameIg (files are matched without a cache). */
  readonly nameVerdicts: Map<string, Verdict>;
  /** Directories (relative to the file's) where some path pattern can match an entry. */
  readonly pathDirs: ReadonlySet<string>;
  /** Some path pattern can match in any directory (globs in its directory part, `**`, escapes). */
  readonly pathAnywhere: boolean;
  /** No path pattern at all. */
  readonly basenameOnly: boolean;
};

/**
 * The rule files in force in a directory, deepest first. Paths are matched against each file's
 * patterns alone (see testWithoutParents), so a directory that one level excludes and a deeper level
 * re-includes cannot mislead the levels below it.
 */
export type RuleStack = {
  readonly levels: readonly RuleLevel[];
  readonly exclude: RuleLevel | null;
  /**
   * Equal for two stacks of the same compiled files at the same bases, so the same verdicts: what a
   * directory's remembered verdicts are keyed by (dirCache.ts).
   */
  readonly key: string;
};

let nextRuleFileId = 1;

type CompiledFile = { text: string; file: RuleFile | null };

/** Compiles and caches rule files by path and content. */
export class RuleFileCache {
  private readonly files = new Map<string, CompiledFile>();
  private readonly ignoreCase: boolean;
  private seen = new Set<string>();

  constructor(ignoreCase: boolean) {
    this.ignoreCase = ignoreCase;
  }

  /** The compiled rules of `file`, or null if it does not exist or holds no rule. */
  load(file: string): RuleFile | null {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      return null;
    }
    this.seen.add(file);
    const cached = this.files.get(file);
    if (cached && cached.text === text) return cached.file;
    const shape = patternShape(text);
    const options = { ignoreCase: this.ignoreCase };
    const compiled: RuleFile | null = shape.hasRules
      ? {
          id: nextRuleFileId++,
          ig: ignore(options).add(text),
          nameIg: shape.nameLines.length > 0 ? ignore(options).add(shape.nameLines) : null,
          nameVerdicts: new Map(),
          pathDirs: shape.pathDirs,
          // Directory names compare exactly; with core.ignoreCase they may differ in case.
          pathAnywhere: shape.pathAnywhere || (this.ignoreCase && shape.pathDirs.size > 0),
          basenameOnly: !shape.pathAnywhere && shape.pathDirs.size === 0,
        }
      : null;
    this.files.set(file, { text, file: compiled });
    return compiled;
  }

  /** Drops compiled files not loaded since the previous call (deleted .gitignore files). */
  sweep(): void {
    for (const key of this.files.keys()) if (!this.seen.has(key)) this.files.delete(key);
    this.seen = new Set();
  }
}

type Shape = { hasRules: boolean; nameLines: string[]; pathDirs: Set<string>; pathAnywhere: boolean };

/**
 * Sorts a rule file's patterns into bare-name ones and path ones, and for path patterns the one
 * directory where they can match (conservatively: anything unusual can match anywhere).
 */
function patternShape(text: string): Shape {
  const shape: Shape = { hasRules: false, nameLines: [], pathDirs: new Set(), pathAnywhere: false };
  for (const raw of text.replace(/^\uFEFF/, '').split(/\r?\n/)) {
    if (!raw.trim() || raw.startsWith('#')) continue;
    shape.hasRules = true;
    let p = raw.startsWith('!') ? raw.slice(1) : raw;
    p = p.replace(/[ \t]+$/, '');
    if (p.endsWith('/')) p = p.slice(0, -1);
    const slash = p.lastIndexOf('/');
    if (slash < 0 && !p.includes('\\')) {
      shape.nameLines.push(raw);
      continue;
    }
    if (slash < 0) {
      // An escape in a bare name: keep it with the name patterns, but also test full paths.
      shape.nameLines.push(raw);
      shape.pathAnywhere = true;
      continue;
    }
    // A path pattern: `*` and `?` do not match '/', so without globs in its directory part it can
    // only match entries of that directory.
    const dir = p.slice(p.startsWith('/') ? 1 : 0, slash);
    // `**` in the last component (`foo/**`) matches across directories too.
    if (/[*?[\\]/.test(dir) || dir.includes('//') || p.slice(slash + 1).includes('**')) shape.pathAnywhere = true;
    else shape.pathDirs.add(dir);
  }
  return shape;
}

const IGNORED: Verdict = { ignored: true, unignored: false };
const UNIGNORED: Verdict = { ignored: false, unignored: true };
const NEUTRAL: Verdict = { ignored: false, unignored: false };

export function rootStack(exclude: RuleFile | null): RuleStack {
  return { levels: [], exclude: exclude ? { ...exclude, base: '' } : null, key: exclude ? `x${exclude.id}` : 'x' };
}

/** The stack for a subdirectory that has its own `.gitignore`. */
export function pushLevel(stack: RuleStack, base: string, file: RuleFile): RuleStack {
  return { levels: [{ ...file, base }, ...stack.levels], exclude: stack.exclude, key: `${file.id}@${base}/${stack.key}` };
}

type LevelMatcher = { level: RuleLevel; byName: boolean };

/** The rule files in force for the entries of one directory, each with how to test them there. */
export type DirMatcher = { levels: LevelMatcher[]; exclude: LevelMatcher | null };

/** Prepares matching for the entries of directory `dirRel` (repo-relative, '' for the root). */
export function matcherFor(stack: RuleStack, dirRel: string): DirMatcher {
  const levels: LevelMatcher[] = [];
  for (const level of stack.levels) {
    const m = levelMatcher(level, dirRel);
    if (m) levels.push(m);
  }
  const exclude = stack.exclude ? levelMatcher(stack.exclude, dirRel) : null;
  return { levels, exclude };
}

function levelMatcher(level: RuleLevel, dirRel: string): LevelMatcher | null {
  if (level.basenameOnly) return { level, byName: true };
  if (!level.pathAnywhere) {
    const d = level.base === '' ? dirRel : dirRel === level.base ? '' : dirRel.slice(level.base.length + 1);
    if (!level.pathDirs.has(d)) return level.nameIg ? { level, byName: true } : null;
  }
  return { level, byName: false };
}

/**
 * Whether the entry `name` of directory `dirRel` (repo-relative, '' for the root) is excluded. Its
 * path is only built when a level has path patterns that can match there.
 */
export function isExcluded(m: DirMatcher, dirRel: string, name: string, isDir: boolean): boolean {
  const levels = m.levels;
  for (let i = 0; i < levels.length; i++) {
    const v = test(levels[i] as LevelMatcher, dirRel, name, isDir);
    if (v.ignored) return true;
    if (v.unignored) return false;
  }
  if (m.exclude) {
    const v = test(m.exclude, dirRel, name, isDir);
    if (v.ignored) return true;
  }
  return false;
}

function test(m: LevelMatcher, dirRel: string, name: string, isDir: boolean): Verdict {
  const level = m.level;
  if (m.byName) {
    const ig = level.basenameOnly ? level.ig : (level.nameIg as Ignore);
    // Files are matched directly: their names rarely repeat, and a cache miss plus insert costs more
    // than the match (100,000 distinct names against 3 patterns: ~30 ms matched, ~80 ms through the
    // cache). Directory names repeat (src/, lib/, test/) and are few: cached.
    if (!isDir) return testWithoutParents(ig, name);
    const key = `${name}/`;
    let v = level.nameVerdicts.get(key);
    if (v === undefined) {
      const r = testWithoutParents(ig, key);
      v = r.ignored ? IGNORED : r.unignored ? UNIGNORED : NEUTRAL;
      if (level.nameVerdicts.size > 100_000) level.nameVerdicts.clear();
      level.nameVerdicts.set(key, v);
    }
    return v;
  }
  const relPath = dirRel ? `${dirRel}/${name}` : name;
  const rel = level.base ? relPath.slice(level.base.length + 1) : relPath;
  const p = isDir ? `${rel}/` : rel;
  // git matches each path against the patterns alone (it never descends into excluded directories),
  // which is exactly the direct test; the public test() adds parent inheritance and a result cache.
  return testWithoutParents(level.ig, p);
}

type RuleManager = { test(path: string, mode: string): Verdict };

/**
 * Matches one path against the rules, without the library's parent-directory shortcut and its
 * per-instance result cache (which costs more than the match when every path is new). The `ignore`
 * package has no public API for this: this reaches its rule list (`_rules.test`, present in 7.x,
 * the pinned major version). A version without it is refused rather than matched differently.
 */
function testWithoutParents(ig: Ignore, p: string): Verdict {
  const rules = (ig as unknown as { _rules?: Partial<RuleManager> })._rules;
  if (typeof rules?.test !== 'function') {
    throw new Error("the 'ignore' package no longer exposes _rules.test; baton's gitignore matching needs ignore 7.x");
  }
  const v = (rules as RuleManager).test(p, 'regex');
  return { ignored: v.ignored, unignored: v.unignored };
}
