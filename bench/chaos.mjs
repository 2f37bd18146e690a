// `npm run chaos`: the chaos and fuzz suites (test/chaos, test/fuzz) with far more rounds than CI
// runs, and the outcome recorded in bench/results/chaos.md + chaos.json.
//
//   npm run chaos                                   60 kill -9 rounds, 20,000 runs per property
//   npm run chaos -- --rounds 200 --fuzz-runs 100000
//   CHAOS_SEED=4000 FUZZ_SEED=7 npm run chaos       other random choices (a failure prints its seed)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT, RESULTS_DIR, flags, machineInfo, machineMarkdown, table, tempDir, main } from './lib.mjs';

const options = flags();
const ROUNDS = Number(options.rounds ?? 60);
const FUZZ_RUNS = Number(options['fuzz-runs'] ?? 20_000);

await main(async () => {
  const build = spawnSync('npm', ['run', 'build'], { cwd: PROJECT_ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('build failed');
  const report = path.join(tempDir('chaos'), 'vitest.json');
  const env = {
    ...process.env,
    CHAOS_ROUNDS: String(ROUNDS),
    FUZZ_RUNS: String(FUZZ_RUNS),
    CHAOS_SEED: process.env.CHAOS_SEED ?? String(3000),
  };
  const started = Date.now();
  const vitest = spawnSync(
    path.join(PROJECT_ROOT, 'node_modules', '.bin', 'vitest'),
    ['run', 'test/chaos', 'test/fuzz', '--reporter=default', '--reporter=json', `--outputFile=${report}`, '--testTimeout=3600000'],
    { cwd: PROJECT_ROOT, env, stdio: 'inherit' },
  );
  const seconds = Math.round((Date.now() - started) / 1000);
  const results = JSON.parse(fs.readFileSync(report, 'utf8'));
  const files = results.testResults.map((file) => ({
    file: path.relative(PROJECT_ROOT, file.name),
    passed: file.assertionResults.filter((test) => test.status === 'passed').length,
    failed: file.assertionResults.filter((test) => test.status === 'failed').length,
    seconds: Math.round((file.endTime - file.startTime) / 100) / 10,
    failures: file.assertionResults
      .filter((test) => test.status === 'failed')
      .map((test) => `${test.fullName}: ${(test.failureMessages[0] ?? '').split('\n')[0]}`),
  }));
  const machine = machineInfo();
  const extra = [...(ROUNDS !== 60 ? ['--rounds', ROUNDS] : []), ...(FUZZ_RUNS !== 20_000 ? ['--fuzz-runs', FUZZ_RUNS] : [])];
  const command = `npm run chaos${extra.length > 0 ? ` -- ${extra.join(' ')}` : ''}`;
  const json = {
    date: machine.date,
    command,
    rounds: ROUNDS,
    fuzzRuns: FUZZ_RUNS,
    chaosSeed: env.CHAOS_SEED,
    seconds,
    total: results.numTotalTests,
    passed: results.numPassedTests,
    failed: results.numFailedTests,
    files,
    machine,
  };
  const markdown = `# Chaos and fuzzing

\`${command}\`: test/chaos with ${ROUNDS} kill -9 rounds (seeds ${env.CHAOS_SEED}…${Number(env.CHAOS_SEED) + ROUNDS - 1}),
test/fuzz with ${FUZZ_RUNS} runs per property. CI runs the same files with 12 rounds and the default
runs per property. ${json.passed}/${json.total} tests passed in ${seconds} s.

${table(
  ['file', 'passed', 'failed', 'seconds'],
  files.map((file) => [file.file, file.passed, file.failed, file.seconds]),
)}
${
  files.some((file) => file.failed > 0)
    ? `\n## Failures\n\n${files
        .flatMap((file) => file.failures)
        .map((line) => `- ${line}`)
        .join('\n')}\n`
    : ''
}
## What the chaos runs and the fuzzing found, and the fixes

1. **A stray temp file after kill -9 made a reviewer's seal fail.** A worker killed between writing
   the temp file of \`orchestration.json\` and renaming it left \`orchestration.json.<uuid>.tmp\` in the
   task directory (2 of 40 rounds). The task workspace is force-included in fingerprints, so the
   stray file counted as a path the active delegation changed; for a reviewer that is a forbidden
   write (\`DELEGATION_REVIEWER_WRITE_FORBIDDEN\`) although the reviewer did nothing wrong. Fix: the
   redelivery of the interrupted event (its journal record is still pending) removes the temp files
   of the interrupted write (\`removeInterruptedWrites\`, src/base/atomicFile.ts, called from
   src/workers/journal.ts); \`prune\` removes temp files of interrupted journal writes after a minute.
   Regression test: test/chaos/interruptedWrite.test.ts (fails without the fix with exactly that pause).
2. **\`baton task\` crashed when Redis went away while it waited for its result** ("baton: Error:
   Connection is closed.", exit 1, no JSON on stdout), and a hook waiting for its result did the same.
   Fix: src/cli/task.ts answers \`BATON_REDIS_UNAVAILABLE\` with a message saying the job may or may not
   have been applied and how to retry safely (same \`--idempotency-key\`); the hook exits 0 saying the
   event is queued. Regression test: the second test of test/chaos/redisRestart.test.ts.
3. **The frontmatter writer refused some values it can write.** \`updateTaskFrontmatter\` refused a
   value made only of line breaks ("\\n": YAML's block scalar lost its body to \`trimEnd\`) and values
   of Unicode spaces (U+00A0, U+2000…, U+3000: written plain, then trimmed away when read back) as
   "cannot be written as a single-line scalar" — a clear error, but wrong, and it made the existing
   property test in test/core/frontmatter.test.ts fail now and then. Fix (src/core/frontmatter.ts):
   YAML's own rendering first, double quotes when it does not round-trip. Regression test:
   test/fuzz/inputs.test.ts ("frontmatter writes").

Everything else held in every round: no event lost or applied twice, results and final state equal
to the fault-free run, the run file valid at every read, hooks exiting 0 (and within ~0.3 s when they
spool), the worker surviving every Redis restart, no fuzzed input producing an exception or a write
outside the task directory.

What each file covers:

- \`test/chaos/killWorker.test.ts\`: SIGKILL of real worker processes at random moments and at the
  failpoints (after-journal, after-commit, after-done) during a stream of lifecycle events: no event
  lost, none applied twice (every job's result equals the fault-free run's), run file valid JSON at
  every read, same final state, no debris in the task directory.
- \`test/chaos/interruptedWrite.test.ts\`: regression test for the failure those rounds found (a temp
  file of an interrupted run-file write left in the task directory made a reviewer's seal fail).
- \`test/chaos/redisRestart.test.ts\`: a whole lifecycle while a private redis-server (appendonly) is
  stopped and started at random: hooks spool and exit 0 quickly, commands retry with the same
  idempotency key, everything applied once and in order, the worker survives; and the regression test
  for what it found: a \`baton task\` (or hook) waiting for its result when Redis stopped crashed with
  a stack trace instead of answering with its JSON result (a hook: exit 0, the event stays queued).
- \`test/chaos/nativeEvents.test.ts\`: duplicate SubagentStart/SubagentStop (at once and late), a
  SubagentStop that never comes (recoverable pause → abort → begin-or-resume → completed run), a
  stale stop of an aborted child, a SubagentStart that never comes.
- \`test/fuzz/*\`: fast-check properties over hook payloads (also through the real \`baton hook\`),
  \`baton task\` flags, task references, frontmatter, review summaries, ledgers, run-state files (the
  engine on corrupt and odd orchestration.json) and job envelopes (the worker's processor): always
  a clear error or a valid result, never an exception, nothing written outside the task directory
  (and baton's own .git/baton).

${machineMarkdown(machine)}
`;
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(path.join(RESULTS_DIR, 'chaos.json'), `${JSON.stringify(json, null, 2)}\n`);
  fs.writeFileSync(path.join(RESULTS_DIR, 'chaos.md'), markdown);
  process.stdout.write('wrote bench/results/chaos.md and .json\n');
  if (vitest.status !== 0) process.exitCode = 1;
});
