import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestContext } from 'vitest';
import { BLOCK_BEGIN, BLOCK_END } from '../../src/install/instructions.ts';
import { clientVersions } from '../support/agentClients.ts';
import type { ClientName, ClientVersion } from '../support/agentClients.ts';
import { EXECUTOR, REVIEWER, agentName, asOffered, shell, spawn, spawnedIds } from '../support/agentScripts.ts';
import { agentWorld } from '../support/agentWorld.ts';
import type { AgentWorld } from '../support/agentWorld.ts';
import type { ModelRequest, ToolCall, Turn } from '../support/modelServer.ts';

// Issue 16, "What must be shown", second part, with the real clients (newest tested and oldest
// supported of each): a repository
// that has never seen baton, set up with `baton init` and given a task with `baton new`, runs the
// analysis stage and its review to `advance`, and the next route goes on to the plan. The scripted
// agents type only what the installed files tell them, extracted from those files as the README
// test extracts the README's commands: the orchestrator its loop from the instructions block of
// CLAUDE.md / AGENTS.md / .github/copilot-instructions.md; each subagent the guidance path from its profile, then, from the guidance
// it read, the hand-over command and, for the reviewer, the review format.

const VERSIONS = [...clientVersions('claude-code'), ...clientVersions('codex'), ...clientVersions('copilot-cli')];

/** The client's settings and instructions files, as `baton init` writes them. */
const FILES: Readonly<Record<ClientName, { settings: string; instructions: string }>> = {
  'claude-code': { settings: '.claude/settings.json', instructions: 'CLAUDE.md' },
  codex: { settings: '.codex/hooks.json', instructions: 'AGENTS.md' },
  'copilot-cli': { settings: '.github/copilot/settings.json', instructions: '.github/copilot-instructions.md' },
};
const TITLE = 'Bound the retry budget';

async function worldFor(context: TestContext, version: ClientVersion): Promise<AgentWorld> {
  const w = await agentWorld(version, { adopt: { title: TITLE, description: '`src/retry.ts` retries forever; give it a budget of 3.' } });
  context.onTestFinished(() => w.cleanup());
  return w;
}

/** The orchestrator's commands in the instructions block, by intent: `baton task <task> prepare --client …`. */
function orchestratorCommands(file: string): Record<string, string> {
  const text = fs.readFileSync(file, 'utf8');
  const block = text.slice(text.indexOf(BLOCK_BEGIN), text.indexOf(BLOCK_END));
  const commands: Record<string, string> = {};
  for (const match of block.matchAll(/`([^`\n]* task <task> ([a-z-]+)[^`\n]*)`/g)) commands[match[2]!] ??= match[1]!;
  return commands;
}

/** The first fenced block of `lang` after `heading` in `text`. */
function fenced(text: string, heading: string, lang: string): string {
  const at = text.indexOf(heading);
  if (at < 0) throw new Error(`no '${heading}' in ${JSON.stringify(text.slice(0, 400))}`);
  const block = new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(text.slice(at));
  if (!block) throw new Error(`no ${lang} block after '${heading}'`);
  return block[1]!;
}

/** A file's text as a read tool returned it: Claude Code's Read numbers the lines. */
function readText(client: ClientName, toolResult: string): string {
  return client === 'claude-code'
    ? toolResult
        .split('\n')
        .map((line) => line.replace(/^\s*\d+[→\t]/, ''))
        .join('\n')
    : toolResult;
}

/** The one-line JSON result a `baton task` printed inside a tool result. */
function batonResult(toolResult: string | undefined): Record<string, any> {
  const line = (toolResult ?? '').split('\n').find((text) => text.startsWith('{"status":"'));
  if (!line) throw new Error(`no baton result in ${JSON.stringify(toolResult)}`);
  return JSON.parse(line) as Record<string, any>;
}

function readFile(client: ClientName, file: string, root: string): ToolCall {
  return client === 'claude-code' ? { name: 'Read', input: { file_path: path.join(root, file) } } : shell(client, `cat ${file}`);
}

type Assignment = { taskId: string; skill: string; round: number; artifact: string };

/** What the orchestrator's prompt gave the subagent (the scripted parent writes it from `route`'s result). */
function assignmentOf(request: ModelRequest): Assignment {
  const match = /Task (TASK-\d{8}-\d{6}): run ([a-z-]+)\. Stage [a-z-]+, round (\d+), artifact (\S+)\./.exec(request.userText);
  if (!match) throw new Error(`no assignment in ${JSON.stringify(request.userText)}`);
  return { taskId: match[1]!, skill: match[2]!, round: Number(match[3]), artifact: match[4]! };
}

