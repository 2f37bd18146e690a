// `baton fingerprint` loads dist/fingerprint.mjs, a bundle of its own (scripts/build.mjs): a cold
// fingerprint is measured against git (bench/fingerprint.mjs), so the command loads the fingerprint
// module and nothing else; isomorphic-git (deltified pack objects) comes lazily from the main bundle.
// Checked on the built files (npm run build).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtBundle } from '../support/bundles.ts';
import { PROJECT_ROOT, runBaton } from '../support/processes.ts';
import { cleanup, GIT_ENV, gitFingerprint, makeDeltifiedRepo, writeFiles } from './helpers.ts';

afterAll(cleanup);

describe('dist/fingerprint.mjs', () => {
  const { text, modules } = builtBundle('fingerprint.mjs');

  it('holds the command and the fingerprint module; of the packages only `ignore`', () => {
    expect(modules).toEqual(expect.arrayContaining(['src/cli/fingerprint.ts', 'src/fingerprint/capture.ts', 'src/fingerprint/objects.ts']));
    expect(modules.filter((module) => module.startsWith('node_modules/') && !module.startsWith('node_modules/ignore/'))).toEqual([]);
  });

  it('loads the pack reader lazily from the main bundle, and that file exists', () => {
    const lazy = [...text.matchAll(/import\("(\.\/lib\/[^"]+)"\)/g)].map((match) => match[1]!);
    expect(lazy).toEqual(['./lib/fingerprint-packedObjects.mjs']);
    expect(fs.existsSync(path.join(PROJECT_ROOT, 'dist', lazy[0]!))).toBe(true);
  });

  it('bin/baton.mjs runs it: the fingerprint of git, also when HEAD must be read from a deltified pack', async () => {
    const root = makeDeltifiedRepo();
    // Tracked files that are now ignored: HEAD's root tree must be read.
    writeFiles(root, { '.gitignore': 'f2*\n', 'f200.txt': 'changed' });
    const run = await runBaton(['fingerprint', '--repo', root, '--json', '--stats'], { env: GIT_ENV });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ repo: root, fingerprint: gitFingerprint(root) });
    const help = await runBaton(['fingerprint', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: baton fingerprint \[options\] \[fingerprints\.\.\.\]/);
  });
});
