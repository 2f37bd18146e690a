import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LIFECYCLE_INTENTS } from '../../src/core/intents.ts';
import { CODE_ADVICE, INTENT_OWNERS, orchestratorInstructions, profiles } from '../../src/install/instructions.ts';
import { stageSkill } from '../../src/install/guidance.ts';
import { WRITE_NUMBERS } from '../../src/core/stageArtifact.ts';
import { clientAdapter } from '../../src/clients/registry.ts';
import type { InstallClient } from '../../src/clients/installer.ts';
import { TASK_ID, dirOutsideAnyRepository, tempRepo, writeTask } from '../support/fixtures.ts';
import type { Fixture } from '../support/fixtures.ts';
import { BATON_BIN, PROJECT_ROOT, runBaton, runProcess } from '../support/processes.ts';
import { shellQuote } from '../../src/base/shellQuote.ts';

// What install-hooks tells the agents stays in step with baton: every intent and
// every code the instructions name is one baton has, and the agent-infra shim answers
// `agent-infra-internal task-orchestration …` exactly as `baton task …` does.

const BATON = [process.execPath, BATON_BIN].map(shellQuote).join(' ');

/** Every `.ts` file under src/, except the instructions themselves. */
function sourceText(): string {
  const texts: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (file.endsWith('.ts') && !file.endsWith(path.join('install', 'instructions.ts'))) texts.push(fs.readFileSync(file, 'utf8'));
    }
  };
  walk(path.join(PROJECT_ROOT, 'src'));
  return texts.join('\n');
}

describe('the orchestrator instructions and profiles', () => {
  for (const client of ['claude-code', 'codex'] as const) {
    it(`${client}: every intent they name exists, and every intent is placed`, () => {
      expect(Object.keys(INTENT_OWNERS).sort()).toEqual([...LIFECYCLE_INTENTS].sort());
      const texts = [orchestratorInstructions(client, BATON), ...profiles(client, BATON).map((profile) => profile.instructions)];
      const named = new Set<string>();
      for (const text of texts) {
        for (const match of text.matchAll(/ task <task> ([a-z-]+)/g)) named.add(match[1]!);
        for (const match of text.matchAll(/`([a-z]+(?:-[a-z]+)*)`/g))
          if ((LIFECYCLE_INTENTS as readonly string[]).includes(match[1]!)) named.add(match[1]!);
      }
      // The loop names begin-or-resume, route, prepare, advance, abort; the profiles complete-stage and stage-completed.
      for (const intent of ['begin-or-resume', 'route', 'prepare', 'advance', 'abort', 'complete-stage', 'stage-completed', 'status'])
        expect(named).toContain(intent);
      for (const intent of named) expect(LIFECYCLE_INTENTS).toContain(intent);
      // The closing line lists every intent once.
      const listing = orchestratorInstructions(client, BATON).split('Intents: ')[1]!;
      for (const intent of LIFECYCLE_INTENTS) expect(listing).toContain(`\`${intent}\``);
    });
  }

  it('every code they advise on is one baton returns', () => {
    const source = sourceText();
    expect(CODE_ADVICE.length).toBeGreaterThan(10);
    for (const [code] of CODE_ADVICE) expect(source, code).toContain(`'${code}'`);
    const text = orchestratorInstructions('codex', BATON);
    for (const [code, advice] of CODE_ADVICE) expect(text).toContain(`- \`${code}\`: ${advice}`);
  });

  it('tell each client how to spawn fresh, in the foreground, and wait', () => {
    const claude = orchestratorInstructions('claude-code', BATON);
    expect(claude).toContain('`run_in_background: false`');
    expect(claude).toContain('Do not set `isolation`');
    expect(claude).toContain('Wait until the subagent has returned');
    const codex = orchestratorInstructions('codex', BATON);
    expect(codex).toContain('`fork_turns: "none"`');
    expect(codex).toContain('`wait_agent`');
    expect(codex).toContain(`${BATON} task <task> prepare --client codex`);
  });
});

