import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TASK_ID, readRun } from '../support/fixtures.ts';
import { BATON_BIN, DENO_DIR, HOOK_WAITS_FOR_RESULT, RUNTIMES, jsonOf, runProcess } from '../support/processes.ts';
import { useWorkerHarness } from '../support/workerHarness.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { gitFingerprint } from '../fingerprint/helpers.ts';

// The same built module (dist/, via bin/baton.mjs) serves as worker, hook and CLI on Node, Bun
// and Deno. Bun and Deno come from npm (devDependencies), so CI has them after `npm ci`.

const harness = useWorkerHarness();

describe.each(['node', 'bun', 'deno'] as const)('runtime smoke: %s', (name) => {
  const runtime = RUNTIMES[name];

  it(`begin → prepare → hook start → complete → hook stop → advance with worker, hooks and CLI on ${name}`, async () => {
    expect(fs.existsSync(runtime.command), `${runtime.command} is missing: run npm ci`).toBe(true);
    const { repo, env } = await harness.serve(name, {
      env: { DENO_DIR, NO_COLOR: '1', ...HOOK_WAITS_FOR_RESULT },
      worker: { command: runtime.command, commandArgs: runtime.args, readyTimeoutMs: 60_000 },
    });
    const baton = (args: string[], input?: string) =>
      runProcess(runtime.command, [...runtime.args, BATON_BIN, ...args], { env, cwd: repo.root, input, timeoutMs: 60_000 });
    const task = async (...args: string[]) => {
      const run = await baton(['task', TASK_ID, ...args]);
      expect(run.code, `${args.join(' ')}: ${run.stdout}${run.stderr}`).toBe(0);
      return jsonOf(run);
    };
    expect((await task('begin-or-resume')).status).toBe('running');
    expect((await task('prepare', '--client', 'claude-code')).next.action).toBe('analyze-task');
    // BATON_HOOK_VERBOSE=1: the hook waits for the result and prints it on stderr; stdout stays empty.
    const resultOf = (run: { stdout: string; stderr: string }) => {
      expect(run.stdout).toBe('');
      return JSON.parse(/^baton: (\{.*\})$/m.exec(run.stderr)?.[1] ?? 'null');
    };
    const start = await baton(['hook', 'claude-code'], nativePayload('claude-code', 'SubagentStart', 'executor', 'child-1', repo.root));
    expect(start.code, start.stderr).toBe(0);
    expect(resultOf(start).run.pendingDelegation.status).toBe('activated');
    fs.writeFileSync(path.join(repo.taskDir, 'analysis.md'), '# Analysis\n');
    expect(
      (await task('complete-stage', '--stage', 'analysis', '--round', '1', '--artifact', 'analysis.md', '--agent', 'claude')).status,
    ).toBe('running');
    const stop = await baton(['hook', 'claude-code'], nativePayload('claude-code', 'SubagentStop', 'executor', 'child-1', repo.root));
    expect(stop.code, stop.stderr).toBe(0);
    const sealed = resultOf(stop).run.pendingDelegation;
    expect(sealed.status).toBe('sealed');
    expect(sealed.changedPaths).toEqual([
      `.agents/workspace/active/${TASK_ID}/analysis.md`,
      `.agents/workspace/active/${TASK_ID}/orchestration.json`,
    ]);
    const advanced = await task('advance');
    expect(advanced).toMatchObject({ status: 'running', changed: true });
    expect(readRun(repo.taskDir)).toMatchObject({ stepCount: 1, pendingDelegation: null });
    expect(readRun(repo.taskDir).receipts[0]).toMatchObject({ status: 'consumed', childId: 'child-1', parentId: 'parent-session' });
  }, 120_000);

  it(`baton fingerprint (its own bundle, dist/fingerprint.mjs) prints git's fingerprint on ${name}`, async () => {
    const { repo } = harness.repository(name);
    fs.writeFileSync(path.join(repo.root, 'untracked.txt'), 'new\n');
    const run = await runProcess(runtime.command, [...runtime.args, BATON_BIN, 'fingerprint', '--repo', repo.root], {
      env: { ...process.env, DENO_DIR },
      timeoutMs: 60_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`${gitFingerprint(repo.root)}\n`);
  }, 120_000);
});
