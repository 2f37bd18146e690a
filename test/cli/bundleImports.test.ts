import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { checkLazyImports, lazyCommonJsImports } from '../../scripts/lazyImports.mjs';
import type { LazyImportReport as Report } from '../../scripts/lazyImports.mjs';
import { DENO_DIR, PROJECT_ROOT, RUNTIMES, runProcess } from '../support/processes.ts';
import type { Runtime } from '../support/processes.ts';

// Every module the bundle imports lazily (`await import(...)`) must provide, in dist/, the names the
// code reads from it. In a split ESM bundle a lazily imported CommonJS module has only `default`
// (esbuild's interop), which the sources never show: `const { Queue } = await import('bullmq')`
// worked under tsx and vitest and threw `Queue is not a constructor` in every `baton task` timeout.
// scripts/build.mjs refuses such an import; this loads every lazily imported module of the built
// dist/ on Node, Bun and Deno and checks the names, and proves both checks catch the bug.

const DIST = path.join(PROJECT_ROOT, 'dist');
const CHECKER = path.join(PROJECT_ROOT, 'scripts', 'lazyImports.mjs');

async function reportsOn(runtime: Runtime, dir: string): Promise<Report[]> {
  const run = await runProcess(runtime.command, [...runtime.args, CHECKER, dir], { env: { ...process.env, DENO_DIR }, timeoutMs: 60_000 });
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Report[];
}

const broken = (reports: readonly Report[]) => reports.filter((report) => report.error || report.missing?.length || report.defaultOnly);

describe.each(['node', 'bun', 'deno'] as const)(
  'dist/: every lazily imported module loads on %s with the names its importer reads',
  (name) => {
    it('no load error, no missing name, no default-only module', async () => {
      const reports = await reportsOn(RUNTIMES[name], DIST);
      expect(broken(reports)).toEqual([]);
      // The parse found the imports that matter (a checker that finds nothing would pass).
      const sites = reports.map(({ file, spec, names }) => ({ file, spec, names }));
      expect(sites).toEqual(
        expect.arrayContaining([
          { file: 'hook.mjs', spec: './lib/queue-client.mjs', names: ['RepositoryQueueClient'] },
          { file: 'hook.mjs', spec: './lib/hooks-spawnCheck.mjs', names: ['checkSpawn'] },
          expect.objectContaining({
            // task.ts, in a chunk of its own since `task review` (headlessReview.ts) imports it too.
            file: expect.stringMatching(/^chunks\/(task|taskCommand|chunk)-/),
            spec: expect.stringMatching(/^\.\/hookTransport-[A-Z0-9]+\.mjs$/),
            names: ['connectHookQueue'],
          }),
          expect.objectContaining({ file: 'fingerprint.mjs', spec: './lib/fingerprint-packedObjects.mjs' }),
          { file: 'task.mjs', spec: './lib/queue-client.mjs', names: ['RepositoryQueueClient'] },
          expect.objectContaining({ file: 'task.mjs', spec: './task-engine.mjs' }),
          expect.objectContaining({ file: 'task.mjs', spec: './lib/workers-worker.mjs' }),
        ]),
      );
      expect(reports.length).toBeGreaterThan(30);
    }, 90_000);
  },
);

describe('the checks catch a lazily imported CommonJS module', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-lazy-cjs-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('at build time (metafile) and at load time (missing names), and pass the static re-export', async () => {
    // A CommonJS package, imported lazily as client.ts imported BullMQ, and the fix: a project
    // module that imports it statically, imported lazily.
    fs.mkdirSync(path.join(dir, 'node_modules', 'legacy-queue'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'node_modules', 'legacy-queue', 'package.json'), '{"name":"legacy-queue","main":"index.js"}\n');
    fs.writeFileSync(path.join(dir, 'node_modules', 'legacy-queue', 'index.js'), 'exports.Queue = class Queue {};\n');
    fs.writeFileSync(
      path.join(dir, 'lazy.mjs'),
      "export async function load() { const { Queue } = await import('legacy-queue'); return Queue; }\n",
    );
    fs.writeFileSync(path.join(dir, 'reexport.mjs'), "export { Queue } from 'legacy-queue';\n");
    fs.writeFileSync(
      path.join(dir, 'fixed.mjs'),
      "export async function load() { const { Queue } = await import('./reexport.mjs'); return Queue; }\n",
    );
    const bundle = (entry: string, outdir: string) =>
      build({
        absWorkingDir: dir,
        entryPoints: [entry],
        bundle: true,
        splitting: true,
        format: 'esm',
        platform: 'node',
        outdir,
        outExtension: { '.js': '.mjs' },
        metafile: true,
        logLevel: 'silent',
      });

    const bad = await bundle('lazy.mjs', 'bad');
    expect(lazyCommonJsImports(bad.metafile)).toEqual(['node_modules/legacy-queue/index.js (imported lazily by lazy.mjs)']);
    expect(broken(await checkLazyImports(path.join(dir, 'bad')))).toEqual([
      expect.objectContaining({ file: 'lazy.mjs', names: ['Queue'], missing: ['Queue'], defaultOnly: true }),
    ]);

    const good = await bundle('fixed.mjs', 'good');
    expect(lazyCommonJsImports(good.metafile)).toEqual([]);
    const reports = await checkLazyImports(path.join(dir, 'good'));
    expect(reports).toEqual([expect.objectContaining({ file: 'fixed.mjs', names: ['Queue'], missing: [], defaultOnly: false })]);
  });
});
