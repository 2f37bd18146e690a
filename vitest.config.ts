import { defineConfig } from 'vitest/config';
import SkipReporter from './test/support/skipReporter.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Every skipped test by name, and a failed run unless BATON_ALLOW_SKIPS=1 (docs/development.md "Skipped tests").
    reporters: ['default', new SkipReporter()],
  },
});
