// Unit tests of the object database, tree format and index reader against git's own view.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFingerprinter } from '../../src/fingerprint/index.ts';
import { readIndex } from '../../src/fingerprint/indexFile.ts';
import { hashObject, ObjectDatabase } from '../../src/fingerprint/objects.ts';
import { PackIndexSet } from '../../src/fingerprint/packIndex.ts';
import {
  compareCodePoints,
  compareTreeEntries,
  parseTree,
  serializeTreeWrapped,
  sortTreeEntries,
  type TreeEntry,
} from '../../src/fingerprint/tree.ts';
import { cleanup, GIT_ENV, git, gitFingerprint, makeDeltifiedRepo, makeRepo, writeFiles } from './helpers.ts';

afterAll(cleanup);

describe('object database', () => {
  it('hashes like git hash-object and writes objects git can read', () => {
    const root = makeRepo({}, false);
    const db = new ObjectDatabase(path.join(root, '.git'));
    for (const content of ['', 'hello\n', '\u0000binary\u00ff', 'x'.repeat(100_000)]) {
      const oid = db.write('blob', Buffer.from(content, 'latin1'));
      const file = path.join(root, 'tmp-blob');
      fs.writeFileSync(file, Buffer.from(content, 'latin1'));
      expect(oid).toBe(git(root, ['hash-object', '--no-filters', file]).trim());
      expect(execFileSync('git', ['cat-file', 'blob', oid], { cwd: root, env: GIT_ENV }).equals(Buffer.from(content, 'latin1'))).toBe(true);
      fs.rmSync(file);
    }
  });

  it('reads packed objects: whole ones directly, deltas through isomorphic-git', async () => {
    const root = makeDeltifiedRepo();
    const db = new ObjectDatabase(path.join(root, '.git'));
    const packs = new PackIndexSet(path.join(root, '.git', 'objects'));
    const trees = git(root, ['rev-list', '--all', '--objects'])
      .split('\n')
      .map((l) => l.split(' ')[0] ?? '')
      .filter((oid) => oid && git(root, ['cat-file', '-t', oid]).trim() === 'tree');
    let deltas = 0;
    for (const oid of trees) {
      const whole = packs.readWhole(oid);
      if (whole === null) deltas++;
      else expect(hashObject(whole.type, whole.content)).toBe(oid);
      const obj = await db.read(oid);
      expect(obj.type).toBe('tree');
      expect(hashObject('tree', obj.content)).toBe(oid);
      expect(parseTree(obj.content).map((e) => e.name)).toEqual(git(root, ['ls-tree', '--name-only', oid]).split('\n').filter(Boolean));
    }
    expect(deltas).toBeGreaterThan(0);
    packs.close();
    db.close();
    // And a capture that needs HEAD's (deltified) root tree: a tracked file that is now ignored.
    writeFiles(root, { '.gitignore': 'f2*\n', 'f200.txt': 'changed' });
    expect(await createFingerprinter().capture(root)).toBe(gitFingerprint(root));
  });
});

describe('tree format', () => {
  it('serializes and parses like git mktree, in git order', () => {
    const root = makeRepo({}, false);
    const empty = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391';
    const entries = sortTreeEntries([
      { name: 'foo.c', mode: '100644', oid: empty },
      { name: 'foo', mode: '40000', oid: '4b825dc642cb6eb9a060e54bf8d69288fbee4904' },
      { name: 'foo-bar', mode: '100755', oid: empty },
      { name: 'é', mode: '120000', oid: empty },
      { name: '😀', mode: '100644', oid: empty },
      { name: '\uff01', mode: '100644', oid: empty },
    ]);
    const input = entries.map((e) => `${e.mode === '40000' ? '040000 tree' : `${e.mode} blob`} ${e.oid}\t${e.name}`).join('\n');
    const oid = execFileSync('git', ['mktree', '--missing'], { cwd: root, env: GIT_ENV, input: `${input}\n` })
      .toString()
      .trim();
    expect(hashObject('tree', serializeTreeWrapped(entries, false))).toBe(oid);
    expect(parseTree(serializeTreeWrapped(entries, false))).toEqual(entries);
    expect(entries.map((e) => e.name)).toEqual(['foo-bar', 'foo.c', 'foo', 'é', '\uff01', '😀']);
    expect(compareCodePoints('\uff01', '😀')).toBeLessThan(0); // UTF-16 order would say the opposite
  });

  it('compares entries as their names with a "/" after directories (compareTreeEntries builds no string)', () => {
    const names = ['a', 'a.b', 'a-b', 'a/', 'ab', 'a0', 'b', 'é', '\uff01', '😀', 'x😀', 'x\uff01', ''];
    const entries: TreeEntry[] = [];
    for (const name of names.filter((n) => n && !n.includes('/'))) {
      entries.push({ name, mode: '100644', oid: '' }, { name, mode: '40000', oid: '' });
    }
    const key = (e: TreeEntry): string => (e.mode === '40000' ? `${e.name}/` : e.name);
    for (const a of entries) {
      for (const b of entries)
        expect(Math.sign(compareTreeEntries(a, b)), `${key(a)} vs ${key(b)}`).toBe(Math.sign(compareCodePoints(key(a), key(b))));
    }
    const shuffled = [...entries].reverse();
    expect(sortTreeEntries(shuffled).map(key)).toEqual([...entries].sort((a, b) => compareCodePoints(key(a), key(b))).map(key));
  });
});

describe('index reader', () => {
  it('reads versions 2, 3 and 4 alike, skipping intent-to-add, skip-worktree and conflict entries', () => {
    const root = makeRepo({ 'a/b.txt': 'b', 'a/c.txt': 'c', 'd.txt': 'd', [`${'long/'.repeat(20)}x`]: 'x' });
    writeFiles(root, { 'ita.txt': 'i' });
    git(root, ['add', '-N', 'ita.txt']);
    git(root, ['update-index', '--skip-worktree', 'd.txt']);
    const paths = (v: number) => {
      git(root, ['update-index', '--index-version', String(v)]);
      const idx = readIndex(path.join(root, '.git', 'index'));
      return [...idx.dirs].flatMap(([dir, names]) => [...names.keys()].map((name) => (dir ? `${dir}/${name}` : name))).sort();
    };
    const expected = ['a/b.txt', 'a/c.txt', `${'long/'.repeat(20)}x`];
    expect(paths(2)).toEqual(expected);
    expect(paths(3)).toEqual(expected);
    expect(paths(4)).toEqual(expected);
  });
});
