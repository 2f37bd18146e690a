import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, runProcess } from '../support/processes.ts';

// bin/baton, the `baton` npm installs: a POSIX sh launcher that finds bin/baton.mjs through npm's
// symlink and, for `baton hook` and `baton task` only, hands NODE_EXTRA_CA_CERTS over as
// BATON_NODE_EXTRA_CA_CERTS so that Node does not parse the bundle at start (issue 46). Here `node`
// on PATH is a stand-in that prints what it was started with; test/teams/tlsAcl.test.ts shows the
// real thing reaching a TLS Redis whose CA is in that bundle only.

const LAUNCHER = path.join(PROJECT_ROOT, 'bin', 'baton');
let work: string;
let binDir: string;
const PACKAGE_SCRIPT = () => path.join(work, 'prefix', 'lib', 'node_modules', 'baton', 'bin', 'baton.mjs');

beforeAll(() => {
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-launcher-')));
  const fakeBin = path.join(work, 'fake-bin');
  fs.mkdirSync(fakeBin);
  fs.writeFileSync(
    path.join(fakeBin, 'node'),
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a sh script's own ${VAR-default} expansions
    '#!/bin/sh\nprintf \'script=%s\\n\' "$1"; shift\nprintf \'arg=%s\\n\' "$@"\nprintf \'extra=%s\\n\' "${NODE_EXTRA_CA_CERTS-(unset)}"\nprintf \'handed=%s\\n\' "${BATON_NODE_EXTRA_CA_CERTS-(unset)}"\n',
    { mode: 0o755 },
  );
  // As `npm install -g` lays it out: <prefix>/bin/baton → ../lib/node_modules/baton/bin/baton.
  binDir = path.join(work, 'prefix', 'bin');
  fs.mkdirSync(binDir, { recursive: true });
  const packageBin = path.join(work, 'prefix', 'lib', 'node_modules', 'baton', 'bin');
  fs.mkdirSync(packageBin, { recursive: true });
  fs.copyFileSync(LAUNCHER, path.join(packageBin, 'baton'));
  fs.chmodSync(path.join(packageBin, 'baton'), 0o755);
  fs.symlinkSync('../lib/node_modules/baton/bin/baton', path.join(binDir, 'baton'));
});

afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

async function launch(args: string[], extra: Record<string, string>): Promise<Record<string, string[]>> {
  const { NODE_EXTRA_CA_CERTS: _a, BATON_NODE_EXTRA_CA_CERTS: _b, ...rest } = process.env;
  const run = await runProcess('baton', args, {
    cwd: work,
    env: { ...rest, PATH: `${binDir}:${path.join(work, 'fake-bin')}:/usr/bin:/bin`, ...extra },
  });
  expect(run.code, run.stderr).toBe(0);
  const seen: Record<string, string[]> = {};
  for (const line of run.stdout.trim().split('\n')) {
    const [key, ...value] = line.split('=');
    (seen[key!] ??= []).push(value.join('='));
  }
  return seen;
}

describe('bin/baton (the installed launcher)', () => {
  const bundle = { NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt' };

  it.each([['hook'], ['task']])('baton %s: runs bin/baton.mjs with the CA bundle handed over, not parsed at start', async (command) => {
    const seen = await launch([command, 'claude-code', 'two words'], bundle);
    expect(seen.script!.map((script) => path.resolve(script))).toEqual([PACKAGE_SCRIPT()]);
    expect(seen.arg).toEqual([command, 'claude-code', 'two words']);
    expect(seen.extra).toEqual(['(unset)']);
    expect(seen.handed).toEqual(['/etc/ssl/certs/ca-certificates.crt']);
  });

  it.each([['worker'], ['start'], ['init'], ['--version']])('baton %s: the environment as it is', async (command) => {
    const seen = await launch([command], bundle);
    expect(seen.script!.map((script) => path.resolve(script))).toEqual([PACKAGE_SCRIPT()]);
    expect(seen.arg).toEqual([command]);
    expect(seen.extra).toEqual(['/etc/ssl/certs/ca-certificates.crt']);
    expect(seen.handed).toEqual(['(unset)']);
  });

  it('without a bundle, hands nothing over', async () => {
    const seen = await launch(['hook', 'codex'], {});
    expect(seen.extra).toEqual(['(unset)']);
    expect(seen.handed).toEqual(['(unset)']);
  });

  it('is what package.json installs as `baton`, and POSIX sh as dash runs it', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(pkg.bin).toEqual({ baton: 'bin/baton' });
    expect(fs.readFileSync(LAUNCHER, 'utf8').split('\n')[0]).toBe('#!/bin/sh');
    expect(fs.statSync(LAUNCHER).mode & 0o111).toBe(0o111);
  });
});
