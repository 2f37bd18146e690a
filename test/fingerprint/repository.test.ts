import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gitDirOf } from '../../src/base/repoRoot.ts';
import { findGitDir } from '../../src/fingerprint/repository.ts';
import { cleanup, git, tempDir } from './helpers.ts';

afterAll(cleanup);

// One reader of `.git` files serves both the queue's spool (core's gitDirOf, which throws) and the
// fingerprints (findGitDir, which answers null for anything that is not a usable repository).
describe('the .git entry of a work tree', () => {
  it('a .git directory is the git dir', () => {
    const root = tempDir();
    git(root, ['init', '-q']);
    expect(gitDirOf(root)).toBe(path.join(root, '.git'));
    expect(findGitDir(root)).toBe(path.join(root, '.git'));
  });

  it('a `gitdir:` file points at the git dir, relative to the work tree', () => {
    const root = tempDir();
    git(root, ['init', '-q', '--separate-git-dir', 'elsewhere.git', 'tree']);
    const tree = path.join(root, 'tree');
    fs.writeFileSync(path.join(tree, '.git'), 'gitdir: ../elsewhere.git\n');
    expect(gitDirOf(tree)).toBe(path.join(root, 'elsewhere.git'));
    expect(findGitDir(tree)).toBe(path.join(root, 'elsewhere.git'));
  });

  it('a .git file without a `gitdir:` line: gitDirOf throws, findGitDir answers null', () => {
    const root = tempDir();
    fs.writeFileSync(path.join(root, '.git'), 'not a pointer\n');
    expect(() => gitDirOf(root)).toThrow(`${path.join(root, '.git')} is not a git directory or a 'gitdir:' file`);
    expect(findGitDir(root)).toBeNull();
  });

  it('no .git at all: gitDirOf throws ENOENT, findGitDir answers null', () => {
    const root = tempDir();
    expect(() => gitDirOf(root)).toThrow(/ENOENT/);
    expect(findGitDir(root)).toBeNull();
  });

  it('a `gitdir:` file pointing at something that is not a repository: findGitDir answers null', () => {
    const root = tempDir();
    fs.mkdirSync(path.join(root, 'empty'));
    fs.writeFileSync(path.join(root, '.git'), 'gitdir: empty\n');
    expect(gitDirOf(root)).toBe(path.join(root, 'empty'));
    expect(findGitDir(root)).toBeNull();
  });
});
