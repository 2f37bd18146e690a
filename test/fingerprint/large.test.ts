// The differential test at scale (issue 29): 100,000 files, the fingerprint equal to git's tree id
// (`git read-tree HEAD && git add -A && git write-tree` on a temporary index), cold and then warm
// after edits. Tiny files with 100 distinct contents keep it short: every file is still read and
// hashed (by git, and by baton where the index does not vouch for it), but only 100 blobs are
// written to the object database (minutes on a loaded machine all the same).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFingerprinter } from '../../src/fingerprint/index.ts';
import { cleanup, git, gitFingerprint, makeRepo } from './helpers.ts';

// Removing 100,000 files takes a while on a loaded machine.
afterAll(cleanup, 300_000);

const FILES = 100_000;
const PER_DIR = 50;

describe('a 100,000-file repository', () => {
  it('gives git tree ids, cold and warm', { timeout: 900_000 }, async () => {
    const root = makeRepo({ '.gitignore': '*.log\nbuild/\n' }, false);
    // 2,000 directories of 50 files in two levels; every 1,000th file ignored, every 997th executable.
    // 100 distinct contents: the files are all read and hashed, the object database gets 100 blobs.
    for (let d = 0; d < FILES / PER_DIR; d++) {
      const dir = path.join(root, `p${d % 40}`, `d${d}`);
      fs.mkdirSync(dir, { recursive: true });
      for (let f = 0; f < PER_DIR; f++) {
        const i = d * PER_DIR + f;
        const file = path.join(dir, i % 1000 === 0 ? `f${i}.log` : `f${i}.txt`);
        fs.writeFileSync(file, `${i % 100}\n`);
        if (i % 997 === 0) fs.chmodSync(file, 0o755);
      }
    }
    fs.mkdirSync(path.join(root, 'build'));
    fs.writeFileSync(path.join(root, 'build/out.txt'), 'ignored\n');
    // HEAD and .git/index hold a tenth of them (so both the index and hashing are used).
    git(root, ['add', '--', '.gitignore', 'p1', 'p2', 'p3', 'p4']);
    git(root, ['commit', '-q', '--no-verify', '-m', 'part']);

    // git hashes every file of the temporary index: run it once, after the edits, and compare the
    // cold capture and a warm one (its first capture before the edits) with it.
    const warm = createFingerprinter();
    const first = await warm.captureWithStats(root);
    expect(first.stats.files).toBe(FILES - FILES / 1000 + 1);
    expect(first.stats.fromIndex).toBeGreaterThan(0);
    fs.writeFileSync(path.join(root, 'p1/d1/f50.txt'), 'changed\n');
    fs.rmSync(path.join(root, 'p7/d47/f2351.txt'));
    fs.writeFileSync(path.join(root, 'p39/d1999/new.txt'), 'new\n');
    fs.writeFileSync(path.join(root, 'p3/d3/f150.log'), 'still ignored\n');
    const again = await warm.captureWithStats(root);
    const cold = await createFingerprinter({ remember: false }).capture(root);
    const expected = gitFingerprint(root);
    expect(again.fingerprint).not.toBe(first.fingerprint);
    expect(cold).toBe(expected);
    expect(again.fingerprint).toBe(expected);
    fs.rmSync(root, { recursive: true, force: true });
  });
});
