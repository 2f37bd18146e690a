import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hexDigest, randomHex, randomId } from '../../src/base/digest.ts';
import { PROJECT_ROOT } from '../support/processes.ts';

// Event ids and the BullMQ script sha come from hexDigest: on Node SHA-256 in JavaScript and SHA-1
// from node:crypto, under Bun its native hasher.
// Both must give the same digests, or a hook run by Bun would name events differently.

const samples = [
  '',
  'abc',
  JSON.stringify(['claude-code', 'start', 'session', 'child', 'agent-infra-lifecycle-executor', null]),
  'clé ✓ 子 🎉',
  'x'.repeat(1_000), // several SHA-256 blocks (JavaScript on Node, src/base/digest.ts)
];

describe('hexDigest', () => {
  it('is sha1 / sha256 in hex, as node:crypto computes them', () => {
    for (const sample of samples) {
      expect(hexDigest('sha256', sample)).toBe(createHash('sha256').update(sample).digest('hex'));
      expect(hexDigest('sha1', sample)).toBe(createHash('sha1').update(sample).digest('hex'));
    }
    expect(randomHex(8)).toMatch(/^[0-9a-f]{16}$/);
    expect(randomHex(8)).not.toBe(randomHex(8));
    expect(randomId()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('gives the same digests under Bun (its native hasher)', () => {
    const bun = path.join(PROJECT_ROOT, 'node_modules', '.bin', 'bun');
    const script = `import { hexDigest } from ${JSON.stringify(path.join(PROJECT_ROOT, 'src/base/digest.ts'))};
const samples = ${JSON.stringify(samples)};
console.log(JSON.stringify(samples.map((s) => [hexDigest('sha256', s), hexDigest('sha1', s)])));`;
    const run = spawnSync(bun, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual(
      samples.map((sample) => [createHash('sha256').update(sample).digest('hex'), createHash('sha1').update(sample).digest('hex')]),
    );
  });
});

describe('the add script sha in the bundles', () => {
  it('is the sha1 of the script, computed at build time', async () => {
    const { addStandardJob } = await import('bullmq/dist/cjs/scripts/addStandardJob-9.js');
    const sha = createHash('sha1').update(addStandardJob.content).digest('hex');
    const bundle = fs.readFileSync(path.join(PROJECT_ROOT, 'dist', 'hook.mjs'), 'utf8');
    expect(bundle).toMatch(new RegExp(`ADD_JOB_SCRIPT_SHA = [^;]*"${sha}"`));
  });
});