/** The guidance file the profile (the subagent's instructions) names for the assigned skill. */
function guidanceFile(request: ModelRequest, skill: string): string {
  const pattern = /`([^`\s]*<skill>[^`\s]*SKILL\.md)`/.exec(request.system);
  if (!pattern) throw new Error('the profile names no guidance file');
  return pattern[1]!.replace('<skill>', skill);
}

/** The hand-over command of the guidance, filled in, with `body` as the artifact. */
function handOver(guidance: string, assignment: Assignment, body: string): string {
  return fenced(guidance, '## Hand the', 'sh')
    .replaceAll('<task-id>', assignment.taskId)
    .replaceAll('<round>', String(assignment.round))
    .replaceAll('<artifact>', assignment.artifact)
    .replace(/^<the whole [^>]+>$/m, body.trimEnd())
    .trimEnd();
}

/** A subagent that reads its guidance, then runs the hand-over it gives, then reports. */
function subagent(
  client: ClientName,
  root: string,
  artifact: (guidance: string, assignment: Assignment) => string,
  ran: string[],
): (request: ModelRequest) => Turn {
  return (request) => {
    const assignment = assignmentOf(request);
    if (request.step === 0) return { toolCalls: [readFile(client, guidanceFile(request, assignment.skill), root)] };
    if (request.step === 1) {
      const guidance = readText(client, request.toolResults.at(-1)!);
      const command = handOver(guidance, assignment, artifact(guidance, assignment));
      ran.push(command);
      return { toolCalls: [shell(client, command)] };
    }
    return { text: `${assignment.artifact} handed to baton.` };
  };
}

/** The review format of the guidance, filled in: the latest analysis reviewed, approved, nothing found. */
function approvedReview(guidance: string, assignment: Assignment): string {
  const template = fenced(guidance, '## The review: the format baton reads', 'markdown');
  return `${template.slice(0, template.indexOf('## Findings'))}## Findings\n\nNone.\n`
    .replaceAll('<round>', String(assignment.round))
    .replace(/<the (\w+) file you reviewed>/, 'analysis.md')
    .replace('<Approved | Changes Requested | Rejected>', 'Approved')
    .replace(/<[BMNV]>/g, '0');
}

/** The orchestrator: its loop from the instructions, for the analysis stage and its review, then one more route. */
function orchestrator(client: ClientName, commands: Record<string, string>, ran: string[]): (request: ModelRequest) => Turn {
  const task = (intent: string) => commands[intent]!.replace('<task>', '01');
  const run = (command: string): Turn => {
    ran.push(command);
    return { toolCalls: [shell(client, command)] };
  };
  const spawnFor = (request: ModelRequest): Turn => {
    // The result of `prepare` (the last tool result) carries `next`.
    const { next, taskId } = batonResult(request.toolResults.at(-1));
    const type = next.role === 'reviewer' ? REVIEWER : EXECUTOR;
    const prompt = `Task ${taskId}: run ${next.action}. Stage ${next.stage}, round ${next.round}, artifact ${next.artifact}.`;
    return { toolCalls: [asOffered(spawn(client, type, prompt), request)] };
  };
  // Codex's spawn_agent runs the child in the background: wait for the one just spawned.
  const wait = (request: ModelRequest): Turn => ({
    toolCalls: [{ name: 'multi_agent_v1.wait_agent', input: { targets: spawnedIds(request).slice(-1), timeout_ms: 30_000 } }],
  });
  const stage = [
    () => run(task('route')),
    () => run(task('prepare')),
    spawnFor,
    ...(client === 'codex' ? [wait] : []),
    () => run(task('advance')),
  ];
  const steps: Array<(request: ModelRequest) => Turn> = [() => run(task('begin-or-resume')), ...stage, ...stage, () => run(task('route'))];
  return (request) => steps[request.step]?.(request) ?? { text: 'The analysis is reviewed and approved; the plan is next.' };
}

