import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clientVersions } from '../support/agentClients.ts';
import {
  ACCEPT_EDITS,
  EXECUTOR,
  REVIEWER,
  asOffered,
  editMade,
  editingTurns,
  executorThatCompletes,
  parentThatSpawns,
  shell,
  spawn,
  spawnedIds,
  waitForChildren,
} from '../support/agentScripts.ts';
import { observeOnly, preparedReview, recordedPayloads, reviewHandOver, worldFor } from '../support/agentWorld.ts';
import { git } from '../support/gitRepo.ts';

// With the real clients (the newest of each): what the clients do beyond the
// hand-written payloads, and what baton recorded.

const [claude] = clientVersions('claude-code');
const [codex] = clientVersions('codex');

const ALLOWED_CODEX_OUTPUT = new Set(['continue', 'stopReason', 'suppressOutput', 'systemMessage', 'hookSpecificOutput']);

describe.concurrent('real clients: hook semantics', { timeout: 240_000 }, () => {
  it(`${codex!.label} accepts every answer of baton's hooks (empty stdout or a hook-output object)`, async (context) => {
    const w = await worldFor(context, codex!, { record: true });
    expect((await w.task('begin-or-resume')).status).toBe('running');
    expect((await w.task('prepare', '--client', 'codex')).status).toBe('running');
    const run = await w.run('Drive task 01 through its analysis stage.', {
      parent: parentThatSpawns('codex', spawn('codex', EXECUTOR, 'Run analyze-task for task 01.'), [`${w.baton} task 01 advance`]),
      executor: executorThatCompletes('codex', w.baton),
    });
    expect(run.code).toBe(0);
    const hooks = recordedPayloads(w);
    expect(hooks.map((hook) => hook.event)).toEqual(['PreToolUse', 'SubagentStart', 'SubagentStop']);
    for (const hook of hooks) {
      expect(hook.code, hook.stderr).toBe(0);
      const out = hook.stdout.trim();
      if (out === '') continue;
      const parsed = JSON.parse(out) as Record<string, unknown>;
      for (const key of Object.keys(parsed)) expect(ALLOWED_CODEX_OUTPUT.has(key), `${hook.event} printed ${out}`).toBe(true);
    }
    expect(w.runFile().receipts[0]).toMatchObject({ status: 'consumed' });
  });

  it(`${claude!.label}: a reviewer resumed with SendMessage after its seal that edits code pauses the run`, async (context) => {
    const w = await worldFor(context, claude!, { record: true });
    expect((await preparedReview(w)).next).toMatchObject({ stage: 'review-analysis', role: 'reviewer' });
    const review = reviewHandOver(w);
    const retry = path.join(w.repo.root, 'src', 'retry.ts');
    // The resumed turn changes code with Claude Code's own Read and Edit.
    const fix = { file: path.join('src', 'retry.ts'), before: fs.readFileSync(retry, 'utf8'), after: 'export const retries = 3;\n' };
    const edit = editingTurns('claude-code', w.repo.root, fix, 'fixed src/retry.ts');
    let childId = '';
    await w.run(
      'Review the analysis of task 01.',
      {
        parent: (request) => {
          if (request.step === 0)
            return { toolCalls: [asOffered(spawn('claude-code', REVIEWER, 'Run review-analysis for task 01.'), request)] };
          if (request.step === 1) {
            childId = /agentId: (\w+)/.exec(request.toolResults.at(-1) ?? '')?.[1] ?? '';
            return { toolCalls: [{ name: 'SendMessage', input: { to: childId, message: 'Also fix src/retry.ts', summary: 'fix retry' } }] };
          }
          return { text: 'asked the reviewer' };
        },
        reviewer: (request) => {
          if (request.step === 0) return { toolCalls: [shell('claude-code', review)] };
          if (request.step === 1) return { text: 'review-analysis.md written.' };
          return edit.turn(request, 2);
        },
      },
      60_000,
      // The user accepts edits (claude -p denies an Edit its permissions do not allow).
      { extraArgs: ACCEPT_EDITS['claude-code'] },
    );
    expect(childId).not.toBe('');
    // SendMessage resumes the child in the background: its second SubagentStop comes later.
    await context.expect.poll(() => w.runFile().status, { timeout: 60_000 }).toBe('paused');
    // The edit was the client's: its Edit tool said so, and the file holds what the call asked for.
    expect(w.server.scriptErrors).toEqual([]);
    expect(edit.answer()).toMatch(editMade('claude-code', fix));
    expect(fs.readFileSync(retry, 'utf8')).toBe(fix.after);
    const runFile = w.runFile();
    expect(runFile.pause).toMatchObject({ code: 'DELEGATION_REVIEWER_WRITE_FORBIDDEN' });
    expect(runFile.pause.message).toContain('src/retry.ts');
    const starts = recordedPayloads(w).filter((hook) => hook.event === 'SubagentStart');
    expect(starts.map((hook) => hook.payload.agent_id)).toEqual([childId, childId]);
  });

  it(`${codex!.label}: a follow-up turn of a sealed child (send_input) that changes nothing leaves the run running`, async (context) => {
    const w = await worldFor(context, codex!, { record: true });
    expect((await w.task('begin-or-resume')).status).toBe('running');
    expect((await w.task('prepare', '--client', 'codex')).status).toBe('running');
    const complete = executorThatCompletes('codex', w.baton);
    await w.run('Drive task 01 through its analysis stage.', {
      parent: (request) => {
        const ids = spawnedIds(request);
        if (request.step === 0) return { toolCalls: [spawn('codex', EXECUTOR, 'Run analyze-task for task 01.')] };
        if (request.step === 1 || request.step === 3) return waitForChildren(request);
        if (request.step === 2)
          return { toolCalls: [{ name: 'multi_agent_v1.send_input', input: { target: ids[0], message: 'Summarise what you wrote.' } }] };
        if (request.step === 4) return { toolCalls: [shell('codex', `${w.baton} task 01 advance`)] };
        return { text: 'done' };
      },
      executor: (request) => (request.step < 2 ? complete(request) : { text: 'analysis.md holds the analysis.' }),
    });
    const stops = recordedPayloads(w).filter((hook) => hook.event === 'SubagentStop');
    expect(stops).toHaveLength(2);
    expect(new Set(stops.map((hook) => hook.payload.turn_id)).size).toBe(2);
    const runFile = w.runFile();
    expect(runFile.status).toBe('running');
    expect(runFile.pause).toBeNull();
    expect(runFile.receipts[0]).toMatchObject({ status: 'consumed', stage: 'analysis' });
  });

  for (const version of [claude!, codex!]) {
    it(`${version.label}: two lifecycle spawns in one message, exactly one runs`, async (context) => {
      const w = await worldFor(context, version, { record: true });
      expect((await w.task('begin-or-resume')).status).toBe('running');
      expect((await w.task('prepare', '--client', version.client)).status).toBe('running');
      const first = spawn(version.client, EXECUTOR, 'Run analyze-task for task 01.');
      const second = spawn(version.client, EXECUTOR, 'Run analyze-task for task 01 (again).');
      await w.run('Drive task 01 through its analysis stage.', {
        parent: (request) => {
          if (request.step === 0) return { toolCalls: [asOffered(first, request), asOffered(second, request)] };
          if (version.client === 'codex' && request.step === 1) return waitForChildren(request);
          if (request.step === (version.client === 'codex' ? 2 : 1))
            return { toolCalls: [shell(version.client, `${w.baton} task 01 advance`)] };
          return { text: 'done' };
        },
        executor: executorThatCompletes(version.client, w.baton),
      });
      const pre = recordedPayloads(w).filter((hook) => hook.event === 'PreToolUse');
      expect(pre.map((hook) => hook.code).sort()).toEqual([0, 2]);
      // Claude Code runs both PreToolUse hooks before either child starts: the second finds the
      // delegation claimed. Codex runs the calls one after the other: the second finds it activated.
      expect(pre.find((hook) => hook.code === 2)!.stderr).toMatch(
        version.client === 'claude-code'
          ? /DELEGATION_SPAWN_CLAIMED/
          : /DELEGATION_SPAWN_CLAIMED|ORCHESTRATION_DELEGATION_MISSING: .*pending delegation .* activated/,
      );
      expect(recordedPayloads(w).filter((hook) => hook.event === 'SubagentStart')).toHaveLength(1);
      const runFile = w.runFile();
      expect(runFile.pause).toBeNull();
      expect(runFile.receipts[0]).toMatchObject({ status: 'consumed', stage: 'analysis' });
    });
  }

  for (const version of [claude!, codex!]) {
    it(`${version.label}: an agent without REDIS_URL reaches the Redis its repository's worker uses`, async (context) => {
      const w = await worldFor(context, version, { agentKnowsRedis: false, record: true });
      expect((await w.task('begin-or-resume')).status).toBe('running');
      expect((await w.task('prepare', '--client', version.client)).status).toBe('running');
      await w.run('Drive task 01 through its analysis stage.', {
        parent: parentThatSpawns(version.client, spawn(version.client, EXECUTOR, 'Run analyze-task for task 01.'), [
          `${w.baton} task 01 advance`,
        ]),
        executor: executorThatCompletes(version.client, w.baton),
      });
      const hooks = recordedPayloads(w);
      expect(hooks.map((hook) => hook.event)).toEqual(['PreToolUse', 'SubagentStart', 'SubagentStop']);
      for (const hook of hooks) expect(hook.stderr, hook.event).not.toMatch(/spooled|unreachable|not configured/i);
      expect(
        fs.existsSync(path.join(w.repo.root, '.git', 'baton', 'spool'))
          ? fs.readdirSync(path.join(w.repo.root, '.git', 'baton', 'spool'))
          : [],
      ).toEqual([]);
      expect(w.runFile().receipts[0]).toMatchObject({ status: 'consumed', stage: 'analysis' });
    });
  }

  it(`${codex!.label}: a forked lifecycle spawn (fork_context) is refused with DELEGATION_FORK_FORBIDDEN`, async (context) => {
    const w = await worldFor(context, codex!, { record: true });
    expect((await w.task('begin-or-resume')).status).toBe('running');
    expect((await w.task('prepare', '--client', 'codex')).status).toBe('running');
    await w.run('Spawn the executor with your context.', {
      parent: parentThatSpawns('codex', spawn('codex', EXECUTOR, 'Run analyze-task for task 01.', { fork_context: true })),
      executor: executorThatCompletes('codex', w.baton),
    });
    expect(w.server.byRole('executor')).toEqual([]);
    expect(w.server.byRole('parent').at(-1)!.toolResults.join('\n')).toContain('DELEGATION_FORK_FORBIDDEN');
    expect(w.runFile().pendingDelegation).toMatchObject({ status: 'prepared' });
    expect(w.runFile().pause).toBeNull();
  });

  it(`${claude!.label}: a lifecycle spawn with isolation "worktree" is refused with a reason`, async (context) => {
    const w = await worldFor(context, claude!, { record: true });
    expect((await w.task('begin-or-resume')).status).toBe('running');
    expect((await w.task('prepare', '--client', 'claude-code')).status).toBe('running');
    await w.run('Spawn the executor in a worktree.', {
      parent: parentThatSpawns('claude-code', spawn('claude-code', EXECUTOR, 'Run analyze-task for task 01.', { isolation: 'worktree' })),
      executor: executorThatCompletes('claude-code', w.baton),
    });
    expect(w.server.byRole('executor')).toEqual([]);
    const refused = w.server.byRole('parent').at(-1)!.toolResults.join('\n');
    expect(refused).toContain('DELEGATION_ISOLATION_FORBIDDEN');
    expect(refused).toContain(
      'Spawn it without isolation; to run agents side by side, give each task its own worktree (baton new --worktree',
    );
    expect(w.runFile().pendingDelegation).toMatchObject({ status: 'prepared' });
    expect(fs.existsSync(path.join(w.repo.root, '.claude', 'worktrees'))).toBe(false);
  });

  // What the refusal rests on (docs/clients.md "Worktree isolation"): with the spawn let through
  // (the PreToolUse hook only records), where Claude Code makes the worktree and what the hooks carry.
  it(`${claude!.label}: Agent isolation "worktree" runs the child in .claude/worktrees/agent-<agent_id> made from HEAD, without the task; SubagentStart/Stop and the child's tool hooks carry that cwd`, async (context) => {
    const w = await worldFor(context, claude!, { record: true });
    observeOnly(w, 'PreToolUse', ['Task|Agent', 'Bash']);
    observeOnly(w, 'PostToolUse', ['Task|Agent']);
    expect((await w.task('begin-or-resume')).status).toBe('running');
    expect((await w.task('prepare', '--client', 'claude-code')).status).toBe('running');
    const head = git(w.repo.root, ['rev-parse', 'HEAD']).trim();
    const probe = 'pwd; git rev-parse --abbrev-ref HEAD; ls .agents/workspace || echo NO-TASK-HERE; echo x > src/child.ts';
    await w.run(
      'Spawn the executor in a worktree.',
      {
        parent: parentThatSpawns('claude-code', spawn('claude-code', EXECUTOR, 'Run analyze-task for task 01.', { isolation: 'worktree' })),
        executor: (request) => (request.step === 0 ? { toolCalls: [shell('claude-code', probe)] } : { text: 'done' }),
      },
      90_000,
      { extraArgs: ACCEPT_EDITS['claude-code'] },
    );
    const hooks = recordedPayloads(w);
    const start = hooks.find((hook) => hook.event === 'SubagentStart')!.payload;
    const agentId = start.agent_id as string;
    const worktree = path.join(w.repo.root, '.claude', 'worktrees', `agent-${agentId}`);
    // Made after PreToolUse, before SubagentStart, on a new branch from HEAD (main's uncommitted files are not there).
    expect(git(w.repo.root, ['worktree', 'list', '--porcelain'])).toContain(
      `worktree ${worktree}\nHEAD ${head}\nbranch refs/heads/worktree-agent-${agentId}\n`,
    );
    const cwdOf = (event: string, tool?: string) =>
      hooks.filter((hook) => hook.event === event && (!tool || hook.payload.tool_name === tool)).map((hook) => hook.payload.cwd);
    expect(cwdOf('PreToolUse', 'Agent')).toEqual([w.repo.root]);
    expect(cwdOf('SubagentStart')).toEqual([worktree]);
    expect(hooks.find((hook) => hook.payload.tool_name === 'Bash')!.payload).toMatchObject({ cwd: worktree, agent_id: agentId });
    expect(cwdOf('SubagentStop')).toEqual([worktree]);
    expect(hooks.find((hook) => hook.event === 'PostToolUse')!.payload).toMatchObject({
      cwd: w.repo.root,
      tool_response: { agentId, worktreePath: worktree, worktreeBranch: `worktree-agent-${agentId}` },
    });
    const probed = w.server.byRole('executor')[1]!.toolResults.join('\n');
    expect(probed).toContain(`${worktree}\nworktree-agent-${agentId}\n`);
    expect(probed).toContain('NO-TASK-HERE');
    // The child's write stays in its worktree; the task's checkout never sees it.
    expect(fs.existsSync(path.join(worktree, 'src', 'child.ts'))).toBe(true);
    expect(fs.existsSync(path.join(w.repo.root, 'src', 'child.ts'))).toBe(false);
  });
});
