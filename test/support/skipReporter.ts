import type { Reporter, TestCase, TestModule, Vitest } from 'vitest/node';

// No quiet skips (docs/development.md "Skipped tests"): every test that did not run is printed by
// name, with the reason its `context.skip(reason)` gave, and the run fails unless
// BATON_ALLOW_SKIPS=1. A run narrowed with `-t` skips the rest on purpose: then they are only
// counted.

export const ALLOW_SKIPS = 'BATON_ALLOW_SKIPS';

/**
 * Why vitest skipped a test without a note: a beforeAll (or the file's import) of its suite or file
 * failed, so it never ran; the first line of that error. Null when nothing above it failed.
 */
function setupFailure(test: TestCase): string | null {
  for (let parent: TestCase['parent'] | undefined = test.parent; parent; parent = parent.type === 'module' ? undefined : parent.parent) {
    const error = parent.errors()[0];
    if (error)
      return `not run: its ${parent.type === 'module' ? 'file' : 'suite'} failed before it (${String(error.message).split('\n')[0]})`;
  }
  return null;
}

export default class SkipReporter implements Reporter {
  #vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.#vitest = vitest;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const skipped: string[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state !== 'skipped') continue;
        const why = result.note ?? (test.options.mode === 'todo' ? 'todo' : (setupFailure(test) ?? 'no reason given'));
        skipped.push(`${module.relativeModuleId} > ${test.fullName}: ${why}`);
      }
    }
    if (skipped.length === 0) return;
    if (this.#vitest?.config.testNamePattern) {
      process.stderr.write(`\n${skipped.length} test(s) left out by the name filter (-t)\n`);
      return;
    }
    const allowed = process.env[ALLOW_SKIPS] === '1';
    process.stderr.write(
      `\n${skipped.length} skipped test(s)${allowed ? ` (allowed by ${ALLOW_SKIPS}=1)` : `: the run fails (set ${ALLOW_SKIPS}=1 to allow, docs/development.md "Skipped tests")`}:\n${skipped.map((line) => `  - ${line}\n`).join('')}`,
    );
    if (!allowed) process.exitCode = 1;
  }
}
