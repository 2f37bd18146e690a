// Bundles the CLI (and everything it imports) into dist/ so that `baton` starts as plain
// JavaScript on Node, Bun and Deno without a TypeScript loader. Code splitting keeps the hook
// path lean: heavy modules (dashboard, fingerprints) load only when a command needs them.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: { baton: 'src/cli/main.ts' },
  outdir: 'dist',
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
