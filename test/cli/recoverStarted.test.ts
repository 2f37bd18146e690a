import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TASK_ID, readRun } from '../support/fixtures.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { BATON_BIN, HOOK_WAITS_FOR_RESULT, jsonOf, runProcess } from '../support/processes.ts';
import { useWorkerHarness } from '../support/workerHarness.ts';

// `recover-started` as users meet it: a `baton worker` serving the repository, Claude Code's native
// SubagentStart and SubagentStop through `baton hook`, and the orchestrator's `baton task` through
// the queue. The child stops before completing its stage; under agent-infra-0.11.3 that stop is the
// evidence `recover-started` releases the delegation from; under agent-infra-0.9.2 the intent is not
// the profile's and the stop pauses as it always did (docs/differences.md "Profiles").

const harness = useWorkerHarness();
const POLICY = ['--executor-model', 'claude-sonnet-4-5', '--reviewer-model', 'claude-opus-5-5'];

describe('recover-started through a served worker and native hooks', () => {
  for (const profile of ['agent-infra-0.9.2', 'agent-infra-0.11.3'] as const) {
    it(`${profile}: a child that stops before completing its stage, then recover-started`, async () => {
      const { repo, env } = await harness.serve(`recover-${profile}`, { env: { NO_COLOR: '1', ...HOOK_WAITS_FOR_RESULT } });
      fs.mkdirSync(path.join(repo.root, '.agents'), { recursive: true });
      fs.writeFileSync(path.join(repo.root, '.agents/baton.json'), `${JSON.stringify({ profile })}\n`);
      const baton = (args: string[], input?: string) =>
        runProcess(process.execPath, [BATON_BIN, ...args], { env, cwd: repo.root, input, timeoutMs: 60_000 });
      const task = async (...args: string[]) => jsonOf(await baton(['task', TASK_ID, ...args]));
      const hook = async (event: 'SubagentStart' | 'SubagentStop') => {
        const run = await baton(['hook', 'claude-code'], nativePayload('claude-code', event, 'executor', 'child-1', repo.root));
        expect(run.stdout).toBe('');
        return JSON.parse(/^baton: (\{.*\})$/m.exec(run.stderr)?.[1] ?? 'null');
      };
      expect((await task('begin-or-resume', ...POLICY)).error).toBeNull();
      expect((await task('prepare', '--client', 'claude-code')).error).toBeNull();
      expect((await hook('SubagentStart')).run.pendingDelegation.status).toBe('activated');
      const stopped = await hook('SubagentStop');
      const recovered = await task('recover-started');
      if (profile === 'agent-infra-0.9.2') {
        expect(stopped.run.pause.code).toBe('DELEGATION_STATE_INVALID');
        expect(recovered.error.code).toBe('BATON_INTENT_NOT_IN_PROFILE');
        expect(readRun(repo.taskDir).pendingDelegation).toMatchObject({ status: 'activated' });
        return;
      }
      expect(stopped.run.pause.code).toBe('ORCHESTRATION_LIFECYCLE_RECOVERY_INCOMPLETE');
      expect(stopped.run.pendingDelegation.childStoppedAt).toEqual(expect.any(String));
      expect(recovered).toMatchObject({ status: 'running', error: null, run: { pause: null, pendingDelegation: null } });
      expect(readRun(repo.taskDir).receipts.map((receipt) => [receipt.status, receipt.childId])).toEqual([['aborted', 'child-1']]);
      // The stage goes to a fresh child.
      expect((await task('prepare', '--client', 'claude-code')).error).toBeNull();
    }, 120_000);
  }
});
