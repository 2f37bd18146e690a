import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/processes.ts';
import { NO_REDIS_FOR_TESTS, startPrivateRedis } from '../support/redisServer.ts';

// `bash scripts/setup.sh` on a machine that lacks redis-server, redis-cli, git, openssl, unshare and ip: with PATH pointing at a
// directory of stand-ins, it must ask apt-get for exactly what is missing, through sudo only when
// not root, and say what to do when it cannot install. `.ci/run` must use it, and the test suite
// must name it when Redis is missing.

const SETUP = path.join(PROJECT_ROOT, 'scripts', 'setup.sh');
const CHROMIUM_MISSING = !fs.existsSync('/usr/bin/chromium');
const made: string[] = [];

afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A PATH with node, the few tools the script uses, and stand-ins that log their arguments. */
function fakeMachine(options: { uid: number; aptGet: boolean; sudo: boolean }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-setup-'));
  made.push(dir);
  const bin = path.join(dir, 'bin');
  const log = path.join(dir, 'calls.log');
  fs.mkdirSync(bin);
  fs.symlinkSync(process.execPath, path.join(bin, 'node'));
  for (const tool of ['dirname', 'env']) fs.symlinkSync(`/usr/bin/${tool}`, path.join(bin, tool));
  const script = (name: string, body: string) => fs.writeFileSync(path.join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  script('id', `echo ${options.uid}`);
  if (options.aptGet) script('apt-get', `echo "apt-get $*" >> '${log}'`);
  if (options.sudo) script('sudo', `echo "sudo $*" >> '${log}'\nexec "$@"`);
  const run = spawnSync('/bin/bash', [SETUP], {
    env: { PATH: bin, HOME: dir, BATON_SETUP_SKIP_NPM: '1' },
    encoding: 'utf8',
    timeout: 20_000,
  });
  const calls = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : [];
  return { run, calls };
}

const expectedPackages = [
  'redis-server',
  'git',
  'redis-tools',
  'openssl',
  'util-linux',
  'iproute2',
  ...(CHROMIUM_MISSING ? ['chromium'] : []),
].join(' ');

describe('scripts/setup.sh', () => {
  it('as a user: installs exactly what is missing with sudo apt-get', () => {
    const { run, calls } = fakeMachine({ uid: 1000, aptGet: true, sudo: true });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(`setup: installing ${expectedPackages} (with sudo)`);
    expect(calls).toEqual([
      'sudo apt-get update -qq',
      'apt-get update -qq',
      `sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${expectedPackages}`,
      `apt-get install -y -qq --no-install-recommends ${expectedPackages}`,
    ]);
  });

  it('as root: no sudo', () => {
    const { run, calls } = fakeMachine({ uid: 0, aptGet: true, sudo: false });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(`setup: installing ${expectedPackages}\n`);
    expect(calls).toEqual(['apt-get update -qq', `apt-get install -y -qq --no-install-recommends ${expectedPackages}`]);
  });

  it('without apt-get, or as a user without sudo: names what is missing and exits 1', () => {
    const noApt = fakeMachine({ uid: 1000, aptGet: false, sudo: true });
    expect(noApt.run.status).toBe(1);
    expect(noApt.run.stderr).toContain(`setup: missing: ${expectedPackages}; this script installs them with apt-get (Debian/Ubuntu)`);
    expect(noApt.calls).toEqual([]);
    const noSudo = fakeMachine({ uid: 1000, aptGet: true, sudo: false });
    expect(noSudo.run.status).toBe(1);
    expect(noSudo.run.stderr).toContain(`setup: missing: ${expectedPackages}; run this script as root, or install sudo`);
    expect(noSudo.calls).toEqual([]);
  });

  it('is what .ci/run runs first, before check-standalone and npm test', () => {
    const steps = fs
      .readFileSync(path.join(PROJECT_ROOT, '.ci', 'run'), 'utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('#') && !/^(set|cd|export) /.test(line));
    expect(steps).toEqual(['bash scripts/setup.sh', 'node scripts/check-standalone.mjs', 'npm test']);
    expect(fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8')).toContain('bash scripts/setup.sh');
  });
});

describe('the test suite without redis-server', () => {
  const savedPath = process.env.PATH;
  afterEach(() => {
    process.env.PATH = savedPath;
  });

  it('fails with a message naming bash scripts/setup.sh', async () => {
    process.env.PATH = '/nonexistent';
    await expect(startPrivateRedis()).rejects.toThrow(NO_REDIS_FOR_TESTS);
    expect(NO_REDIS_FOR_TESTS).toContain('bash scripts/setup.sh');
  });
});
