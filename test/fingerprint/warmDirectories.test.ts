// A long-running fingerprinter reuses a directory's listing, its ignore verdicts and its tree id
// while stat data vouches for them (src/fingerprint/dirCache.ts). Every capture below, after every
// kind of change, must still equal git's tree id (`git add -A && git write-tree` on a temporary
// index), and the reuse must actually happen where nothing changed.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFingerprinter, type Fingerprinter } from '../../src/fingerprint/index.ts';
import { cleanup, commitAll, git, gitFingerprint, makeRepo, writeFiles } from './helpers.ts';

afterAll(cleanup);

/** A clock 10 s ahead: every timestamp the test makes is old enough to be trusted (not racy). */
const ahead = () => Date.now() + 10_000;

async function check(fp: Fingerprinter, root: string) {
  const result = await fp.captureWithStats(root);
  expect(result.fingerprint).toBe(gitFingerprint(root));
  return result.stats;
}

/** Makes each change in turn, checking the capture against git after every one. */
async function checkAfterEach(fp: Fingerprinter, root: string, changes: ReadonlyArray<() => void>): Promise<void> {
  for (const change of changes) {
    change();
    await check(fp, root);
  }
}

/** Directories `git add` walks (not .git, not ignored ones): the listings a warm capture can reuse. */
function countDirs(root: string, skip: (rel: string) => boolean = () => false): number {
  let n = 0;
  const walk = (abs: string, rel: string): void => {
    n++;
    for (const d of fs.readdirSync(abs, { withFileTypes: true })) {
      const childRel = rel ? `${rel}/${d.name}` : d.name;
      if (d.isDirectory() && d.name !== '.git' && !skip(childRel)) walk(path.join(abs, d.name), childRel);
    }
  };
  walk(root, '');
  return n;
}

function nestedRepo(): string {
  return makeRepo({
    '.gitignore': '*.log\nbuild/\n',
    'README.md': '# r\n',
    'src/a.ts': 'a',
    'src/b.ts': 'b',
    'src/lib/c.ts': 'c',
    'src/lib/deep/d.ts': 'd',
    'src/lib/deep/e.ts': 'e',
    'guide/x.md': 'x',
    'guide/y/z.md': 'z',
  });
}