describe('what the installed texts say about a refused review and about warnings', () => {
  for (const client of ['claude-code', 'codex'] as const) {
    it(`${client}: the orchestrator reads \`warnings\`; the reviewer and the review skills fix a Review Input baton refuses`, () => {
      const orchestrator = orchestratorInstructions(client, BATON);
      expect(orchestrator).toContain('`error.code`, `run.pause`, `next` and `warnings`.');
      expect(orchestrator).toMatch(
        /`warnings` says why baton did something you may\s+not expect \(why `route` asks for another review round/,
      );
      const reviewer = profiles(client, BATON).find((profile) => profile.name === 'agent-infra-lifecycle-reviewer')!.instructions;
      expect(reviewer).toMatch(
        /On `"status":"failed"` with `ORCHESTRATION_ARTIFACT_INVALID` or `ORCHESTRATION_REVIEW_INPUT_MISMATCH` \(the Review Input line does not name the artifact under review\), nothing was\s+written: fix what `error.message` says and run it again\./,
      );
      const executor = profiles(client, BATON).find((profile) => profile.name === 'agent-infra-lifecycle-executor')!.instructions;
      expect(executor).not.toContain('ORCHESTRATION_REVIEW_INPUT_MISMATCH');
      for (const skill of ['review-analysis', 'review-plan', 'review-code'] as const) {
        const text = stageSkill(skill, clientAdapter(client) as InstallClient, BATON);
        expect(text, skill).toMatch(
          /`complete-stage` refuses the review with\s+`ORCHESTRATION_REVIEW_INPUT_MISMATCH`, naming the file expected: fix the line and hand it over again\./,
        );
        expect(text, skill).toMatch(/`ORCHESTRATION_ARTIFACT_INVALID` or `ORCHESTRATION_REVIEW_INPUT_MISMATCH`: nothing was\s+written/);
      }
      expect(stageSkill('analyze-task', clientAdapter(client) as InstallClient, BATON)).not.toContain(
        'ORCHESTRATION_REVIEW_INPUT_MISMATCH',
      );
      // The counts: numbers, as complete-stage's refusal says (src/core/stageArtifact.ts WRITE_NUMBERS).
      const counts = stageSkill('review-code', clientAdapter(client) as InstallClient, BATON);
      expect(counts).toContain('- **The counts** are numbers (`0 blockers, 1 major, 2 minors`).');
      expect(counts).toMatch(
        /`complete-stage` refuses anything else with `ORCHESTRATION_ARTIFACT_INVALID`, nothing written: words\s+\(`REVIEW_SUMMARY_PLACEHOLDER_INVALID`/,
      );
      expect(counts).toMatch(/and those placeholders themselves \(`\{unresolved-blockers\} blockers, …`\), which\s+nothing fills in here/);
      expect(counts).not.toContain('make the review invalid');
      expect(WRITE_NUMBERS).toContain('0 blockers, 1 major, 2 minors');
    });
  }
});

describe('the profiles point at guidance of their own role', () => {
  it.each([
    ['claude-code', '.claude/skills/analyze-task/SKILL.md', '.claude/skills/review-analysis/SKILL.md'],
    ['codex', '.agents/skills/analyze-task/SKILL.md', '.agents/skills/review-analysis/SKILL.md'],
  ] as const)(
    '%s: the executor example is an executor skill, the reviewer example a review skill',
    (client, executorExample, reviewerExample) => {
      const [executor, reviewer] = profiles(client, BATON, true).map((profile) => profile.instructions) as [string, string];
      const example = (text: string) => /\(`([^`]+)` for ([a-z-]+)\)/.exec(text)?.slice(1) ?? [];
      const [executorFile, executorSkill] = example(executor);
      const [reviewerFile, reviewerSkill] = example(reviewer);
      expect(executorSkill).toBe('analyze-task');
      expect(executorFile).toContain(executorExample);
      expect(reviewerSkill).toBe('review-analysis');
      expect(reviewerFile).toContain(reviewerExample);
      expect(reviewer).not.toContain('analyze-task/');
    },
  );
});

describe('baton install-hooks --agent-infra-shim', () => {
  let repo: Fixture;
  let other: string;
  afterEach(() => {
    repo.cleanup();
    fs.rmSync(other, { recursive: true, force: true });
  });

  it('answers task-orchestration as baton task does, and hands other subcommands to the next agent-infra-internal on PATH', async () => {
    repo = tempRepo();
    writeTask(repo);
    fs.writeFileSync(
      path.join(repo.root, '.agents', 'workspace', 'active', '.short-ids.json'),
      `${JSON.stringify({ version: 1, ids: { '01': TASK_ID } })}\n`,
    );
    const env = {
      ...process.env,
      CODEX_HOME: path.join(repo.root, 'codex-home'),
      CLAUDE_CONFIG_DIR: path.join(repo.root, 'claude-home'),
      COPILOT_HOME: path.join(repo.root, 'copilot-home'),
      REDIS_URL: 'unix:///nonexistent/redis.sock',
    };
    // This checkout's baton, named explicitly: the test's PATH need not have a `baton`.
    const installed = await runBaton(
      ['install-hooks', 'claude-code', '--repo', repo.root, '--agent-infra-shim', '--no-instructions', '--command', BATON],
      { env },
    );
    expect(installed.code, installed.stderr).toBe(0);
    const shimDir = path.join(repo.root, '.git', 'baton', 'bin');
    expect(installed.stdout).toMatch(/created\s+\.git\/baton\/bin\/agent-infra-internal/);
    expect(installed.stdout).toContain(`export PATH="${shimDir}:$PATH"`);
    const shim = path.join(shimDir, 'agent-infra-internal');
    expect(fs.statSync(shim).mode & 0o111).not.toBe(0);

    // The real agent-infra-internal, later on PATH.
    other = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-agent-infra-'));
    fs.writeFileSync(path.join(other, 'agent-infra-internal'), '#!/bin/sh\necho "real agent-infra-internal: $*"\n', { mode: 0o755 });
    const pathEnv = { ...env, PATH: `${shimDir}:${other}:${process.env.PATH}` };
    const viaShim = (args: string[]) => runProcess('agent-infra-internal', args, { cwd: repo.root, env: pathEnv });

    for (const args of [
      ['01', 'status'],
      ['01', 'route'],
      ['01', 'launch'],
      ['01', 'prepare'],
    ]) {
      const shimmed = await viaShim(['task-orchestration', ...args]);
      const direct = await runBaton(['task', ...args], { cwd: repo.root, env });
      expect({ code: shimmed.code, stdout: shimmed.stdout }).toEqual({ code: direct.code, stdout: direct.stdout });
    }
    expect((await viaShim(['task-orchestration', '01', 'launch'])).code).toBe(2);

    // Where baton rewords 0.9.2's message to name its own command, the shim answers in 0.9.2's words.
    const stale = (await viaShim(['task-orchestration', '02', 'status'])).stdout;
    expect(JSON.parse(stale).error).toEqual({
      code: 'SHORT_ID_NOT_FOUND',
      message:
        "short id '#02' not found in active task registry (it may have been cleaned up after archival; check 'task-short-id.js list').",
    });
    expect(JSON.parse((await runBaton(['task', '02', 'status'], { cwd: repo.root, env })).stdout).error.message).toBe(
      "short id '#02' not found in active task registry (it may have been cleaned up after archival; " +
        "'baton runs' lists the tasks with a run by short id; .agents/workspace/active/.short-ids.json is the registry).",
    );
    const outside = dirOutsideAnyRepository('shim-outside');
    try {
      const shimmed = await runProcess('agent-infra-internal', ['task-orchestration', '01', 'status'], { cwd: outside, env: pathEnv });
      expect({ code: shimmed.code, error: JSON.parse(shimmed.stdout).error }).toEqual({
        code: 1,
        error: { code: 'REPO_ROOT_NOT_FOUND', message: 'ai task: current directory is not inside a git repository' },
      });
      const direct = await runBaton(['task', '01', 'status'], { cwd: outside, env });
      expect(JSON.parse(direct.stdout).error).toEqual({
        code: 'REPO_ROOT_NOT_FOUND',
        message: 'current directory is not inside a git repository',
      });
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
    const forwarded = await viaShim(['skill-index', '--json']);
    expect(forwarded).toMatchObject({ code: 0, stdout: 'real agent-infra-internal: skill-index --json\n' });

    const alone = await runProcess(shim, ['skill-index'], { cwd: repo.root, env: { ...env, PATH: `${shimDir}:/usr/bin:/bin` } });
    expect(alone.code).toBe(127);
    expect(alone.stderr).toContain("only 'task-orchestration' is handled here");
  });
});
