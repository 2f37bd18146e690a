import type { Reporter, TestModule, Vitest } from 'vitest/node';

// No quiet skips (docs/development.md "Skipped tests"): every test that did not run is printed by
// name, with the reason its `context.skip(reason)` gave, and the run fails unless
// BATON_ALLOW_SKIPS=1. A run narrowed with `-t` skips the rest on purpose: then they are only
// counted.

export const ALLOW_SKIPS = 'BATON_ALLOW_SKIPS';

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
        const why = result.note ?? (test.options.mode === 'todo' ? 'todo' : 'no reason given');
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
