import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/processes.ts';

// The dependency rules of docs/architecture.md "Layers", checked on the imports of src/: each layer
// imports only the layers its rule names, no file is part of an import cycle, and what baton knows
// about one agent client stays in its folder of src/clients/.

const SRC = path.join(PROJECT_ROOT, 'src');

/**
 * Which other layers (top-level folders of src/) each layer may import. base imports nothing of
 * baton; core (the engine) imports no read model, no installer and no command.
 */
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
  return [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)'(\.{1,2}\/[^']+)'/gm)].map((match) =>
    path.relative(SRC, path.resolve(path.dirname(file), match[1]!)),
  );
}

const layerOf = (relative: string) => relative.split(path.sep)[0]!;

/** The import cycles of a graph (file -> files it imports), each as the files of one strongly connected component. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm, iteratively: a component of more than one file, or a file that imports itself, is a cycle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  for (const root of graph.keys()) {
    if (index.has(root)) continue;
    const work: { node: string; edges: readonly string[]; at: number }[] = [];
    const enter = (node: string) => {
      index.set(node, next);
      low.set(node, next);
      next += 1;
      stack.push(node);
      onStack.add(node);
      work.push({ node, edges: graph.get(node) ?? [], at: 0 });
    };
    enter(root);
    while (work.length > 0) {
      const frame = work.at(-1)!;
      if (frame.at < frame.edges.length) {
        const target = frame.edges[frame.at]!;
        frame.at += 1;
        if (!graph.has(target)) continue;
        if (!index.has(target)) enter(target);
        else if (onStack.has(target)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!));
        continue;
      }
      work.pop();
      const parent = work.at(-1);
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      for (;;) {
        const member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
        if (member === frame.node) break;
      }
      if (component.length > 1 || (graph.get(frame.node) ?? []).includes(frame.node)) found.push(component.sort());
    }
  }
  return found;
}

describe('docs/architecture.md "Layers"', () => {
  const files = sourceFiles();

  it('every folder of src/ is a layer with its rule', () => {
    const layers = fs
      .readdirSync(SRC, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
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

  it('no file of src/ is part of an import cycle (type imports included)', () => {
    const graph = new Map(files.map((file) => [path.relative(SRC, file), importsOf(file)] as const));
    expect(
      cycles(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
          ['d', ['a']],
        ]),
      ),
    ).toEqual([['a', 'b', 'c']]);
    expect(cycles(graph)).toEqual([]);
  });

  it('base imports nothing of baton, and only the commands import the installer', () => {
    const reach = (test: (from: string) => boolean) => files.filter((file) => test(layerOf(path.relative(SRC, file)))).flatMap(importsOf);
    expect(reach((layer) => layer === 'base').filter((target) => layerOf(target) !== 'base')).toEqual([]);
    expect(reach((layer) => layer !== 'cli' && layer !== 'install').filter((target) => layerOf(target) === 'install')).toEqual([]);
    expect(reach((layer) => layer === 'core').filter((target) => ['runs', 'install', 'cli'].includes(layerOf(target)))).toEqual([]);
  });

  it('core reads only the client registry and the lifecycle facts of src/clients/', () => {
    const reached = new Set(
      files
        .filter((file) => layerOf(path.relative(SRC, file)) === 'core')
        .flatMap(importsOf)
        .filter((target) => layerOf(target) === 'clients'),
    );
    expect([...reached].sort()).toEqual([path.join('clients', 'facts.ts'), path.join('clients', 'registry.ts')]);
  });

  it("the agent clients' ids are written only in their folders of src/clients/", () => {
    const naming = files
      .filter((file) => /'(claude-code|codex)'|"(claude-code|codex)"/.test(fs.readFileSync(file, 'utf8')))
      .map((file) => path.relative(SRC, file));
    expect(naming.length).toBeGreaterThan(0);
    expect(naming.filter((file) => !file.startsWith(path.join('clients', '')))).toEqual([]);
  });

  it('no source file is over 450 lines', () => {
    const long = files
      .map((file) => [path.relative(PROJECT_ROOT, file), fs.readFileSync(file, 'utf8').split('\n').length - 1] as const)
      .filter(([, lines]) => lines > 450);
    expect(long).toEqual([]);
  });
});
