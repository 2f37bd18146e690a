import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkoutRecord } from '../../src/queue/checkoutId.ts';
import { checkoutFile } from '../../src/base/batonDir.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { fileURLToPath } from 'node:url';

const repoPath = (relative: string) => fileURLToPath(new URL(`../../${relative}`, import.meta.url));

// A checkout's identity: a random id kept in <gitdir>/baton/checkout.json, created once (even by
// racing processes), kept by a move, renewed by a copy, shared by two views of one checkout.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-checkout-')));
  dirs.push(dir);
  return dir;
}

function checkoutAt(dir: string): string {
  fs.mkdirSync(path.join(dir, '.git'), { recursive: true });
  return dir;
}

const recorded = (root: string) => JSON.parse(fs.readFileSync(checkoutFile(root), 'utf8'));

describe('checkout identity', () => {
  it('is created on first use with id, root, host and createdAt, then read back unchanged', () => {
    const root = checkoutAt(path.join(scratch(), 'app'));
    const first = checkoutRecord(root);
    expect(first).toMatchObject({ v: 1, id: expect.stringMatching(/^[0-9a-f]{16}$/), root, host: os.hostname() });
    expect(Date.parse(first.createdAt)).not.toBeNaN();
    expect(recorded(root)).toEqual(first);
    expect(checkoutRecord(root)).toEqual(first);
    expect(fs.readdirSync(path.dirname(checkoutFile(root)))).toEqual(['checkout.json']);
  });

  it('two checkouts at the same path on two machines get different ids (simulated: same path, recreated)', () => {
    const base = scratch();
    const root = checkoutAt(path.join(base, 'app'));
    const machineA = repoIdentity(root);
    fs.renameSync(root, path.join(base, 'machine-a-app'));
    checkoutAt(root);
    const machineB = repoIdentity(root);
    expect(machineB.root).toBe(machineA.root);
    expect(machineB.id).not.toBe(machineA.id);
  });

  it('racing processes agree on one id', async () => {
    const root = checkoutAt(path.join(scratch(), 'app'));
    const go = path.join(path.dirname(root), 'go');
    // Each process loads, says ready, waits for the starting gun, then asks for the identity.
    const script = `import fs from 'node:fs'; import { repoIdentity } from ${JSON.stringify(repoPath('src/queue/checkoutId.ts'))};
      process.stdout.write('ready\\n'); while (!fs.existsSync(${JSON.stringify(go)})) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1);
      process.stdout.write(repoIdentity(${JSON.stringify(root)}).id);`;
    let ready = 0;
    const children = Array.from(
      { length: 6 },
      () =>
        new Promise<string>((resolve, reject) => {
          const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
            cwd: repoPath('.'),
            stdio: ['ignore', 'pipe', 'inherit'],
          });
          let out = '';
          child.stdout.on('data', (chunk) => {
            out += chunk;
            if (out.startsWith('ready\n') && !(child as { counted?: boolean }).counted) {
              (child as { counted?: boolean }).counted = true;
              ready += 1;
              if (ready === 6) fs.writeFileSync(go, '');
            }
          });
          child.on('exit', (code) => (code === 0 ? resolve(out.slice('ready\n'.length)) : reject(new Error(`exit ${code}`))));
        }),
    );
    const ids = await Promise.all(children);
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).toBe(recorded(root).id);
  });

  it('a moved checkout keeps its id and records its new root', () => {
    const base = scratch();
    const before = checkoutAt(path.join(base, 'old'));
    const { id } = checkoutRecord(before);
    const after = path.join(base, 'new');
    fs.renameSync(before, after);
    expect(checkoutRecord(after)).toMatchObject({ id, root: after, movedFrom: before });
    expect(recorded(after)).toMatchObject({ id, root: after });
  });

  it('a copied checkout gets a new id; the original keeps its own', () => {
    const base = scratch();
    const original = checkoutAt(path.join(base, 'app'));
    const { id } = checkoutRecord(original);
    const copy = path.join(base, 'app-copy');
    fs.cpSync(original, copy, { recursive: true });
    const copied = checkoutRecord(copy);
    expect(copied.id).not.toBe(id);
    expect(copied).toMatchObject({ root: copy, copiedFrom: original });
    expect(checkoutRecord(original).id).toBe(id);
    expect(recorded(original)).toMatchObject({ id, root: original });
  });

  it('one checkout seen through two paths (same file) keeps one id and is not rewritten', () => {
    const base = scratch();
    const real = checkoutAt(path.join(base, 'app'));
    const { id } = checkoutRecord(real);
    const before = fs.readFileSync(checkoutFile(real), 'utf8');
    // A second view of the same .git, as a bind mount or a container's mount of a host directory gives.
    const view = path.join(base, 'view');
    fs.mkdirSync(view);
    fs.symlinkSync(path.join(real, '.git'), path.join(view, '.git'));
    expect(checkoutRecord(view)).toMatchObject({ id, root: view });
    expect(fs.readFileSync(checkoutFile(real), 'utf8')).toBe(before);
  });

  it('a re-clone (a new .git) gets a new id', () => {
    const root = checkoutAt(path.join(scratch(), 'app'));
    const { id } = checkoutRecord(root);
    fs.rmSync(path.join(root, '.git'), { recursive: true });
    checkoutAt(root);
    expect(checkoutRecord(root).id).not.toBe(id);
  });

  it('an unreadable checkout file is reported with what to do', () => {
    const root = checkoutAt(path.join(scratch(), 'app'));
    fs.mkdirSync(path.dirname(checkoutFile(root)), { recursive: true });
    fs.writeFileSync(checkoutFile(root), '{"id": "nope"');
    expect(() => checkoutRecord(root)).toThrow(
      `${checkoutFile(root)} is not valid JSON; remove it to give this checkout a new id (its queued events stay on the old queue)`,
    );
  });
});
