import { createRequire } from 'node:module';
import path from 'node:path';
import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

// Starts the longest files first, so that the end of each phase is short files filling the slots
// rather than one long file running alone (docs/development.md "Where the time goes"). A file's
// duration is vitest's own from an earlier run here (its cache), else the one recorded in
// fileDurations.json (a fresh clone, CI: `node scripts/fileDurations.mjs` refreshes it), else
// unknown, and an unknown file starts first, as vitest does. Projects keep vitest's order (groupOrder).
const recorded: Record<string, number> = createRequire(import.meta.url)('./fileDurations.json');

/** Negative when `a` should start before `b` (unknown, infinite, durations compare without NaN). */
function longerFirst(a: number, b: number): number {
  return a === b ? 0 : a > b ? -1 : 1;
}

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const durationOf = (spec: TestSpecification): number => {
      const file = path.relative(root, spec.moduleId).split(path.sep).join('/');
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`);
      if (cached?.failed) return Number.POSITIVE_INFINITY; // a file that failed last time goes first
      if (cached) return cached.duration / 1000;
      return recorded[file] ?? Number.POSITIVE_INFINITY;
    };
    const order = (spec: TestSpecification) => spec.project.config.sequence.groupOrder;
    return [...files].sort(
      (a, b) =>
        order(a) - order(b) ||
        (a.project.name < b.project.name ? -1 : a.project.name > b.project.name ? 1 : 0) ||
        longerFirst(durationOf(a), durationOf(b)),
    );
  }
}
