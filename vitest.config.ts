import { defineConfig } from 'vitest/config';
import LongestFirst from './test/support/longestFirst.ts';
import SkipReporter from './test/support/skipReporter.ts';

// Files whose assertions bound a latency (a hook within its budget, a pickup within a quarter of the
// watch, a seal within the grace plus a scan) or run short graces against a worker: they run after
// the rest, beside each other only, so the load of the real clients, chaos and team files cannot
// decide them (docs/development.md "Where the time goes"). Mostly they wait (on graces, timeouts,
// heartbeats): the CPU is ~70 % idle while one runs alone.
const SERIAL = [
  'test/agents/reconcile.test.ts',
  'test/integration/reconcile.test.ts',
  'test/integration/queue.test.ts',
  'test/integration/spool.test.ts',
  'test/integration/taskTimeout.test.ts',
  'test/ops/installHooks.test.ts',
  'test/ops/metrics.test.ts',
  'test/queue/deliver.test.ts',
  'test/workers/onDemand.test.ts',
];

// The rest run several files at once: most of their time is waiting on processes, Redis and the
// real clients, and each file has its own Redis prefix (or its own redis-server), repositories and
// client homes. Vitest's default here would be one file at a time (available cores − 1 = 1).
const PARALLEL_FILES = 3;
// Latency-bound files side by side (their bounds are 2 s or more; measured to pass 3 at once under load).
const SERIAL_FILES = 3;

export default defineConfig({
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Every skipped test by name, and a failed run unless BATON_ALLOW_SKIPS=1 (docs/development.md "Skipped tests").
    reporters: ['default', new SkipReporter()],
    // Longest files first, from vitest's cache or, on a fresh clone, test/support/fileDurations.json.
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: ['test/**/*.test.ts'],
          exclude: SERIAL,
          maxWorkers: PARALLEL_FILES,
          // A worker process runs its files one after another with the modules they import loaded
          // once (about 0.3 s of CPU saved per file, measured); test/support/fileIsolation.ts puts the
          // environment back after each file, and spies are restored after each test.
          isolate: false,
          setupFiles: ['test/support/fileIsolation.ts'],
          restoreMocks: true,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'serial', include: SERIAL, maxWorkers: SERIAL_FILES, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
