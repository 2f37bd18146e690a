// The CLI, run as a child process from the TypeScript sources (through tsx), so these tests do not
// depend on a prior `npm run build`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { dirOutsideAnyRepository } from '../support/fixtures.ts';
import { cleanup, GIT_ENV, gitDiff, gitFingerprint, makeRepo, tempDir, writeFiles } from './helpers.ts';

afterAll(cleanup);

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MAIN = path.join(ROOT, 'src/cli/main.ts');
const TSX = path.join(ROOT, 'node_modules/tsx/dist/esm/index.mjs');

function baton(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const r = spawnSync(process.execPath, ['--import', TSX, MAIN, 'fingerprint', ...args], {
    cwd: options.cwd ?? ROOT,
    env: options.env ?? GIT_ENV,
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('baton fingerprint', () => {
  it('prints the fingerprint, from --repo or the nearest repository above the cwd', () => {
    const root = makeRepo({ 'a.txt': 'a', 'sub/dir/b.txt': 'b' });
    writeFiles(root, { 'c.txt': 'c' });
    const expected = gitFingerprint(root);
    expect(baton(['--repo', root])).toMatchObject({ code: 0, stdout: `${expected}\n` });
    expect(baton([], { cwd: path.join(root, 'sub/dir') })).toMatchObject({ code: 0, stdout: `${expected}\n` });
    const json = JSON.parse(baton(['--repo', root, '--json']).stdout);
    expect(json).toEqual({ repo: root, fingerprint: expected });
  });

  it('never runs git: a git on PATH that fails loudly is not called', () => {
    const root = makeRepo({ 'a.txt': 'a', '.gitignore': '*.log\n' });
    writeFiles(root, { 'a.txt': 'changed', 'new.txt': 'n', 'x.log': 'l', '.agents/workspace/active/t.md': 't' });
    const expected = gitFingerprint(root); // computed with the real git, before the trap is set
    const bin = tempDir('baton-fake-git-');
    const marker = path.join(bin, 'git-was-called');
    fs.writeFileSync(path.join(bin, 'git'), `#!/bin/sh\necho "fake git called: $*" >&2\necho "$*" >> '${marker}'\nexit 97\n`, {
      mode: 0o755,
    });
    const env = { ...GIT_ENV, PATH: `${bin}${path.delimiter}${GIT_ENV.PATH ?? ''}` };
    // The trap works: a child calling `git` hits it.
    expect(spawnSync('git', ['--version'], { env }).status).toBe(97);
    fs.rmSync(marker, { force: true });
    const r = baton(['--repo', root], { env });
    expect(r.stderr).toBe('');
    expect(r).toMatchObject({ code: 0, stdout: `${expected}\n` });
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('--diff prints changed paths one per line, or JSON', () => {
    const root = makeRepo({ 'a.txt': 'a', 'b/c.txt': 'c' });
    const before = baton(['--repo', root]).stdout.trim();
    writeFiles(root, { 'a.txt': 'a2', 'b/d.txt': 'd' });
    const after = baton(['--repo', root]).stdout.trim();
    const expected = gitDiff(root, before, after);
    expect(expected).toEqual(['a.txt', 'b/d.txt']);
    expect(baton(['--repo', root, '--diff', before, after])).toMatchObject({ code: 0, stdout: 'a.txt\nb/d.txt\n' });
    const json = JSON.parse(baton(['--diff', before, after, '--repo', root, '--json']).stdout);
    expect(json).toEqual({ repo: root, before, after, changedPaths: expected });
    expect(baton(['--repo', root, '--diff', before, before])).toMatchObject({ code: 0, stdout: '' });
  });

  it('--help works', () => {
    const r = baton(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Usage: baton fingerprint/);
    expect(r.stdout).toMatch(/--diff/);
    expect(r.stdout).toMatch(/--repo <dir>/);
  });

  it('clear errors: not a repository, bad arguments, unknown ids', () => {
    // Not below /tmp: a real Codex running meanwhile (the agent tests, another file) mounts over /tmp/.git.
    const notRepo = dirOutsideAnyRepository('fp-not-repo');
    onTestFinished(() => fs.rmSync(notRepo, { recursive: true, force: true }));
    const r1 = baton(['--repo', notRepo]);
    expect(r1.code).toBe(1);
    expect(r1.stderr).toMatch(/^baton fingerprint: current directory is not inside a git repository \(.+\)$/m);
    const r0 = baton(['--repo', path.join(notRepo, 'missing')]);
    expect(r0.code).toBe(1);
    expect(r0.stderr).toMatch(/no such directory/);
    const root = makeRepo({ 'a.txt': 'a' });
    const fp = baton(['--repo', root]).stdout.trim();
    const r2 = baton(['--repo', root, '--diff', fp]);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/exactly two fingerprints/);
    const r3 = baton(['--repo', root, '--diff', fp, 'f'.repeat(40)]);
    expect(r3.code).toBe(1);
    expect(r3.stderr).toMatch(/unknown fingerprint f{40}/);
    const r4 = baton(['--repo', root, '--diff', 'zzz', fp]);
    expect(r4.code).toBe(1);
    expect(r4.stderr).toMatch(/invalid fingerprint "zzz"/);
    // A wrong command line is a usage error, exit 2, as for every command (docs/usage.md "Exit codes").
    const r5 = baton(['--repo', root, '--bogus']);
    expect(r5.code).toBe(2);
    expect(r5.stderr).toMatch(/unknown option/);
  });
});
