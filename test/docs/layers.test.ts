import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/processes.ts';

// The dependency rules of docs/architecture.md "Layers", checked on the imports of src/: each layer
// imports only the layers below it, and what baton knows about one agent client stays in its folder
// of src/clients/.

const SRC = path.join(PROJECT_ROOT, 'src');

/** Which other layers (top-level folders of src/) each layer may import. */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  base: [],
  clients: [],
  core: ['base', 'clients'],
  runs: ['base', 'core'],
  fingerprint: ['base', 'core'],
  queue: ['base', 'core'],
  redisServer: [],
  workers: ['base', 'core', 'queue', 'runs'],
  hooks: ['base', 'clients', 'core', 'queue'],
  dashboard: ['base', 'core', 'queue', 'runs'],
  demo: ['clients', 'core'],
  install: ['base', 'clients', 'core'],
  cli: ['base', 'clients', 'core', 'dashboard', 'demo', 'fingerprint', 'hooks', 'install', 'queue', 'redisServer', 'runs', 'workers'],
};

function sourceFiles(dir: string = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The project modules a file imports (static and dynamic, types included), relative to src/. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)'(\.{1,2}\/[^']+)'/gm)].map((match) => path.relative(SRC, path.resolve(path.dirname(file), match[1]!)));
}

const layerOf = (relative: string) => relative.split(path.sep)[0]!;

describe('docs/architecture.md "Layers"', () => {
  const files = sourceFiles();

  it('every folder of src/ is a layer with its rule', () => {
    const layers = fs.readdirSync(SRC, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect(layers.sort()).toEqual(Object.keys(ALLOWED).sort());
  });

  it('dependencies point one way: a layer imports only the layers below it', () => {
    const offenders: string[] = [];
    let checked = 0;
    for (const file of files) {
      const from = layerOf(path.relative(SRC, file));
      for (const target of importsOf(file)) {
        checked += 1;
        const to = layerOf(target);
        if (to !== from && !ALLOWED[from]?.includes(to)) offenders.push(`${path.relative(PROJECT_ROOT, file)} imports src/${target}`);
      }
    }
    expect(offenders).toEqual([]);
    expect(checked).toBeGreaterThan(300);
  });

  it('core reads only the client registry and the lifecycle facts of src/clients/', () => {
    const reached = new Set(files.filter((file) => layerOf(path.relative(SRC, file)) === 'core').flatMap(importsOf).filter((target) => layerOf(target) === 'clients'));
    expect([...reached].sort()).toEqual([path.join('clients', 'facts.ts'), path.join('clients', 'registry.ts')]);
  });

  it("the agent clients' ids are written only in their folders of src/clients/", () => {
    const naming = files.filter((file) => /'(claude-code|codex)'|"(claude-code|codex)"/.test(fs.readFileSync(file, 'utf8'))).map((file) => path.relative(SRC, file));
    expect(naming.length).toBeGreaterThan(0);
    expect(naming.filter((file) => !file.startsWith(path.join('clients', '')))).toEqual([]);
  });

  it('no source file is over 450 lines', () => {
    const long = files.map((file) => [path.relative(PROJECT_ROOT, file), fs.readFileSync(file, 'utf8').split('\n').length - 1] as const).filter(([, lines]) => lines > 450);
    expect(long).toEqual([]);
  });
});
