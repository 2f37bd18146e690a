import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { OrchestrationRun } from '../../src/core/types.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { useRepoWithClientHome } from '../support/clientHome.ts';
import { TASK_ID, uniquePrefix } from '../support/fixtures.ts';
import { BATON_BIN, batonEnv, jsonOf, runBaton, startWorkerProcess } from '../support/processes.ts';
import type { WorkerProcess } from '../support/processes.ts';
import { runScriptedClaude } from '../support/claudeScripted.ts';
import { shellQuote } from '../../src/base/shellQuote.ts';

// The artifact hand-over with the REAL Claude Code 2.1.337, wired by `baton install-hooks claude-code --trust` only:
// the main agent spawns the lifecycle executor in the foreground (Agent tool, run_in_background
// false); the executor first tries to Write analysis.md, which Claude Code refuses to a subagent
// ("Subagents should return findings as text"), then does what baton's profile says: hands the text
// to `baton task … complete-stage --content -`. baton's hooks activate and seal the delegation, the
// artifact is on disk, and `advance` consumes it.

// This checkout's baton, given to install-hooks with --command: the client runs with the test's PATH,
// which need not have a `baton`.
const BATON = [process.execPath, BATON_BIN].map(shellQuote).join(' ');
const redisUrl = inject('redisUrl');

let repo: GitRepo;
let home: string;
let worker: WorkerProcess | null = null;

useRepoWithClientHome('claude', gitRepoWithTask, (made) => ({ repo, home } = made));
afterEach(async () => {
  await worker?.stop('SIGKILL');
  worker = null;
});

describe('a Claude Code subagent hands its artifact to baton', () => {
  it('Write of analysis.md is refused to the subagent; complete-stage --content - records it; the hooks seal it; advance consumes it', async () => {
    const prefix = uniquePrefix('claude-artifact');
    const env = batonEnv(
      { redisUrl, prefix },
      {
        CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
        COPILOT_HOME: path.join(home, '.copilot'),
        HOME: home,
        BATON_HOOK_BUDGET_MS: '8000',
      },
    );
    worker = await startWorkerProcess(['--repo', repo.root], { env });
    expect((await runBaton(['install-hooks', 'claude-code', '--repo', repo.root, '--command', BATON, '--trust'], { env })).code).toBe(0);
    const task = async (...args: string[]) => jsonOf(await runBaton(['task', TASK_ID, ...args], { env, cwd: repo.root }));
    expect((await task('begin-or-resume')).status).toBe('running');
    expect((await task('route')).next).toMatchObject({
      action: 'analyze-task',
      stage: 'analysis',
      round: 1,
      artifact: 'analysis.md',
      role: 'executor',
    });
    expect((await task('prepare', '--client', 'claude-code')).status).toBe('running');

    const analysis = '# Analysis\n\nThe retry budget is unbounded; cap it at 3.\n';
    const run = await runScriptedClaude({
      cwd: repo.root,
      home,
      workDir: home,
      prompt: `Drive task ${TASK_ID} one stage.`,
      script: {
        parent: [
          {
            tool: 'Agent',
            input: {
              description: 'analysis of the task',
              prompt: `Task ${TASK_ID}: run analyze-task. Stage analysis, round 1, artifact analysis.md.`,
              subagent_type: 'agent-infra-lifecycle-executor',
              run_in_background: false,
            },
          },
          { text: 'The analysis stage is done.' },
        ],
        child: [
          { tool: 'Write', input: { file_path: path.join(repo.taskDir, 'analysis.md'), content: analysis } },
          {
            tool: 'Bash',
            input: {
              command: `${BATON} task ${TASK_ID} complete-stage --stage analysis --round 1 --artifact analysis.md --agent claude --content - <<'BATON_ARTIFACT'\n${analysis}BATON_ARTIFACT`,
              description: 'hand the analysis to baton',
            },
          },
          { text: 'Analysis recorded.' },
        ],
      },
      env: { REDIS_URL: redisUrl, BATON_PREFIX: prefix, BATON_HOOK_BUDGET_MS: '8000' },
      // The hooks reach the tests' Redis: a private network namespace only when it is a unix socket.
      isolate: redisUrl.startsWith('unix:'),
      timeoutMs: 120_000,
    });
    expect(run.code, run.stderr).toBe(0);

    const text = (content: unknown): string =>
      typeof content === 'string'
        ? content
        : Array.isArray(content)
          ? content.map((block: { text?: string }) => block.text ?? '').join('\n')
          : '';
    const childResults = run.recorded.toolResults.filter((entry) => entry.role === 'child').map((entry) => text(entry.result.content));
    expect(childResults).toHaveLength(2);
    expect(childResults[0]).toContain('Subagents should return findings as text');
    expect(JSON.parse(childResults[1]!)).toMatchObject({
      status: 'running',
      run: { pendingDelegation: { status: 'stage-completed', agent: 'claude' } },
    });
    // The main agent got the subagent's answer as the Agent tool's result: it waited (foreground).
    const parentResults = run.recorded.toolResults.filter((entry) => entry.role === 'parent').map((entry) => text(entry.result.content));
    expect(parentResults.join('\n')).toContain('Analysis recorded.');

    expect(fs.readFileSync(path.join(repo.taskDir, 'analysis.md'), 'utf8')).toBe(analysis);
    const readRun = () => JSON.parse(fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8')) as OrchestrationRun;
    // A hook queues its event and exits without waiting for the result, and the client exits right
    // after SubagentStop: the worker seals the delegation after.
    await expect.poll(() => readRun().pendingDelegation?.status, { timeout: 60_000 }).toBe('sealed');
    expect(readRun().pendingDelegation).toMatchObject({
      status: 'sealed',
      agent: 'claude',
      spawnMode: 'fresh',
      childId: expect.any(String),
    });
    expect(readRun().pendingDelegation?.changedPaths).toContain(`.agents/workspace/active/${TASK_ID}/analysis.md`);
    const advanced = await task('advance');
    expect(advanced).toMatchObject({ status: 'running', run: { stepCount: 1, pendingDelegation: null } });
    expect((await task('route')).next).toMatchObject({ stage: 'review-analysis' });
  }, 180_000);
});
