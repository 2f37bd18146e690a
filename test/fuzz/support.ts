import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';

// Shared pieces of the property-based tests: a snapshot of a directory tree (to prove that
// nothing outside the allowed places was touched), text mutations of valid documents, and the
// run budget (FUZZ_RUNS scales every property; the defaults keep the suite within CI time).

export const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || undefined;
/** Per-test timeout: generous when FUZZ_RUNS asks for long runs. */
export const FUZZ_TIMEOUT = RUNS ? 3_600_000 : 60_000;

/** fast-check parameters: `base` runs by default, FUZZ_RUNS when set (the documented `npm run chaos`). */
export function params(base: number): fc.Parameters<unknown> {
  return { numRuns: RUNS ?? base, ...(process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {}) };
}

export type TreeSnapshot = Map<string, string>;

/** Every file and symlink under `root` (relative path → content hash or link target). */
export function snapshotTree(root: string, skip: (relative: string) => boolean = () => false): TreeSnapshot {
  const result: TreeSnapshot = new Map();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const relative = path.relative(root, full);
      if (skip(relative)) continue;
      if (entry.isSymbolicLink()) result.set(relative, `link:${fs.readlinkSync(full)}`);
      else if (entry.isDirectory()) {
        result.set(`${relative}/`, 'dir');
        walk(full);
      } else result.set(relative, createHash('sha256').update(fs.readFileSync(full)).digest('hex'));
    }
  };
  walk(root);
  return result;
}

/** The paths that differ between two snapshots (added, removed or changed). */
export function changedPaths(before: TreeSnapshot, after: TreeSnapshot): string[] {
  const changed = new Set<string>();
  for (const [key, value] of before) if (after.get(key) !== value) changed.add(key);
  for (const key of after.keys()) if (!before.has(key)) changed.add(key);
  return [...changed].sort();
}

/** Edits of a text: insert, delete or replace a slice, duplicate or drop a line, truncate. */
export function mutatedText(base: string): fc.Arbitrary<string> {
  const edit = fc.oneof(
    fc.record({
      kind: fc.constant('insert' as const),
      at: fc.nat(),
      text: fc.oneof(
        fc.string({ maxLength: 12 }),
        fc.constantFrom('\n', '---\n', '|', ':', '**', '`', '\r\n', '#', '\u2028', '\0', '## ', ' / '),
      ),
    }),
    fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 20 }) }),
    fc.record({ kind: fc.constant('line-dup' as const), at: fc.nat() }),
    fc.record({ kind: fc.constant('line-drop' as const), at: fc.nat() }),
    fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  );
  return fc.array(edit, { minLength: 1, maxLength: 4 }).map((edits) => {
    let text = base;
    for (const step of edits) {
      const at = text.length === 0 ? 0 : step.at % (text.length + 1);
      if (step.kind === 'insert') text = text.slice(0, at) + step.text + text.slice(at);
      else if (step.kind === 'delete') text = text.slice(0, at) + text.slice(at + step.length);
      else if (step.kind === 'truncate') text = text.slice(0, at);
      else {
        const lines = text.split('\n');
        const index = step.at % Math.max(1, lines.length);
        if (step.kind === 'line-dup') lines.splice(index, 0, lines[index] ?? '');
        else lines.splice(index, 1);
        text = lines.join('\n');
      }
    }
    return text;
  });
}

/** A string that is sometimes a mutation of one of `seeds`, sometimes arbitrary text. */
export function documentText(seeds: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...seeds).chain((seed) => mutatedText(seed)) },
    { weight: 1, arbitrary: fc.constantFrom(...seeds) },
    { weight: 2, arbitrary: fc.string({ maxLength: 300, unit: 'grapheme' }) },
    { weight: 1, arbitrary: fc.string({ maxLength: 300, unit: 'binary' }) },
  );
}

/** Throws when `fn` throws anything but one of the `allowed` error classes (a "clear error"). */
export function expectNoCrash<T>(fn: () => T, allowed: readonly (new (...args: any[]) => Error)[] = []): T | Error {
  try {
    return fn();
  } catch (error) {
    if (allowed.some((kind) => error instanceof kind) && (error as Error).message.length > 0) return error as Error;
    throw error;
  }
}
