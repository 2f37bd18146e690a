import { describe, it } from 'vitest';
import type { TestContext } from 'vitest';
import { ALLOW_SKIPS } from './skipReporter.ts';

// What a test needs from the machine (a tool, root): when it is missing the test fails and says
// what to install; with BATON_ALLOW_SKIPS=1 it is skipped instead, and the skip reporter prints it
// by name with the same reason (docs/development.md "Skipped tests"). Never a quiet skip.

const allowed = () => process.env[ALLOW_SKIPS] === '1';

function unmetError(unmet: string): Error {
  return new Error(`${unmet} (bash scripts/setup.sh installs what the tests need; ${ALLOW_SKIPS}=1 skips such a test instead)`);
}

/** Inside a test: `unmet` null runs on; otherwise the test fails (or is skipped) saying so. */
export function requireHere(context: TestContext, unmet: string | null): void {
  if (unmet === null) return;
  if (allowed()) context.skip(unmet);
  throw unmetError(unmet);
}

/** A describe block that runs only where `unmet` is null; elsewhere one test stands for it and fails (or is skipped) saying why. */
export function describeNeeding(unmet: string | null, title: string, body: () => void): void {
  if (unmet === null) {
    describe(title, body);
    return;
  }
  describe(title, () => {
    it(`cannot run here: ${unmet}`, (context) => requireHere(context, unmet));
  });
}

/** Why redis-server cannot be used here, or null. */
export function missingTool(present: boolean, tool: string, aptPackage: string): string | null {
  return present ? null : `${tool} is not installed (apt-get install ${aptPackage})`;
}
