import { describe, expect, it } from 'vitest';
import { approvedReview } from '../../src/demo/driver.ts';
import { clientVersions } from '../support/agentClients.ts';
import { EXECUTOR, REVIEWER, agentName, batonResult, shell, spawn } from '../support/agentScripts.ts';
import { recordedPayloads, worldFor } from '../support/agentWorld.ts';
import type { AgentWorld } from '../support/agentWorld.ts';
import { git } from '../support/gitRepo.ts';
import type { ModelRequest, Turn } from '../support/modelServer.ts';

// The whole lifecycle with the real Copilot CLI (its one pinned version): a repository set up with
// `baton init --client copilot-cli --trust` and `baton new`, driven by a scripted orchestrator
// through analysis → review → plan → review → code → review → commit, each stage done by a fresh
// `task` subagent (sync) whose hooks baton measured: the code stage changes src/retry.ts, the commit
// stage commits it with git and tells baton with `stage-completed`, and the last `advance`
// completes the run. docs/clients.md "The Copilot CLI adapter".

const [copilot] = clientVersions('copilot-cli');
const TITLE = 'Bound the retry budget';
const REVIEW_INPUT: Readonly<Record<string, string>> = { 'review-analysis': 'analysis', 'review-plan': 'plan', 'review-code': 'code' };

type Assignment = { taskId: string; stage: string; round: number; artifact: string };

function assignmentOf(request: ModelRequest): Assignment {
  const match = /Task (TASK-\d{8}-\d{6}): stage ([a-z-]+), round (\d+), artifact (\S+)\./.exec(request.userText);
  if (!match) throw new Error(`no assignment in ${JSON.stringify(request.userText)}`);
  return { taskId: match[1]!, stage: match[2]!, round: Number(match[3]), artifact: match[4]! };
}

/** `baton task … complete-stage` with the artifact on stdin, as the installed guidance gives it. */
function handOver(w: AgentWorld, a: Assignment, body: string): string {
  return `${w.baton} task ${a.taskId} complete-stage --stage ${a.stage} --round ${a.round} --artifact ${a.artifact} --agent ${agentName(w.client)} --content - <<'BATON_ARTIFACT'\n${body}BATON_ARTIFACT`;
}

/** What each stage's subagent runs, one shell command a turn, then its answer. */
function stageCommands(w: AgentWorld, a: Assignment): string[] {
  const input = REVIEW_INPUT[a.stage];
  if (input) return [handOver(w, a, approvedReview(`${input}.md`))];
  if (a.stage === 'code')
    return [
      `printf 'export const retries = 3;\\n' > src/retry.ts`,
      handOver(w, a, '# Code\n\n## Changes\n\n- `src/retry.ts`: retries bounded at 3.\n'),
    ];
  if (a.stage === 'commit')
    return [
      `git add src/retry.ts && git -c user.name=agent -c user.email=agent@example.invalid commit -q -m '${TITLE}' -m 'Task: ${a.taskId}'`,
      `${w.baton} task ${a.taskId} stage-completed --agent ${agentName(w.client)}`,
    ];
  return [handOver(w, a, `# ${a.stage}, round ${a.round}\n\nRetries are unbounded; bound them at 3.\n`)];
}

function subagent(w: AgentWorld): (request: ModelRequest) => Turn {
  return (request) => {
    const commands = stageCommands(w, assignmentOf(request));
    const command = commands[request.step];
    return command ? { toolCalls: [shell(w.client, command)] } : { text: 'stage done' };
  };
}

/**
 * The orchestrator's loop of the installed instructions: begin-or-resume, then route, prepare, one
 * fresh subagent, advance, until advance says `completed`. It reads baton's last answer, not the
 * conversation's turn count (Copilot may add turns of its own).
 */
