// Bundles the CLI (and everything it imports) into dist/ so that `baton` starts as plain
// JavaScript on Node, Bun and Deno without a TypeScript loader. Code splitting keeps commands lean:
// heavy modules (dashboard, fingerprints) load only when a command needs them.
//
// Two commands get a bundle of their own (bin/baton.mjs picks it), one file with only what the
// command imports statically:
// - `baton hook` (dist/hook.mjs) starts for every agent event;
// - `baton task` (dist/task.mjs) runs for every lifecycle step; a mutating intent needs the
//   argument parsing, the zod/mini checks and the hook's transport only (~40 % less CPU per call
//   than through the main bundle's chunks and zod's shared core, measured); its read-only intents
//   load the engine from a lean bundle of its own (dist/task-engine.mjs, `lazyLean`);
// - `baton fingerprint` (dist/fingerprint.mjs) is measured cold against git (bench/fingerprint.mjs):
//   without it, the command would load the main bundle's chunk graph and commander first.
// Each module such a command imports lazily (`await import(...)`: the hook's ioredis fallback, zod
// schemas and spawn check; the fingerprint's isomorphic-git pack reader), except the light ones
// listed in its `keepLazy`, is left out of its bundle and loaded from the main bundle instead, where
// it becomes an entry point (dist/lib/<name>.mjs). Why not one split build: esbuild would put the zod
// core that the hook's zod/mini shares with full zod into one chunk the hook loads at start-up
// (~650 KB, ~25 ms). The build fails if a lean bundle's static part pulls in a package it should not
// (see `packages`).
// The build also fails if any code imports a CommonJS module lazily: in the bundle that module
// would have only a `default` export (scripts/lazyImports.mjs; test/cli/bundleImports.test.ts loads
// every lazily imported module of dist/ and checks the names the code reads from it).
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { lazyCommonJsImports } from './lazyImports.mjs';
import { STAMP_FILE, sourceStamp } from './sourceStamp.mjs';

process.chdir(fileURLToPath(new URL('..', import.meta.url)));

/**
 * The lean bundles: entry, why it must stay small, the packages (and files of them) it may contain
 * (anything else must be a lazy import), and its lazy imports that stay in it (light, and needed on
 * every run).
 */