describe('warm captures reuse directory listings and trees', () => {
  it('reuses every listing and tree when nothing changed, and only the changed path is rebuilt', async () => {
    const root = nestedRepo();
    const fp = createFingerprinter({ now: ahead });
    await check(fp, root);
    const idle = await check(fp, root);
    const dirs = countDirs(root);
    expect(idle.listingsReused).toBe(dirs);
    expect(idle.trees).toBe(0);
    expect(idle.treesReused).toBe(dirs);
    expect(idle.hashed).toBe(0);
    // Content edit deep down: no directory changed, so every listing is reused; the trees on the
    // path to the file (deep, lib, src, root) are rebuilt.
    fs.writeFileSync(path.join(root, 'src/lib/deep/d.ts'), 'd2');
    const edit = await check(fp, root);
    expect(edit.listingsReused).toBe(dirs);
    expect(edit.trees).toBe(4);
    expect(edit.treesReused).toBe(dirs - 4);
  });

  it('follows files created, deleted and renamed in nested directories, and renamed directories', async () => {
    const root = nestedRepo();
    const fp = createFingerprinter({ now: ahead });
    await check(fp, root);
    writeFiles(root, { 'src/lib/deep/new.ts': 'new', 'guide/y/w/v.md': 'v' });
    await check(fp, root);
    fs.rmSync(path.join(root, 'src/lib/c.ts'));
    await check(fp, root);
    fs.renameSync(path.join(root, 'src/lib/deep/e.ts'), path.join(root, 'src/lib/deep/f.ts'));
    await check(fp, root);
    fs.renameSync(path.join(root, 'guide/y'), path.join(root, 'guide/q'));
    await check(fp, root);
    // A directory removed whole, then one appearing under the same name.
    fs.rmSync(path.join(root, 'src/lib/deep'), { recursive: true });
    await check(fp, root);
    writeFiles(root, { 'src/lib/deep/d.ts': 'd' });
    await check(fp, root);
    // Emptied directories vanish from the tree; a file where a directory was, and the reverse.
    fs.rmSync(path.join(root, 'guide/x.md'));
    fs.rmSync(path.join(root, 'guide/q'), { recursive: true });
    fs.mkdirSync(path.join(root, 'guide/q'));
    await check(fp, root);
    fs.rmSync(path.join(root, 'src/b.ts'));
    writeFiles(root, { 'src/b.ts/inner.ts': 'inner' });
    await check(fp, root);
    fs.rmSync(path.join(root, 'src/lib'), { recursive: true });
    fs.writeFileSync(path.join(root, 'src/lib'), 'now a file');
    await check(fp, root);
  });

  it('sees modes and symlinks change in an unchanged directory', async () => {
    const root = nestedRepo();
    const fp = createFingerprinter({ now: ahead });
    await check(fp, root);
    fs.chmodSync(path.join(root, 'src/a.ts'), 0o755);
    await check(fp, root);
    fs.rmSync(path.join(root, 'src/b.ts'));
    fs.symlinkSync('a.ts', path.join(root, 'src/b.ts'));
    await check(fp, root);
    fs.rmSync(path.join(root, 'src/b.ts'));
    fs.symlinkSync('lib', path.join(root, 'src/b.ts'));
    await check(fp, root);
  });

  it('is not misled by a directory whose mtime was set back after an entry appeared (ctime differs)', async () => {
    const root = nestedRepo();
    const fp = createFingerprinter({ now: ahead });
    const dir = path.join(root, 'src/lib/deep');
    const old = Date.now() / 1000 - 120;
    fs.utimesSync(dir, old, old);
    await check(fp, root);
    const before = fs.statSync(dir, { bigint: true });
    // Same second, same mtime: a new entry, then the directory's mtime restored.
    fs.writeFileSync(path.join(dir, 'sneaky.ts'), 'x');
    fs.utimesSync(dir, old, old);
    expect(fs.statSync(dir, { bigint: true }).mtimeNs).toBe(before.mtimeNs);
    const stats = await check(fp, root);
    expect(stats.listingsReused).toBe(countDirs(root) - 1);
    // A same-size edit of a file whose mtime is restored: ctime tells it apart too.
    fs.writeFileSync(path.join(dir, 'sneaky.ts'), 'y');
    fs.utimesSync(path.join(dir, 'sneaky.ts'), old, old);
    await check(fp, root);
  });

  it('does not reuse the listing of a directory changed within the racy margin (real clock)', async () => {
    const root = nestedRepo();
    const fp = createFingerprinter();
    await check(fp, root);
    // Everything was just written: no directory is old enough for its listing to be trusted.
    const again = await check(fp, root);
    expect(again.listingsReused).toBe(0);
    // Two edits in the same directory in quick succession, captures between them.
    await checkAfterEach(fp, root, [
      () => writeFiles(root, { 'src/one.ts': '1' }),
      () => writeFiles(root, { 'src/two.ts': '2' }),
      () => fs.rmSync(path.join(root, 'src/one.ts')),
    ]);
  });

  it('applies changed .gitignore files and info/exclude to reused listings', async () => {
    const root = nestedRepo();
    writeFiles(root, { 'src/lib/deep/trace.log': 'log', 'src/lib/deep/tmp.txt': 't', 'guide/build/out.md': 'o' });
    const fp = createFingerprinter({ now: ahead });
    await check(fp, root);
    await checkAfterEach(fp, root, [
      // A nested .gitignore appears (its directory's listing changes) …
      () => writeFiles(root, { 'src/lib/.gitignore': 'deep/tmp.txt\n' }),
      // … is edited (no listing changes: the verdicts below must still be recomputed) …
      () => fs.writeFileSync(path.join(root, 'src/lib/.gitignore'), '*.txt\n!*.log\n'),
    ]);
    // … the root one too: every directory below is matched against the new rules.
    fs.writeFileSync(path.join(root, '.gitignore'), '*.ts\n');
    const rootEdit = await check(fp, root);
    expect(rootEdit.listingsReused).toBeGreaterThan(0);
    await checkAfterEach(fp, root, [
      () => fs.writeFileSync(path.join(root, '.gitignore'), '*.log\nbuild/\n'),
      () => fs.writeFileSync(path.join(root, '.git/info/exclude'), 'guide/\n'),
      () => fs.writeFileSync(path.join(root, '.git/info/exclude'), ''),
      () => fs.rmSync(path.join(root, 'src/lib/.gitignore')),
    ]);
  });

  it('follows HEAD and nested repositories in directories that did not change', async () => {
    const root = nestedRepo();
    writeFiles(root, { 'src/lib/keep.log': 'log 1' });
    const fp = createFingerprinter({ now: ahead });
    await check(fp, root);
    const inner = path.join(root, 'guide/inner');
    await checkAfterEach(fp, root, [
      // The ignored file becomes tracked: HEAD now keeps it in the fingerprint.
      () => {
        git(root, ['add', '-f', 'src/lib/keep.log']);
        commitAll(root, 'track the log');
      },
      () => fs.writeFileSync(path.join(root, 'src/lib/keep.log'), 'log 2'),
      () => {
        git(root, ['rm', '-q', '--cached', 'src/lib/keep.log']);
        commitAll(root, 'untrack the log');
      },
      // A nested repository: a gitlink to its HEAD, which moves without its parent changing.
      () => {
        fs.mkdirSync(inner);
        git(inner, ['init', '-q', '-b', 'main']);
        writeFiles(inner, { 'i.txt': 'i' });
        commitAll(inner, 'inner 1');
      },
      () => {
        writeFiles(inner, { 'i.txt': 'i2' });
        commitAll(inner, 'inner 2');
      },
    ]);
  });

  it('follows the forced path (.agents/workspace/active) under an ignored directory', async () => {
    const root = nestedRepo();
    writeFiles(root, { '.gitignore': '*.log\n.agents/workspace/\n', '.agents/workspace/active/T-1/task.md': 't' });
    const fp = createFingerprinter({ now: ahead });
    await check(fp, root);
    await checkAfterEach(fp, root, [
      () => writeFiles(root, { '.agents/workspace/active/T-1/more.md': 'm' }),
      () => fs.writeFileSync(path.join(root, '.agents/workspace/active/T-1/task.md'), 't2'),
      () => fs.rmSync(path.join(root, '.agents/workspace/active'), { recursive: true }),
    ]);
  });
});
