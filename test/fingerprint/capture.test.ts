import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFingerprinter } from '../../src/fingerprint/index.ts';
import { cleanup, files, commitAll, git, gitDiff, gitFingerprint, makeRepo, snapshotIndex, tempDir, writeFiles } from './helpers.ts';

afterAll(cleanup);

/** baton's capture (fresh instance, i.e. cold) must equal the git procedure. */
async function expectSameAsGit(root: string): Promise<string> {
  const ours = await createFingerprinter().capture(root);
  expect(ours).toBe(gitFingerprint(root));
  return ours;
}

/** A repository that committed `committed`, then `written` written into it: baton's capture equals git's. */
async function expectSameAsGitAfter(committed: Record<string, string>, written: Record<string, string>): Promise<void> {
  const root = makeRepo(committed, true);
  writeFiles(root, written);
  await expectSameAsGit(root);
}

describe('capture matches the git procedure', () => {
  it('nested directories, empty files, executable bits, symlinks', async () => {
    const root = makeRepo({
      'README.md': '# hi\n',
      'src/a/b/c/deep.txt': 'deep\n',
      'src/a/empty.txt': '',
      'bin/tool.sh': '#!/bin/sh\necho hi\n',
    });
    fs.chmodSync(path.join(root, 'bin/tool.sh'), 0o755);
    fs.symlinkSync('../README.md', path.join(root, 'src/link-to-readme'));
    fs.symlinkSync('does/not/exist', path.join(root, 'dangling'));
    fs.symlinkSync('src/a', path.join(root, 'dirlink'));
    fs.mkdirSync(path.join(root, 'empty/dirs/only'), { recursive: true });
    writeFiles(root, { 'new/untracked.bin': '\u0000\u0001binary', 'src/a/empty2': '' });
    await expectSameAsGit(root);
    commitAll(root);
    fs.chmodSync(path.join(root, 'bin/tool.sh'), 0o644);
    fs.chmodSync(path.join(root, 'README.md'), 0o700);
    await expectSameAsGit(root);
  });

  it('modified, deleted and untracked files; a tracked file replaced by a directory and vice versa', async () => {
    const root = makeRepo({ 'a.txt': 'a\n', 'b/x.txt': 'x\n', 'b/y.txt': 'y\n', c: 'file\n', 'd/e.txt': 'e\n' });
    fs.writeFileSync(path.join(root, 'a.txt'), 'changed\n');
    fs.rmSync(path.join(root, 'b/y.txt'));
    fs.rmSync(path.join(root, 'c'));
    writeFiles(root, { 'c/inside.txt': 'now a dir\n', 'untracked.txt': 'u\n' });
    fs.rmSync(path.join(root, 'd'), { recursive: true });
    fs.writeFileSync(path.join(root, 'd'), 'now a file\n');
    await expectSameAsGit(root);
  });

  it('git tree order: bytes, directories compared as "name/"', () =>
    expectSameAsGitAfter(
      {
        foo: '1',
        'foo.c': '2',
        'foo-bar/x': '3',
        'foo0/y': '4',
        fooz: '5',
        'bar/baz': '6',
        'bar.txt': '7',
        Bar: '8',
        _x: '9',
        'a b': '10',
      },
      { 'qux/1': 'q', 'qux.md': 'q', 'qux-': 'q', qux0: 'q' },
    ));

  it('non-ASCII names, including astral characters (sorted by UTF-8 bytes)', () =>
    expectSameAsGitAfter(
      { 'café.txt': 'c', 'naïve/ünïcödé.md': 'u' },
      files(`
        日本語/ファイル.txt  ja
        emoji-😀.txt         e1
        emoji-\uff01.txt     e2
        emoji-\ue000.txt     e3
        z\u00e9              nfc
        ze\u0301             nfd
        Ωmega/α              greek
      `),
    ));

  it('nested .gitignore files with negations, info/exclude, ignored directories', async () => {
    const root = makeRepo(
      {
        '.gitignore': '*.log\nbuild/\n/root-only.txt\nlogs/*\n!logs/keep.log\n',
        'sub/.gitignore': '!important.log\n*.tmp\n',
        'sub/deeper/.gitignore': 'secret*\n!secret-ok\n',
      },
      true,
    );
    fs.appendFileSync(path.join(root, '.git/info/exclude'), 'excluded-by-info/\n*.swp\n');
    writeFiles(
      root,
      files(`
        app.log                x
        sub/important.log      kept by negation
        sub/other.log          ignored
        sub/x.tmp              ignored
        sub/deeper/secret.txt  ignored
        sub/deeper/secret-ok   kept
        sub/deeper/z.tmp       ignored from parent
        build/out.js           ignored dir
        nested/build/out.js    ignored dir anywhere
        root-only.txt          anchored ignore
        nested/root-only.txt   not ignored (anchored pattern)
        logs/a.log             ignored
        logs/keep.log          kept
        logs/b.txt             ignored by logs/*
        excluded-by-info/f     ignored via info/exclude
        notes.swp              ignored via info/exclude
        sub/notes.swp          ignored via info/exclude
      `),
    );
    await expectSameAsGit(root);
  });

  it('a zoo of patterns: anchored, globbed directories, **, trailing /**, escapes, negations', async () => {
    const root = makeRepo(
      {
        '.gitignore': [
          '# comment',
          '/top-only',
          'docs/*.pdf',
          '!docs/keep.pdf',
          'src/*/generated/',
          '**/cache/',
          'deep/**',
          '!deep/keep/',
          'a/**/z.txt',
          '\\#literal-hash',
          '\\!literal-bang',
          'trailing-space.txt   ',
          '*.o',
          '!important.o',
          'Mixed/Case/file',
        ].join('\n'),
        'pkg/.gitignore': '/local-anchored\nsub/*.tmp\n!sub/keep.tmp\n*.bak\n',
      },
      true,
    );
    writeFiles(
      root,
      files(`
        top-only                  x
        nested/top-only           kept
        docs/a.pdf                x
        docs/keep.pdf             kept
        docs/sub/b.pdf            kept (one level only)
        src/mod/generated/g.ts    x
        src/mod/other/g.ts        kept
        src/generated/g.ts        kept (needs a middle directory)
        x/y/cache/c               x
        cache/c                   x
        deep/a/b.txt              x
        deep/keep/k.txt           deep/** still matches inside
        deep/keep/more/m.txt      x
        a/z.txt                   x
        a/b/c/z.txt               x
        a/b/y.txt                 kept
        #literal-hash             x
        !literal-bang             x
        trailing-space.txt        x
        m.o                       x
        dir/important.o           kept
        Mixed/Case/file           x
        mixed/case/file           kept (case-sensitive)
        pkg/local-anchored        x
        pkg/inner/local-anchored  kept
        pkg/sub/a.tmp             x
        pkg/sub/keep.tmp          kept
        pkg/sub/deeper/a.tmp      kept
        pkg/sub/x.bak             x
        pkg/sub/deeper/y.bak      x
      `),
    );
    await expectSameAsGit(root);
    // The same rules with an instance that has already cached verdicts, after changing the rules.
    const fp = createFingerprinter();
    expect(await fp.capture(root)).toBe(gitFingerprint(root));
    fs.appendFileSync(path.join(root, '.gitignore'), '\n!m.o\n*.txt\n');
    expect(await fp.capture(root)).toBe(gitFingerprint(root));
  });

  it('a directory excluded by a shallower .gitignore but re-included by a deeper one', () =>
    expectSameAsGitAfter({ '.gitignore': 'a/b/\n', 'a/.gitignore': '!b/\n' }, { 'a/b/c.txt': 'c', 'a/b/d/e.txt': 'e', 'a/x.txt': 'x' }));

  it('tracked files that are also ignored stay tracked and are updated; untracked ignored ones are not added', async () => {
    const root = makeRepo(
      files(`
        tracked.log          v1
        vendor/lib.js        v1
        vendor/gone.js       bye
        vendor/deep/keep.js  v1
        cfg/local.env        v1
      `),
    );
    writeFiles(root, { '.gitignore': '*.log\nvendor/\ncfg/*.env\n' });
    writeFiles(
      root,
      files(`
        tracked.log          v2
        untracked.log        new
        vendor/lib.js        v2
        vendor/new.js        untracked in ignored dir
        vendor/deep/keep.js  v2
        cfg/local.env        v2
        cfg/other.env        untracked ignored
      `),
    );
    fs.rmSync(path.join(root, 'vendor/gone.js'));
    fs.chmodSync(path.join(root, 'vendor/lib.js'), 0o755);
    await expectSameAsGit(root);
  });

  it('force-includes .agents/workspace/active even though it is ignored, everything below it', () =>
    expectSameAsGitAfter(
      { '.gitignore': '.agents/workspace/\n*.log\nnode_modules/\n', 'README.md': 'r' },
      {
        ...files(`
          .agents/workspace/active/T-1/task.md             # task
          .agents/workspace/active/T-1/orchestration.json  {}
          .agents/workspace/active/T-1/debug.log           ignored elsewhere, forced here
          .agents/workspace/active/T-1/node_modules/x.js   forced too
          .agents/workspace/blocked/T-2/task.md            ignored
          .agents/workspace/completed/T-3/task.md          ignored
          .agents/rules/rule.md                            not ignored
        `),
        '.agents/workspace/active/T-1/.gitignore': '*\n',
      },
    ));

  it('the forced path when it is not ignored, and when it does not exist', async () => {
    const root = makeRepo({ 'a.txt': 'a' });
    await expectSameAsGit(root);
    writeFiles(root, { '.agents/workspace/active/x.md': 'x', '.agents/workspace/active/.gitignore': 'x.md\n' });
    await expectSameAsGit(root);
  });

  it('a tracked file under the ignored workspace outside the forced path is kept', () =>
    expectSameAsGitAfter(
      { '.agents/workspace/archive/old.md': 'old', '.agents/workspace/active/T/a.md': 'a' },
      {
        '.gitignore': '.agents/workspace/\n',
        ...files(`
          .agents/workspace/archive/old.md  changed
          .agents/workspace/archive/new.md  ignored
          .agents/workspace/active/T/b.md   b
        `),
      },
    ));

  it('a repository without commits starts from the empty tree', async () => {
    const empty = makeRepo({}, false);
    const fp = await expectSameAsGit(empty);
    expect(fp).toBe('4b825dc642cb6eb9a060e54bf8d69288fbee4904');
    const root = makeRepo({ 'a.txt': 'a', 'd/b.txt': 'b', '.gitignore': '*.o\n', 'x.o': 'obj' }, false);
    await expectSameAsGit(root);
    git(root, ['add', 'a.txt']); // staged in the real index: the fingerprint ignores the real index's content
    await expectSameAsGit(root);
  });

  it('core.fileMode=false keeps HEAD modes, new files get 100644', async () => {
    const root = makeRepo({ 'x.sh': 'x', 'y.sh': 'y' });
    fs.chmodSync(path.join(root, 'y.sh'), 0o755);
    commitAll(root);
    git(root, ['config', 'core.fileMode', 'false']);
    fs.chmodSync(path.join(root, 'x.sh'), 0o755);
    fs.chmodSync(path.join(root, 'y.sh'), 0o644);
    writeFiles(root, { 'z.sh': 'z' });
    fs.chmodSync(path.join(root, 'z.sh'), 0o755);
    await expectSameAsGit(root);
  });

  it('an index in version 4 (path compression) and a staged-but-uncommitted file', async () => {
    const root = makeRepo({ 'a/b/c.txt': 'c', 'a/b/d.txt': 'd', 'a/e.txt': 'e' });
    git(root, ['update-index', '--index-version', '4']);
    writeFiles(root, { 'a/b/c.txt': 'changed', 'staged.txt': 's' });
    git(root, ['add', 'staged.txt']);
    await expectSameAsGit(root);
  });

  it('packed objects (after gc): HEAD read through isomorphic-git for tracked ignored files', async () => {
    const root = makeRepo({ 'keep.log': 'v1', 'dir/x.txt': 'x', 'dir/y.log': 'y' });
    writeFiles(root, { '.gitignore': '*.log\n', 'keep.log': 'v2', 'other.log': 'o' });
    git(root, ['gc', '-q', '--prune=now']);
    expect(fs.readdirSync(path.join(root, '.git/objects/pack')).some((n) => n.endsWith('.pack'))).toBe(true);
    await expectSameAsGit(root);
  });

  it('.git as a file (linked worktree): resolves gitdir and commondir', async () => {
    const main = makeRepo({ 'a.txt': 'a', 'b/c.txt': 'c' });
    const wt = path.join(tempDir(), 'wt');
    git(main, ['worktree', 'add', '-q', '-b', 'side', wt]);
    expect(fs.statSync(path.join(wt, '.git')).isFile()).toBe(true);
    writeFiles(wt, { 'a.txt': 'changed in worktree', 'new.txt': 'n' });
    await expectSameAsGit(wt);
  });
});