const LEAN_BUNDLES = {
  hook: {
    entry: 'src/cli/hookMain.ts',
    why: 'it starts for every agent event',
    packages: [
      /^node_modules\/zod\/v4\/(mini|core)\//, // zod/mini for the payload check (tree-shaken, ~30 KB)
      /^node_modules\/bullmq\/dist\/cjs\/(scripts\/addStandardJob-\d+|version)\.js$/, // BullMQ's add script (Lua text) and version
      /^node_modules\/@noble\/hashes\//, // SHA-256 of event ids in JavaScript: no node:crypto to load (src/base/digest.ts)
    ],
    keepLazy: ['src/queue/hookTransport.ts', 'src/queue/spool.ts'],
  },
  task: {
    entry: 'src/cli/taskMain.ts',
    why: 'an agent runs it for every lifecycle step',
    packages: [
      /^node_modules\/zod\/(v4\/(mini|core)\/|mini\/index\.js$|v4\/locales\/en\.js$)/, // zod/mini for the event and envelope checks, with its English messages (src/core/zodEnglish.ts)
      /^node_modules\/bullmq\/dist\/cjs\/(scripts\/addStandardJob-\d+|version)\.js$/, // BullMQ's add script (Lua text) and version
      /^node_modules\/@noble\/hashes\//, // SHA-256 of event ids (src/base/digest.ts)
    ],
    keepLazy: [
      'src/queue/hookTransport.ts',
      'src/queue/spool.ts',
      'src/queue/endpoint.ts',
      'src/queue/envelopeSchema.ts',
      'src/core/runSchema.ts',
    ],
    // Read-only intents (route, status) read the run files with the engine: from a file of its own,
    // not through the main bundle's chunk graph and zod's shared core (~60 ms less per call).
    lazyLean: { 'src/core/engine.ts': 'task-engine' },
  },
  'task-engine': {
    entry: 'src/core/engine.ts',
    why: '`baton task route` and `status` load it',
    packages: [
      /^node_modules\/zod\/(v4\/(mini|core)\/|mini\/index\.js$|v4\/locales\/en\.js$)/, // zod/mini, with its English messages
      /^node_modules\/yaml\//, // task.md front matter
      /^node_modules\/@noble\/hashes\//, // SHA-256 (src/base/digest.ts)
    ],
    keepLazy: [],
  },
  fingerprint: {
    entry: 'src/cli/fingerprintMain.ts',
    why: 'a cold `baton fingerprint` is measured against git',
    packages: [/^node_modules\/ignore\//], // gitignore matching
    keepLazy: [],
  },
};

// The sha1 of BullMQ's add script, by which the hook runs it (EVALSHA), computed here once rather
// than by every hook: hashing 26 KB of Lua means loading node:crypto, ~3 ms of a fresh process
// (src/queue/addJob.ts).
const { addStandardJob } = createRequire(import.meta.url)('bullmq/dist/cjs/scripts/addStandardJob-9.js');

/**
 * Zod's `z.locales` namespace re-exports every language's error messages (~370 KB of the ~670 KB
 * zod chunk, parsed by every command that validates with zod). baton never switches locale: the
 * English one zod registers itself (zod/v4/classic/schemas.js imports locales/en.js directly) is
 * all it uses, so the namespace is built with English alone.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]v4[\\/](classic|core|mini)[\\/][^\\/]+\.js$/.test(args.importer)
        ? { path: path.join(path.dirname(args.importer), '..', 'locales', 'index.js'), namespace: 'zod-english-only' }
        : undefined,
    );
    pluginBuild.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, (args) => ({
      contents: "export { default as en } from './en.js';\n",
      resolveDir: path.dirname(args.path),
      loader: 'js',
    }));
  },
};

/**
 * The OpenTelemetry packages (the worker's traces, src/workers/otel.ts) from their ES module builds
 * (`module` in their package.json) rather than CommonJS: their resource detectors load the
 * machine-id readers with `import()`, which in the CommonJS build would become lazily imported
 * CommonJS chunks (refused above, scripts/lazyImports.mjs); as ES modules they are sound chunks.
 */
const openTelemetryEsm = {
  name: 'opentelemetry-esm',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^@opentelemetry\/[^/]+$/ }, (args) => {
      for (let dir = args.resolveDir; ; dir = path.dirname(dir)) {
        const manifest = path.join(dir, 'node_modules', args.path, 'package.json');
        let fields;
        try {
          fields = JSON.parse(readFileSync(manifest, 'utf8'));
        } catch {
          if (path.dirname(dir) === dir) return undefined;
          continue;
        }
        // A package with an exports map (the API) gives esbuild its ES module build itself.
        return fields.module && !fields.exports ? { path: path.join(path.dirname(manifest), fields.module) } : undefined;
      }
    });
  },
};

const common = {
  bundle: true,
  define: { BATON_ADD_JOB_SCRIPT_SHA: JSON.stringify(createHash('sha1').update(addStandardJob.content).digest('hex')) },
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Maps are written beside the bundles (dist/**/*.map: decoding a stack trace from a checkout's
  // build) and named by none: the package ships dist/**/*.mjs only (11 MB of maps stay out), and a
  // bundle must not point at a file the package does not have (test/cli/bundleSourceMaps.test.ts).
  sourcemap: 'external',
  logLevel: 'warning',
  metafile: true,
  // CommonJS dependencies call require() for built-ins; give the ESM bundle a real one.
  banner: {
    js: "import { createRequire as __batonCreateRequire } from 'node:module'; const require = __batonCreateRequire(import.meta.url);",
  },
};

/**
 * Turns a lean bundle's lazy imports of project modules into imports of ./lib/<name>.mjs, recording
 * them, or of another lean bundle (`lazyLean`: source → bundle name).
 */
function lazyImportsFromMainBundle(lazyModules, keepLazy, lazyLean = {}) {
  return {
    name: 'lean-bundle-lazy-imports',
    setup(pluginBuild) {
      pluginBuild.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind !== 'dynamic-import' || args.path.startsWith('node:')) return undefined;
        if (!args.path.startsWith('.')) {
          return {
            errors: [
              {
                text: `a lean bundle imports the package '${args.path}' lazily from ${args.importer}: import a project module that imports it instead`,
              },
            ],
          };
        }
        const source = path.relative('src', path.resolve(path.dirname(args.importer), args.path));
        if (keepLazy.includes(`src/${source.split(path.sep).join('/')}`)) return undefined;
        const lean = lazyLean[`src/${source.split(path.sep).join('/')}`];
        if (lean) return { path: `./${lean}.mjs`, external: true };
        const name = source.replace(/\.ts$/, '').split(path.sep).join('-');
        lazyModules.set(name, `src/${source.split(path.sep).join('/')}`);
        return { path: `./lib/${name}.mjs`, external: true };
      });
    },
  };
}

