// Bundles the CLI (and everything it imports) into dist/ so that `baton` starts as plain
// JavaScript on Node, Bun and Deno without a TypeScript loader. Code splitting keeps the hook
// path lean: heavy modules (dashboard, fingerprints) load only when a command needs them.
import { build } from 'esbuild';
import { renameSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

process.chdir(fileURLToPath(new URL('..', import.meta.url)));

// Build next to dist/ and swap it in with renames, so a process starting meanwhile never finds
// dist/ half-written (tests and workers start `bin/baton.mjs` while someone rebuilds).
const staging = `dist.staging-${process.pid}`;
const retired = `dist.retired-${process.pid}`;
rmSync(staging, { recursive: true, force: true });
try {
  await build({
    entryPoints: { baton: 'src/cli/main.ts' },
    outdir: staging,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    sourcemap: 'linked',
    logLevel: 'warning',
    // CommonJS dependencies call require() for built-ins; give the ESM bundle a real one.
    banner: { js: "import { createRequire as __batonCreateRequire } from 'node:module'; const require = __batonCreateRequire(import.meta.url);" },
  });
} catch (error) {
  rmSync(staging, { recursive: true, force: true });
  throw error;
}
try {
  renameSync('dist', retired);
} catch {
  // first build: nothing to retire
}
renameSync(staging, 'dist');
rmSync(retired, { recursive: true, force: true });