describe.concurrent('baton init + baton new, then the analysis stage and its review with the real clients', { timeout: 240_000 }, () => {
  for (const version of VERSIONS) {
    it(`${version.label}: the agents run what the installed files say, and the lifecycle advances to the plan`, async (context) => {
      const w = await worldFor(context, version);
      const { client } = version;
      // init wrote only portable files.
      for (const file of [FILES[client].settings, FILES[client].instructions]) {
        expect(fs.readFileSync(path.join(w.repo.root, file), 'utf8')).not.toContain(process.execPath);
      }
      const commands = orchestratorCommands(path.join(w.repo.root, FILES[client].instructions));
      expect(Object.keys(commands)).toEqual(expect.arrayContaining(['begin-or-resume', 'route', 'prepare', 'advance']));
      expect(commands.prepare).toBe(`baton task <task> prepare --client ${client}`);

      const ran = { parent: [] as string[], executor: [] as string[], reviewer: [] as string[] };
      const analysis = '# Analysis, round 1\n\n## Requirement\n\nRetries are unbounded; bound them at 3.\n';
      const run = await w.run(
        'Run task 01 through its lifecycle.',
        {
          parent: orchestrator(client, commands, ran.parent),
          executor: subagent(client, w.repo.root, () => analysis, ran.executor),
          reviewer: subagent(client, w.repo.root, approvedReview, ran.reviewer),
        },
        180_000,
      );
      expect(w.server.scriptErrors).toEqual([]);
      expect(run.timedOut).toBe(false);
      expect(run.code, `${run.stderr}\n${run.stdout.slice(-3000)}`).toBe(0);

      // What each agent ran came from the installed files.
      expect(ran.parent).toEqual(
        [
          'begin-or-resume',
          'route',
          `prepare --client ${client}`,
          'advance',
          'route',
          `prepare --client ${client}`,
          'advance',
          'route',
        ].map((intent) => `baton task 01 ${intent}`),
      );
      const agent = agentName(client);
      expect(ran.executor).toHaveLength(1);
      expect(ran.executor[0]).toMatch(
        new RegExp(
          `^baton task TASK-\\d{8}-\\d{6} complete-stage --stage analysis --round 1 --artifact analysis\\.md --agent ${agent} --content - <<'BATON_ARTIFACT'\\n`,
        ),
      );
      expect(ran.reviewer[0]).toMatch(
        new RegExp(
          `^baton task TASK-\\d{8}-\\d{6} complete-stage --stage review-analysis --round 1 --artifact review-analysis\\.md --agent ${agent} --content - <<'BATON_ARTIFACT'\\n`,
        ),
      );

      // Every answer of baton was `running`; the last route goes on to the plan: the review counted.
      const parentResults = w.server
        .byRole('parent')
        .at(-1)!
        .toolResults.filter((result) => result.includes('{"status":"'))
        .map(batonResult);
      expect(parentResults.map((result) => result.status)).toEqual(Array(8).fill('running'));
      expect(parentResults.at(-1)!.next).toMatchObject({ action: 'plan-task', stage: 'plan', round: 1, artifact: 'plan.md' });
      for (const role of ['executor', 'reviewer'] as const)
        expect(batonResult(w.server.byRole(role).at(-1)!.toolResults.at(-1)).status).toBe('running');

      // The client knows the guidance as its own skills (its native form), not only by the path the profiles give.
      expect(JSON.stringify(w.server.byRole('parent')[0]!.body)).toContain('baton lifecycle, analysis stage (executor)');
      // …and was given the orchestrator instructions init wrote (CLAUDE.md, AGENTS.md, .github/copilot-instructions.md;
      // Claude Code drops the block's HTML comments).
      expect(JSON.stringify(w.server.byRole('parent')[0]!.body)).toContain('## Agent-infra task lifecycle (driven by baton)');

      const review = w.readTaskFile('review-analysis.md')!;
      expect(review).toMatch(/^- \*\*Review Input\*\*: `analysis\.md`$/m);
      expect(review).toMatch(/^- \*\*Overall Verdict\*\*: Approved$/m);
      expect(w.readTaskFile('analysis.md')).toBe(analysis);
      const runFile = w.runFile();
      expect(runFile.status).toBe('running');
      expect(runFile.pendingDelegation).toBeNull();
      expect(runFile.receipts.map((receipt: any) => [receipt.stage, receipt.role, receipt.status, receipt.agent])).toEqual([
        ['analysis', 'executor', 'consumed', agent],
        ['review-analysis', 'reviewer', 'consumed', agent],
      ]);
    });
  }
});