// Build next to dist/ and swap it in with renames, so a process starting meanwhile never finds
// dist/ half-written (tests and workers start `bin/baton.mjs` while someone rebuilds).
const staging = `dist.staging-${process.pid}`;
const retired = `dist.retired-${process.pid}`;
rmSync(staging, { recursive: true, force: true });
// Taken before the build reads the sources: an edit made while it runs leaves the stamp stale.
const stamp = sourceStamp('.');
try {
  const lazyModules = new Map();
  for (const [name, lean] of Object.entries(LEAN_BUNDLES)) {
    const result = await build({
      ...common,
      entryPoints: { [name]: lean.entry },
      outdir: staging,
      splitting: false,
      outExtension: { '.js': '.mjs' },
      plugins: [zodEnglishOnly, lazyImportsFromMainBundle(lazyModules, lean.keepLazy, lean.lazyLean)],
    });
    // What ends up in the file (the metafile's inputs also list what tree shaking dropped).
    const contents = Object.entries(result.metafile.outputs[`${staging}/${name}.mjs`].inputs)
      .filter(([, { bytesInOutput }]) => bytesInOutput > 0)
      .map(([input]) => input);
    const strays = contents.filter((input) => input.startsWith('node_modules/') && !lean.packages.some((allowed) => allowed.test(input)));
    if (strays.length > 0) {
      throw new Error(
        `dist/${name}.mjs must stay small (${lean.why}), but it would contain:\n  ${strays.join('\n  ')}\nImport what needs them lazily (await import(...)), or extend LEAN_BUNDLES.${name}.packages in scripts/build.mjs.`,
      );
    }
  }
  const main = await build({
    ...common,
    entryPoints: { baton: 'src/cli/main.ts', ...Object.fromEntries([...lazyModules].map(([name, source]) => [`lib/${name}`, source])) },
    outdir: staging,
    splitting: true,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    plugins: [zodEnglishOnly, openTelemetryEsm],
  });
  const lazyCommonJs = lazyCommonJsImports(main.metafile);
  if (lazyCommonJs.length > 0) {
    throw new Error(
      `a CommonJS module imported lazily (await import(...)) has only a 'default' export in the bundle, so the names read from it are undefined:\n  ${lazyCommonJs.join('\n  ')}\n` +
        'Import the package statically from a project module and import that module lazily (see src/fingerprint/packedObjects.ts).',
    );
  }
  // What the bundles were built from, for the tests' check of a stale dist/ (scripts/sourceStamp.mjs).
  writeFileSync(path.join(staging, STAMP_FILE), `${JSON.stringify({ sources: stamp })}\n`);
  if (process.env.BATON_BUILD_VERBOSE) {
    const sizes = Object.keys(LEAN_BUNDLES).map((name) => `dist/${name}.mjs: ${statSync(path.join(staging, `${name}.mjs`)).size} bytes`);
    process.stderr.write(`${sizes.join('; ')}; lazy from the main bundle: ${[...lazyModules.values()].join(', ')}\n`);
  }
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