function orchestrator(w: AgentWorld, answers: Array<Record<string, any>>): (request: ModelRequest) => Turn {
  let last: 'start' | 'begin-or-resume' | 'route' | 'prepare' | 'spawn' | 'advance' = 'start';
  let next: Record<string, any> = {};
  const run = (intent: string): Turn => ({ toolCalls: [shell(w.client, `${w.baton} task 01 ${intent}`)] });
  return (request) => {
    if (last !== 'start' && last !== 'spawn') {
      const answer = batonResult(request.toolResults.at(-1));
      answers.push(answer);
      if (answer.status !== 'running' && !(last === 'advance' && answer.status === 'completed'))
        return { text: `stopped: ${JSON.stringify(answer)}` };
      if (last === 'route') next = answer.next;
      if (last === 'advance' && answer.status === 'completed') return { text: 'The task is committed; its lifecycle is complete.' };
    }
    const step = {
      start: 'begin-or-resume',
      'begin-or-resume': 'route',
      route: 'prepare',
      prepare: 'spawn',
      spawn: 'advance',
      advance: 'route',
    }[last] as typeof last;
    last = step;
    if (step === 'spawn') {
      const type = next.role === 'reviewer' ? REVIEWER : EXECUTOR;
      const prompt = `Task ${answers.at(-1)!.taskId}: stage ${next.stage}, round ${next.round}, artifact ${next.artifact}.`;
      return { toolCalls: [spawn(w.client, type, prompt)] };
    }
    return run(step === 'prepare' ? `prepare --client ${w.client}` : step);
  };
}

describe('the whole lifecycle with the real Copilot CLI', { timeout: 420_000 }, () => {
  it(`${copilot!.label}: baton init + baton new, then analysis to commit, every stage a fresh subagent, and the run completes`, async (context) => {
    const w = await worldFor(context, copilot!, {
      adopt: { title: TITLE, description: '`src/retry.ts` retries forever; give it a budget of 3.' },
      record: true,
    });
    const answers: Array<Record<string, any>> = [];
    const run = await w.run(
      'Run task 01 through its lifecycle.',
      { parent: orchestrator(w, answers), executor: subagent(w), reviewer: subagent(w) },
      360_000,
    );
    expect(w.server.scriptErrors).toEqual([]);
    expect(run.timedOut).toBe(false);
    expect(run.code, `${run.stderr}\n${run.stdout.slice(-3000)}`).toBe(0);

    expect(answers.at(-1)).toMatchObject({ status: 'completed' });
    const runFile = w.runFile();
    expect(runFile.status).toBe('completed');
    expect(runFile.receipts.map((receipt: any) => [receipt.stage, receipt.role, receipt.status, receipt.agent])).toEqual(
      ['analysis', 'review-analysis', 'plan', 'review-plan', 'code', 'review-code', 'commit'].map((stage) => [
        stage,
        stage.startsWith('review-') ? 'reviewer' : 'executor',
        'consumed',
        'copilot',
      ]),
    );
    // Seven fresh children, each started and stopped through baton's hooks.
    const childIds = new Set(runFile.receipts.map((receipt: any) => receipt.childId));
    expect(childIds.size).toBe(7);
    const hooks = recordedPayloads(w);
    expect(hooks.filter((hook) => hook.event === 'subagentStart').map((hook) => hook.payload.agentId)).toEqual(
      runFile.receipts.map((receipt: any) => receipt.childId),
    );
    for (const hook of hooks) expect([hook.event, hook.code, hook.stdout]).toEqual([hook.event, 0, '']);
    // The code stage's change, measured on its receipt, is what the commit stage committed.
    expect(runFile.receipts[4].changedPaths).toContain('src/retry.ts');
    expect(git(w.repo.root, ['log', '-1', '--format=%s%n%b'])).toContain(TITLE);
    expect(git(w.repo.root, ['show', 'HEAD:src/retry.ts'])).toBe('export const retries = 3;\n');
    expect(git(w.repo.root, ['status', '--porcelain', '--', 'src'])).toBe('');
  });
});
