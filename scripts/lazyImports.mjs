// Lazy imports (`await import(...)`) in the bundle, checked two ways (docs/architecture.md "Testing"):
// at build time from esbuild's metafile (scripts/build.mjs), and at test time by loading every lazily
// imported module of dist/ on Node, Bun and Deno (test/cli/bundleImports.test.ts). The class of bug:
// a split ESM bundle turns a lazily imported CommonJS module into a chunk whose only export is
// `default`, so `const { Queue } = await import('bullmq')` gets undefined there, while the same code
// works from the sources (Node's loader finds CommonJS named exports; esbuild's chunk does not).
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Outputs of a split build that exist because code imports a CommonJS module lazily, as
 * "<module> (imported lazily by <importers>)". Import such a package statically from a project
 * module, and that module lazily.
 */
export function lazyCommonJsImports(metafile) {
  const importers = (output) =>
    Object.entries(metafile.outputs)
      .filter(([, { imports }]) => imports.some((entry) => entry.kind === 'dynamic-import' && entry.path === output))
      .map(
        ([file, { entryPoint, inputs }]) =>
          entryPoint ??
          (Object.keys(inputs)
            .filter((input) => input.startsWith('src/'))
            .join(', ') ||
            file),
      );
  return Object.entries(metafile.outputs)
    .filter(([, { entryPoint }]) => entryPoint && metafile.inputs[entryPoint]?.format === 'cjs')
    .map(([output, { entryPoint }]) => `${entryPoint} (imported lazily by ${importers(output).join('; ') || 'an entry point'})`);
}

const LAZY_IMPORT = /import\(\s*"([^"]+)"\s*\)/g;
const DESTRUCTURED = /\{([^{}]*)\}\s*=\s*await\s+import\(\s*"([^"]+)"\s*\)/g;

/**
 * Every lazy import with a literal specifier in the .mjs files under `dir`: the importing file, the
 * specifier, and the names the code destructures from it (`const { a, b: c } = await import(...)`
 * gives a and b; other forms give none, and the module must then at least export more than `default`).
 */
export function lazyImportSites(dir) {
  const sites = [];
  for (const file of fs
    .readdirSync(dir, { recursive: true })
    .map(String)
    .filter((name) => name.endsWith('.mjs'))
    .sort()) {
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    const destructured = new Map();
    for (const [, names, spec] of text.matchAll(DESTRUCTURED)) {
      const list = names
        .split(',')
        .map((name) => name.split(':')[0].trim())
        .filter(Boolean);
      destructured.set(spec, [...new Set([...(destructured.get(spec) ?? []), ...list])]);
    }
    const specs = new Set([...text.matchAll(LAZY_IMPORT)].map(([, spec]) => spec));
    for (const spec of specs) sites.push({ file: file.split(path.sep).join('/'), spec, names: destructured.get(spec) ?? [] });
  }
  return sites;
}

/**
 * Loads each site's module the way the importing file would and reports, per site, the names it
 * lacks, whether it exports only `default`, or the error loading it threw.
 */
export async function checkLazyImports(dir) {
  const reports = [];
  for (const site of lazyImportSites(dir)) {
    const target = site.spec.startsWith('.') ? new URL(site.spec, pathToFileURL(path.join(dir, site.file))).href : site.spec;
    try {
      const namespace = await import(target);
      const exported = Object.keys(namespace);
      reports.push({
        ...site,
        missing: site.names.filter((name) => namespace[name] === undefined),
        defaultOnly: exported.length === 1 && exported[0] === 'default',
      });
    } catch (error) {
      reports.push({ ...site, error: String(error?.message ?? error) });
    }
  }
  return reports;
}

// `<runtime> scripts/lazyImports.mjs <dir>`: prints checkLazyImports(dir) as JSON.
if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const reports = await checkLazyImports(path.resolve(process.argv[2] ?? 'dist'));
  process.stdout.write(`${JSON.stringify(reports)}\n`);
}
