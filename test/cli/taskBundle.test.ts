import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtBundle } from '../support/bundles.ts';
import { PROJECT_ROOT, runBaton } from '../support/processes.ts';

// `baton task` runs for every lifecycle step an agent takes and loads dist/task.mjs, a bundle of its
// own (scripts/build.mjs): one file with the argument parsing, the zod/mini checks, the raw RESP
// transport and the spool, so a mutating intent neither walks the main bundle's chunk graph nor
// parses zod's shared core (~300 KB). Checked on the built file (npm run build).

describe('dist/task.mjs', () => {
  const { text, modules } = builtBundle('task.mjs');

  it('holds the command, its RESP transport, the spool and the result schema, and no ioredis, BullMQ runtime, full zod or engine', () => {
    expect(modules).toEqual(
      expect.arrayContaining([
        'src/cli/task.ts',
        'src/cli/taskArgs.ts',
        'src/queue/resp.ts',
        'src/queue/hookTransport.ts',
        'src/queue/spool.ts',
        'src/core/runSchema.ts',
      ]),
    );
    const packages = modules.filter((module) => module.startsWith('node_modules/'));
    expect(
      packages.filter(
        (module) =>
          !/^node_modules\/(zod\/(v4\/(mini|core)\/|mini\/index\.js$|v4\/locales\/en\.js$)|bullmq\/dist\/cjs\/(scripts\/addStandardJob-\d+|version)\.js$|@noble\/hashes\/)/.test(
            module,
          ),
      ),
    ).toEqual([]);
    for (const heavy of ['src/queue/client.ts', 'src/core/engine.ts', 'src/workers/worker.ts', 'src/fingerprint/index.ts'])
      expect(modules).not.toContain(heavy);
    expect(text).not.toMatch(/from "\.\/chunks\//);
  });

  it('loads the ioredis client and the inline worker from the main bundle, the engine (read-only intents) from dist/task-engine.mjs, and those files exist', () => {
    const lazy = [...text.matchAll(/import\("(\.\/[^"]+)"\)/g)].map((match) => match[1]!);
    expect(lazy).toEqual(
      expect.arrayContaining(['./task-engine.mjs', './lib/queue-client.mjs', './lib/workers-worker.mjs', './lib/fingerprint-index.mjs']),
    );
    for (const file of lazy) expect(fs.existsSync(path.join(PROJECT_ROOT, 'dist', file))).toBe(true);
  });

  it('dist/task-engine.mjs is the engine in one file: zod/mini and yaml, no chunk of the main bundle, no ioredis or BullMQ', () => {
    const { text: engine, modules: inside } = builtBundle('task-engine.mjs');
    expect(inside).toEqual(expect.arrayContaining(['src/core/engine.ts', 'src/core/runStore.ts']));
    expect(
      inside.filter(
        (module) =>
          module.startsWith('node_modules/') &&
          !/^node_modules\/(zod\/(v4\/(mini|core)\/|mini\/index\.js$|v4\/locales\/en\.js$)|yaml\/|@noble\/hashes\/)/.test(module),
      ),
    ).toEqual([]);
    expect(engine).not.toMatch(/from "\.\/chunks\//);
    expect(engine).toMatch(/^export \{\n[^}]*\bapplyEvent,/m);
  });

  it('bin/baton.mjs runs it for `baton task`', async () => {
    const help = await runBaton(['task', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: baton task <task-ref\|auto> <intent>/);
    const usage = await runBaton(['task', '01', 'no-such-intent']);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stdout)).toMatchObject({ status: 'failed', error: { code: 'ORCHESTRATION_PAYLOAD_INVALID' } });
  });
});
