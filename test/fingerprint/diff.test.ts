import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFingerprinter, EMPTY_TREE_OID, InvalidFingerprintError } from '../../src/fingerprint/index.ts';
import { cleanup, files, commitAll, git, gitDiff, makeRepo, writeFiles } from './helpers.ts';

afterAll(cleanup);

describe('diff matches git diff --name-only --no-renames', () => {
  it('additions, deletions, modifications, renames, mode and type changes, in git order', async () => {
    const root = makeRepo(
      files(`
        foo                  f
        foo.c                c
        foo-x/a              a
        keep/same.txt        same
        keep/deep/same2.txt  same
        dir2file/x           x
        mode.sh              m
        link                 regular file first
        rename-me.txt        content that moves
        ü/ä.txt              umlaut
      `),
    );
    const fp = createFingerprinter();
    const before = await fp.capture(root);
    fs.rmSync(path.join(root, 'foo'));
    writeFiles(root, { 'foo/inside': 'file became dir', 'foo.c': 'changed', 'foo-x/b': 'new' });
    fs.rmSync(path.join(root, 'dir2file'), { recursive: true });
    fs.writeFileSync(path.join(root, 'dir2file'), 'dir became file');
    fs.chmodSync(path.join(root, 'mode.sh'), 0o755);
    fs.rmSync(path.join(root, 'link'));
    fs.symlinkSync('foo.c', path.join(root, 'link'));
    fs.renameSync(path.join(root, 'rename-me.txt'), path.join(root, 'renamed.txt'));
    writeFiles(root, { 'ü/ä.txt': 'changed', 'ü/ö.txt': 'new', '😀/x': 'astral' });
    const after = await fp.capture(root);
    const expected = gitDiff(root, before, after);
    expect(expected.length).toBeGreaterThan(8);
    expect(await fp.diff(root, before, after)).toEqual(expected);
    expect(await fp.diff(root, after, before)).toEqual(gitDiff(root, after, before));
    expect(await fp.diff(root, before, before)).toEqual([]);
  });

  it('against the empty tree and across gitlink changes', async () => {
    const root = makeRepo({ 'a/b/c.txt': 'c', 'd.txt': 'd' });
    const fp = createFingerprinter();
    const one = await fp.capture(root);
    expect(await fp.diff(root, EMPTY_TREE_OID, one)).toEqual(gitDiff(root, EMPTY_TREE_OID, one));
    expect(await fp.diff(root, one, EMPTY_TREE_OID)).toEqual(['a/b/c.txt', 'd.txt']);
    const sub = path.join(root, 'sub');
    fs.mkdirSync(sub);
    git(sub, ['init', '-q', '-b', 'main']);
    writeFiles(sub, { x: '1' });
    commitAll(sub);
    const two = await fp.capture(root);
    writeFiles(sub, { x: '2' });
    commitAll(sub);
    const three = await fp.capture(root);
    expect(await fp.diff(root, one, two)).toEqual(gitDiff(root, one, two));
    expect(await fp.diff(root, two, three)).toEqual(['sub']);
  });

  it('accepts commit ids (peeled to their trees) like git diff, and reads packed trees', async () => {
    const root = makeRepo({ 'a.txt': 'a', 'b/c.txt': 'c' });
    const c1 = git(root, ['rev-parse', 'HEAD']).trim();
    writeFiles(root, { 'a.txt': 'a2', 'b/d.txt': 'd' });
    commitAll(root);
    const c2 = git(root, ['rev-parse', 'HEAD']).trim();
    git(root, ['gc', '-q', '--prune=now']);
    const fp = createFingerprinter();
    expect(await fp.diff(root, c1, c2)).toEqual(gitDiff(root, c1, c2));
    const t1 = git(root, ['rev-parse', `${c1}^{tree}`]).trim();
    expect(await fp.diff(root, t1, c2)).toEqual(['a.txt', 'b/d.txt']);
  });

  it('throws clear errors for invalid and unknown ids', async () => {
    const root = makeRepo({ 'a.txt': 'a' });
    const fp = createFingerprinter();
    const tree = await fp.capture(root);
    await expect(fp.diff(root, 'nope', tree)).rejects.toThrow(/invalid fingerprint "nope"/);
    await expect(fp.diff(root, tree, 'abc123')).rejects.toThrow(/invalid fingerprint/);
    await expect(fp.diff(root, tree, '0123456789abcdef0123456789abcdef01234567')).rejects.toThrow(
      /unknown fingerprint 0123456789abcdef0123456789abcdef01234567/,
    );
    const blob = git(root, ['rev-parse', 'HEAD:a.txt']).trim();
    await expect(fp.diff(root, tree, blob)).rejects.toThrow(/is a blob, not a tree/);
    // Callers classify by type, not by message text.
    await expect(fp.diff(root, 'nope', tree)).rejects.toMatchObject({ name: 'InvalidFingerprintError', code: 'malformed' });
    await expect(fp.diff(root, tree, '0123456789abcdef0123456789abcdef01234567')).rejects.toMatchObject({ code: 'unknown' });
    await expect(fp.diff(root, tree, blob)).rejects.toBeInstanceOf(InvalidFingerprintError);
    await expect(fp.diff(root, tree, blob)).rejects.toMatchObject({
      code: 'not-a-tree',
      message: `invalid fingerprint ${blob}: ${blob} is a blob, not a tree`,
    });
    expect(await fp.diff(root, tree.toUpperCase(), tree)).toEqual([]);
  });
});