describe('more git behaviours', () => {
  it('names with spaces, backslashes, newlines, quotes and leading dashes', () =>
    expectSameAsGitAfter(
      { 'plain.txt': 'p' },
      {
        'with space/a b.txt': '1',
        'back\\slash': '2',
        'new\nline': '3',
        '"quoted"': '4',
        '-dash': '5',
        '#hash': '6',
        '!bang': '7',
        'tab\tname': '8',
      },
    ));

  it('core.symlinks=false: a regular file where HEAD has a symlink stays a symlink entry', async () => {
    const root = makeRepo({ 'target.txt': 't' });
    fs.symlinkSync('target.txt', path.join(root, 'link'));
    commitAll(root);
    git(root, ['config', 'core.symlinks', 'false']);
    fs.rmSync(path.join(root, 'link'));
    fs.writeFileSync(path.join(root, 'link'), 'target.txt');
    await expectSameAsGit(root);
    fs.writeFileSync(path.join(root, 'link'), 'other-target.txt');
    await expectSameAsGit(root);
  });

  it('a dangling symlink at the forced path is not force-added (the procedure checks it exists)', async () => {
    const root = makeRepo({ '.gitignore': '.agents/workspace/\n', 'a.txt': 'a' });
    fs.mkdirSync(path.join(root, '.agents/workspace'), { recursive: true });
    fs.symlinkSync('nowhere', path.join(root, '.agents/workspace/active'));
    await expectSameAsGit(root);
    fs.rmSync(path.join(root, '.agents/workspace/active'));
    fs.mkdirSync(path.join(root, 'real-active'));
    fs.writeFileSync(path.join(root, 'real-active/x'), 'x');
    fs.symlinkSync('../../real-active', path.join(root, '.agents/workspace/active'));
    await expectSameAsGit(root); // a symlink to a directory is added as a symlink
  });

  it('fails like git when the forced path lies beyond a symbolic link', async () => {
    const root = makeRepo({ 'a.txt': 'a' });
    writeFiles(root, { 'elsewhere/workspace/active/t.md': 't' });
    fs.symlinkSync('elsewhere', path.join(root, '.agents'));
    expect(() => gitFingerprint(root)).toThrow(/beyond a symbolic link/);
    await expect(createFingerprinter().capture(root)).rejects.toThrow(/beyond a symbolic link/);
  });

  it('a submodule added with git submodule (.git file pointing into .git/modules)', async () => {
    const other = makeRepo({ 'lib.txt': 'lib' });
    const root = makeRepo({ 'a.txt': 'a' });
    git(root, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', other, 'deps/lib']);
    git(root, ['commit', '-q', '-m', 'submodule']);
    expect(fs.statSync(path.join(root, 'deps/lib/.git')).isFile()).toBe(true);
    await expectSameAsGit(root);
    writeFiles(path.join(root, 'deps/lib'), { 'lib.txt': 'changed inside, not committed' });
    await expectSameAsGit(root);
    writeFiles(path.join(root, 'deps/lib'), { 'more.txt': 'm' });
    commitAll(path.join(root, 'deps/lib'));
    await expectSameAsGit(root);
  });
});

/** A repository without commits at `root`/`name`. */
function emptyRepoIn(root: string, name: string): string {
  const sub = path.join(root, name);
  fs.mkdirSync(sub);
  git(sub, ['init', '-q']);
  return sub;
}

/** A repository at `root`/`name` (branch main) that committed one file, inner.txt. */
function committedRepoIn(root: string, name: string): string {
  const sub = path.join(root, name);
  fs.mkdirSync(sub);
  git(sub, ['init', '-q', '-b', 'main']);
  writeFiles(sub, { 'inner.txt': 'i' });
  commitAll(sub);
  return sub;
}

describe('nested repositories (gitlinks)', () => {
  it('a nested repository with a commit is recorded as a gitlink to its HEAD', async () => {
    const root = makeRepo({ 'a.txt': 'a' });
    committedRepoIn(root, 'sub');
    await expectSameAsGit(root);
  });

  it('a tracked gitlink whose directory is empty (not checked out) is kept; a removed one is dropped', async () => {
    const root = makeRepo({ 'a.txt': 'a' });
    const sub = committedRepoIn(root, 'sub');
    git(root, ['add', 'sub']);
    git(root, ['commit', '-q', '-m', 'gitlink']);
    fs.rmSync(sub, { recursive: true, force: true });
    fs.mkdirSync(sub);
    await expectSameAsGit(root);
    fs.rmdirSync(sub);
    await expectSameAsGit(root);
  });

  it('a nested repository without commits fails, as `git add -A` does', async () => {
    const root = makeRepo({ 'a.txt': 'a' });
    emptyRepoIn(root, 'sub');
    expect(() => gitFingerprint(root)).toThrow(/does not have a commit checked out/);
    await expect(createFingerprinter().capture(root)).rejects.toThrow(/does not have a commit checked out/);
  });

  it('an ignored nested repository is not added', async () => {
    const root = makeRepo({ '.gitignore': 'sub/\n' });
    emptyRepoIn(root, 'sub');
    await expectSameAsGit(root);
  });
});

describe('side effects', () => {
  it('leaves .git/index byte- and mtime-identical and writes the objects git diff needs', async () => {
    const root = makeRepo({ 'a.txt': 'a', 'd/b.txt': 'b', '.gitignore': '*.log\n' });
    writeFiles(root, { 'a.txt': 'changed', 'd/new.txt': 'brand new content', 'x.log': 'ignored' });
    fs.symlinkSync('d/new.txt', path.join(root, 'ln'));
    const before = snapshotIndex(root);
    const fp = await createFingerprinter().capture(root);
    const after = snapshotIndex(root);
    expect(after?.bytes.equals(before!.bytes)).toBe(true);
    expect(after?.mtimeNs).toBe(before?.mtimeNs);
    // Before git ever sees these files, the objects must be there.
    const headTree = git(root, ['rev-parse', 'HEAD^{tree}']).trim();
    expect(gitDiff(root, headTree, fp)).toEqual(['a.txt', 'd/new.txt', 'ln']);
    expect(git(root, ['cat-file', '-p', `${fp}:d/new.txt`])).toBe('brand new content');
    expect(git(root, ['fsck', '--no-dangling', '--connectivity-only'])).toBe('');
    expect(fp).toBe(gitFingerprint(root));
    // Loose objects as git writes them: read-only files.
    const loose = path.join(root, '.git/objects', fp.slice(0, 2), fp.slice(2));
    expect(fs.statSync(loose).mode & 0o222).toBe(0);
  });

  it('does not rewrite objects that already exist (loose or packed)', async () => {
    const root = makeRepo({ 'a.txt': 'a', 'd/b.txt': 'b' });
    git(root, ['gc', '-q', '--prune=now']);
    const objects = path.join(root, '.git/objects');
    const countLoose = () =>
      fs
        .readdirSync(objects)
        .filter((d) => /^[0-9a-f]{2}$/.test(d))
        .reduce((n, d) => n + fs.readdirSync(path.join(objects, d)).length, 0);
    const fp = await createFingerprinter().capture(root);
    expect(fp).toBe(git(root, ['rev-parse', 'HEAD^{tree}']).trim());
    expect(countLoose()).toBe(0);
  });
});

describe('change detection and caching', () => {
  it('sees an edit whose mtime was restored (same size), cold and warm', async () => {
    const root = makeRepo({ 'f.txt': 'aaaa', 'g.txt': 'g' });
    const file = path.join(root, 'f.txt');
    // Old timestamps, then refresh the index so its stat data is clean and not racy.
    const old = Date.now() / 1000 - 120;
    fs.utimesSync(file, old, old);
    await new Promise((r) => setTimeout(r, 20));
    git(root, ['update-index', '--really-refresh']);
    const warm = createFingerprinter();
    const first = await warm.capture(root);
    expect(first).toBe(git(root, ['rev-parse', 'HEAD^{tree}']).trim());
    const mtimeNs = fs.statSync(file, { bigint: true }).mtimeNs;
    fs.writeFileSync(file, 'bbbb');
    fs.utimesSync(file, old, old);
    expect(fs.statSync(file, { bigint: true }).mtimeNs).toBe(mtimeNs);
    const expected = gitFingerprint(root);
    expect(expected).not.toBe(first);
    expect(await createFingerprinter().capture(root)).toBe(expected);
    expect(await warm.capture(root)).toBe(expected);
  });

  it('uses the index stat data: unchanged files are not hashed, racy entries are', async () => {
    const root = makeRepo({ 'a.txt': 'a', 'b.txt': 'b', 'c/d.txt': 'd' });
    const old = Date.now() / 1000 - 120;
    for (const f of ['a.txt', 'b.txt', 'c/d.txt']) fs.utimesSync(path.join(root, f), old, old);
    await new Promise((r) => setTimeout(r, 20));
    git(root, ['update-index', '--really-refresh']);
    const fp = createFingerprinter();
    const cold = await fp.captureWithStats(root);
    expect(cold.stats).toMatchObject({ files: 3, hashed: 0, fromIndex: 3 });
    fs.writeFileSync(path.join(root, 'b.txt'), 'B');
    const warm = await fp.captureWithStats(root);
    expect(warm.stats).toMatchObject({ files: 3, hashed: 1, fromCache: 2 });
    expect(warm.fingerprint).toBe(gitFingerprint(root));
    // A file whose mtime is not older than the index is hashed even though its stat data matches.
    const root2 = makeRepo({ 'x.txt': 'x' });
    const idx = fs.statSync(path.join(root2, '.git/index'));
    fs.utimesSync(path.join(root2, 'x.txt'), idx.atime, new Date(idx.mtimeMs + 5000));
    git(root2, ['update-index', '--really-refresh']);
    const racy = await createFingerprinter().captureWithStats(root2);
    expect(racy.stats.hashed).toBe(1);
    expect(racy.fingerprint).toBe(gitFingerprint(root2));
  });

  it('repeated captures with one instance follow every kind of change', async () => {
    const root = makeRepo({
      '.gitignore': '*.log\nout/\n',
      ...files(`
        a.txt          a
        b/c.txt        c
        b/d/e.txt      e
        run.sh         echo
        same-size.txt  1234
      `),
    });
    const fp = createFingerprinter();
    const check = async (label: string) => {
      const ours = await fp.capture(root);
      expect(ours, label).toBe(gitFingerprint(root));
      return ours;
    };
    const fingerprints = [await check('initial')];
    const steps: Array<[string, () => void]> = [
      ['modify', () => fs.writeFileSync(path.join(root, 'a.txt'), 'a2')],
      ['same size, immediately', () => fs.writeFileSync(path.join(root, 'same-size.txt'), 'abcd')],
      ['same size again, immediately', () => fs.writeFileSync(path.join(root, 'same-size.txt'), 'wxyz')],
      ['chmod +x', () => fs.chmodSync(path.join(root, 'run.sh'), 0o755)],
      ['add untracked', () => writeFiles(root, { 'new/n.txt': 'n' })],
      ['add ignored', () => writeFiles(root, { 'x.log': 'l', 'out/o.js': 'o' })],
      ['un-ignore via .gitignore edit', () => fs.writeFileSync(path.join(root, '.gitignore'), 'out/\n')],
      ['delete', () => fs.rmSync(path.join(root, 'b/d/e.txt'))],
      [
        'file -> symlink',
        () => {
          fs.rmSync(path.join(root, 'b/c.txt'));
          fs.symlinkSync('../a.txt', path.join(root, 'b/c.txt'));
        },
      ],
      [
        'retarget symlink',
        () => {
          fs.rmSync(path.join(root, 'b/c.txt'));
          fs.symlinkSync('../run.sh', path.join(root, 'b/c.txt'));
        },
      ],
      [
        'dir -> file',
        () => {
          fs.rmSync(path.join(root, 'new'), { recursive: true });
          fs.writeFileSync(path.join(root, 'new'), 'file now');
        },
      ],
      ['rename', () => fs.renameSync(path.join(root, 'a.txt'), path.join(root, 'renamed.txt'))],
      ['force-included workspace appears', () => writeFiles(root, { '.agents/workspace/active/t/x.log': 'forced' })],
      ['workspace file edited', () => writeFiles(root, { '.agents/workspace/active/t/x.log': 'forced 2' })],
      ['commit (index changes under the cache)', () => commitAll(root)],
      ['edit after commit', () => fs.writeFileSync(path.join(root, 'renamed.txt'), 'after commit')],
      [
        'empty everything but .gitignore',
        () => {
          for (const n of fs.readdirSync(root)) if (n !== '.git' && n !== '.gitignore') fs.rmSync(path.join(root, n), { recursive: true });
        },
      ],
    ];
    for (const [label, step] of steps) {
      step();
      fingerprints.push(await check(label));
    }
    // Each consecutive pair diffs as git says.
    for (let i = 1; i < fingerprints.length; i++) {
      const [a, b] = [fingerprints[i - 1]!, fingerprints[i]!];
      expect(await fp.diff(root, a, b)).toEqual(gitDiff(root, a, b));
    }
  });

  it('a fresh file edited twice within one timestamp tick is caught on the next capture', async () => {
    const root = makeRepo({ 'a.txt': 'a' });
    const fp = createFingerprinter();
    const file = path.join(root, 'racy.txt');
    for (let i = 0; i < 5; i++) {
      fs.writeFileSync(file, `v${i}-xx`);
      expect(await fp.capture(root)).toBe(gitFingerprint(root));
    }
  });
});
