import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, runBaton } from '../support/processes.ts';

// `baton hook` starts for every agent event and loads dist/hook.mjs, a bundle of its own
// (scripts/build.mjs). What it may contain is what keeps it near the floor of bench/hook.mjs:
// no Redis client library, no BullMQ, no full zod. Checked on the built file (npm run build).

const hookBundle = path.join(PROJECT_ROOT, 'dist', 'hook.mjs');

describe('dist/hook.mjs', () => {
  const text = fs.readFileSync(hookBundle, 'utf8');
  const modules = [...text.matchAll(/^\/\/ ((?:node_modules|src)\/\S+)$/gm)].map((match) => match[1]!);

  it('holds the hook, its RESP transport and BullMQ add script, and no ioredis, BullMQ runtime or full zod', () => {
    expect(modules).toEqual(expect.arrayContaining(['src/cli/hook.ts', 'src/queue/resp.ts', 'src/queue/hookTransport.ts', 'src/queue/spool.ts']));
    const packages = modules.filter((module) => module.startsWith('node_modules/'));
    expect(packages.filter((module) => !/^node_modules\/(zod\/v4\/(mini|core)\/|bullmq\/dist\/cjs\/(scripts\/addStandardJob-\d+|version)\.js$)/.test(module))).toEqual([]);
    expect(modules).not.toContain('src/queue/client.ts');
    expect(modules).not.toContain('src/core/runSchema.ts');
  });

  it('loads what it imports lazily from the main bundle, and those files exist', () => {
    const lazy = [...text.matchAll(/import\("(\.\/lib\/[^"]+)"\)/g)].map((match) => match[1]!);
    expect(lazy).toEqual(expect.arrayContaining(['./lib/queue-client.mjs', './lib/core-runSchema.mjs']));
    for (const file of lazy) expect(fs.existsSync(path.join(PROJECT_ROOT, 'dist', file))).toBe(true);
  });

  it('bin/baton.mjs runs it for `baton hook` and the main bundle for everything else', async () => {
    const hookHelp = await runBaton(['hook', '--help']);
    expect(hookHelp.code).toBe(0);
    expect(hookHelp.stdout).toMatch(/^usage: baton hook <claude-code\|codex>/);
    const mainHelp = await runBaton(['--help']);
    expect(mainHelp.code).toBe(0);
    expect(mainHelp.stdout).toMatch(/^usage: baton <command> \[options\]/);
  });
});
