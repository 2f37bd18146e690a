import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestContext } from 'vitest';
import { approvedReview } from '../../src/demo/driver.ts';
import { CLAUDE_MODEL, CODEX_MODEL, clientVersions, makeClientHome } from '../support/agentClients.ts';
import type { ClientName, ClientVersion } from '../support/agentClients.ts';
import {
  EXECUTOR,
  agentName,
  batonResult,
  editCalls,
  executorThatCompletes,
  parentThatSpawns,
  shell,
  spawn,
} from '../support/agentScripts.ts';
import { worldFor } from '../support/agentWorld.ts';
import type { AgentWorld } from '../support/agentWorld.ts';
import type { ModelRequest, Turn } from '../support/modelServer.ts';
import { jsonOf, runBaton } from '../support/processes.ts';
import type { CliRun } from '../support/processes.ts';
import { until } from '../support/runSteps.ts';

// Issue 43, `baton task <ref> review --client <id>` with the real clients: the orchestrator runs in
// one client, baton starts the other headless as the reviewer (codex exec, claude -p) in the same
// checkout, and the reviewer's own session hooks (SessionStart, Stop) activate and seal the receipt.
// docs/clients.md "A reviewer from another vendor".

const [claudeNewest] = clientVersions('claude-code');
/** A Claude model other than the client's default, named with `--model` (an id 2.1.337 sends as named). */
const CLAUDE_OTHER_MODEL = 'claude-opus-5-5';
const [codexNewest] = clientVersions('codex');

type CrossOptions = {
  /** What .agents/baton.json records (none: the default profile). */
  record?: Record<string, string>;
  /** begin-or-resume's arguments (the later profile's model policy). */
  begin?: string[];
  /** false: no analysis.md, so the run's first stage is the analysis itself. */
  analysed?: boolean;
};

/** A world of `orchestrator` with `reviewer` installed in the same repository, and its home and command in the world's environment. */
async function crossWorld(
  context: TestContext,
  orchestrator: ClientVersion,
  reviewer: ClientVersion,
  options: CrossOptions = {},
): Promise<AgentWorld> {
  const w = await worldFor(context, orchestrator, { record: true });
  const home = makeClientHome(reviewer, w.server);
  // The reviewer's client may still be writing there as it goes (a killed one's children).
  context.onTestFinished(() => fs.rmSync(home.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }));
  // One HOME for both: Codex reads its own from CODEX_HOME.
  const { HOME: _reviewerHome, ...reviewerEnv } = home.env;
  const env = { ...process.env, ...w.env, ...w.home.env, ...reviewerEnv };
  const installed = await runBaton(['install-hooks', reviewer.client, '--trust'], { cwd: w.repo.root, env });
  expect(installed.code, installed.stderr).toBe(0);
  Object.assign(w.env, reviewerEnv, {
    [`BATON_${reviewer.client.toUpperCase().replace(/-/g, '_')}_COMMAND`]: JSON.stringify(reviewer.command),
  });
  // The worker reads .agents/baton.json for every event it applies.
  if (options.record) fs.writeFileSync(path.join(w.repo.root, '.agents/baton.json'), `${JSON.stringify(options.record)}\n`);
  if (options.analysed !== false) fs.writeFileSync(path.join(w.repo.taskDir, 'analysis.md'), '# Analysis\n\nDone.\n');
  const begun = await w.task('begin-or-resume', ...(options.begin ?? []));
  expect(begun, JSON.stringify(begun)).toMatchObject({ status: 'running', error: null });
  return w;
}

/** The processes still running with the environment baton gave the headless reviewer of `receiptId` (read from /proc). */
function reviewerProcesses(receiptId: string): string[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/environ`, 'utf8').includes(`BATON_HEADLESS_RECEIPT=${receiptId}`);
      } catch {
        return false;
      }
    });
}

/** The reviewer's hand-over of an approved review of analysis.md, in its own client's words. */
function handOver(w: AgentWorld, reviewer: ClientName): string {
  return `${w.baton} task 01 complete-stage --stage review-analysis --round 1 --artifact review-analysis.md --agent ${agentName(reviewer)} --content - <<'BATON_ARTIFACT'\n${approvedReview('analysis.md')}BATON_ARTIFACT`;
}

/**
 * Codex's shell answers a command still running after its yield time (10 s by default) with this and
 * a session id; its model then polls the session with write_stdin, as the scripted one does.
 */
const STILL_RUNNING = /Process running with session ID (\d+)/;

/** An orchestrator that runs `commands` in its shell, one a turn (waiting out a long one), then ends its turn. */
function orchestrator(client: ClientName, commands: string[]): (request: ModelRequest) => Turn {
  return (request) => {
    const running = STILL_RUNNING.exec(request.toolResults.at(-1) ?? '');
    if (client === 'codex' && running)
      return { toolCalls: [{ name: 'write_stdin', input: { session_id: Number(running[1]), chars: '', yield_time_ms: 30_000 } }] };
    const command = commands[request.toolResults.filter((result) => !STILL_RUNNING.test(result)).length];
    return command ? { toolCalls: [shell(client, command)] } : { text: 'done' };
  };
}

/**
 * What each of the orchestrator's commands printed: with Codex, a command still running when its shell
 * answered is the answers up to the one that says it ended, joined (what it printed may come in any of them).
 */
function toolResults(w: AgentWorld): string[] {
  const printed: string[] = [];
  let running = '';
  for (const result of w.server.byRole('parent').at(-1)?.toolResults ?? []) {
    if (STILL_RUNNING.test(result)) running += `${result}\n`;
    else {
      printed.push(`${running}${result}`);
      running = '';
    }
  }
  return printed;
}

/**
 * `baton task 01 review --client codex` run by the test as an orchestrator's shell would, its Codex
 * reviewer working on a command that does not end: resolves once the delegation is activated (its
 * SessionStart) and that command runs with baton's variable (so reviewerProcesses sees what the
 * reviewer started, not only the client). `ctrlC` sends the command SIGINT.
 */
async function reviewWorking(w: AgentWorld): Promise<{ waiting: Promise<CliRun>; receiptId: string; ctrlC: AbortController }> {
  w.server.setScript({ reviewer: () => ({ toolCalls: [shell('codex', 'sleep 600')] }) });
  const ctrlC = new AbortController();
  const waiting = runBaton(['task', '01', 'review', '--client', 'codex', '--timeout', '150s'], {
    cwd: w.repo.root,
    env: { ...process.env, ...w.env },
    timeoutMs: 150_000,
    interrupt: ctrlC.signal,
  });
  const working = () => {
    const pending = w.runFile().pendingDelegation;
    if (pending?.status !== 'activated') return false;
    return reviewerProcesses(pending.id).some((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('600');
      } catch {
        return false;
      }
    });
  };
  await until(working, 'the headless reviewer working on its command', 90_000);
  return { waiting, receiptId: w.runFile().pendingDelegation.id, ctrlC };
}

/**
 * The answer of a `baton task … review` that gave its reviewer up: exit 1 with `code`, no process
 * with the reviewer's environment left, its delegation released (aborted). The result.
 */
function givenUp(w: AgentWorld, run: CliRun, receiptId: string, code: string): Record<string, any> {
  expect(run.code, run.stderr).toBe(1);
  const result = jsonOf(run);
  expect(result, JSON.stringify(result)).toMatchObject({ status: 'failed', error: { code } });
  expect(reviewerProcesses(receiptId)).toEqual([]);
  const state = w.runFile();
  expect(state.pendingDelegation).toBeNull();
  expect(state.receipts.at(-1)).toMatchObject({ id: receiptId, client: 'codex', status: 'aborted' });
  return result;
}

/**
 * The orchestrator (the world's client) has `reviewer` review the analysis headless, then advances;
 * both answers as baton printed them, checked to be a sealed review and an advance.
 */
async function reviewedThenAdvanced(w: AgentWorld, reviewer: ClientName, reviewArgs = ''): Promise<Record<string, any>> {
  const run = await w.run(
    `Drive task 01 through its analysis review, by ${reviewer}.`,
    {
      parent: orchestrator(w.client, [
        `${w.baton} task 01 review --client ${reviewer} --timeout 150s${reviewArgs}`,
        `${w.baton} task 01 advance`,
      ]),
      reviewer: (request) => (request.step === 0 ? { toolCalls: [shell(reviewer, handOver(w, reviewer))] } : { text: 'reviewed' }),
    },
    200_000,
  );
  expect(w.server.scriptErrors).toEqual([]);
  expect(run.code, `${run.stderr}\n${run.stdout.slice(-3000)}`).toBe(0);
  const [reviewed, advanced] = toolResults(w).map((result) => batonResult(result));
  expect(reviewed, JSON.stringify(reviewed)).toMatchObject({
    status: 'running',
    error: null,
    run: { pendingDelegation: { status: 'sealed' } },
  });
  expect(advanced, JSON.stringify(advanced)).toMatchObject({ status: 'running', error: null, run: { pendingDelegation: null } });
  return reviewed!;
}

describe.concurrent('real clients: cross-vendor review (baton task review --client)', { timeout: 240_000 }, () => {
  it(`cross-vendor review: a ${claudeNewest!.label} orchestrator's analysis reviewed by ${codexNewest!.label} (codex exec), sealed by Codex's own hooks, then advance`, async (context) => {
    const w = await crossWorld(context, claudeNewest!, codexNewest!);
    const reviewed = await reviewedThenAdvanced(w, 'codex');
    // The Codex reviewer's requests reached the scripted server as the reviewer's, with baton's profile.
    expect(w.server.byRole('reviewer').length).toBeGreaterThan(0);
    const receipt = w.runFile().receipts.at(-1);
    expect(receipt).toMatchObject({ role: 'reviewer', client: 'codex', status: 'consumed', agent: 'codex', actualModel: CODEX_MODEL });
    expect(receipt.parentId).toBe(`baton-headless:${receipt.id}`);
    expect(receipt.childId).toMatch(/^[0-9a-f-]{36}$/);
    expect(w.readTaskFile('review-analysis.md')).toContain('analysis.md');
    // Its output is kept.
    expect(fs.existsSync(reviewed.review.log)).toBe(true);
  });

  it(`cross-vendor review: a ${codexNewest!.label} orchestrator's analysis reviewed by ${claudeNewest!.label} (claude -p), sealed by Claude Code's own hooks, then advance`, async (context) => {
    const w = await crossWorld(context, codexNewest!, claudeNewest!);
    await reviewedThenAdvanced(w, 'claude-code', ` --model ${CLAUDE_OTHER_MODEL}`);
    const receipt = w.runFile().receipts.at(-1);
    expect(receipt).toMatchObject({ role: 'reviewer', client: 'claude-code', status: 'consumed', agent: 'claude' });
    // --model reaches claude -p (the scripted server sees it), but Claude Code's SessionStart (and Stop)
    // carry no model, even with --model: the receipt has no actual model, and its vendor is the client's.
    expect(new Set(w.server.byRole('reviewer').map((request) => request.body.model))).toEqual(new Set([CLAUDE_OTHER_MODEL]));
    expect(receipt).toMatchObject({ requestedModel: CLAUDE_OTHER_MODEL, actualModel: null });
    expect(receipt.parentId).toBe(`baton-headless:${receipt.id}`);
    expect(w.server.byRole('reviewer').map((request) => request.api)).toContain('anthropic');
  });

  it('baton task review: a headless reviewer that edits a file is refused at its stop (DELEGATION_REVIEWER_WRITE_FORBIDDEN)', async (context) => {
    const w = await crossWorld(context, claudeNewest!, codexNewest!);
    const edit = editCalls('codex', w.repo.root, { file: 'reviewer-notes.txt', after: 'fixed it myself\n' });
    const run = await w.run(
      'Drive task 01 through its analysis review, by Codex.',
      {
        parent: orchestrator('claude-code', [`${w.baton} task 01 review --client codex --timeout 150s`]),
        reviewer: (request) => {
          const call =
            request.step < edit.length ? edit[request.step] : request.step === edit.length ? shell('codex', handOver(w, 'codex')) : null;
          return call ? { toolCalls: [call] } : { text: 'reviewed' };
        },
      },
      200_000,
    );
    expect(run.code, `${run.stderr}\n${run.stdout.slice(-3000)}`).toBe(0);
    expect(fs.existsSync(path.join(w.repo.root, 'reviewer-notes.txt'))).toBe(true);
    const [reviewed] = toolResults(w).map((result) => batonResult(result));
    expect(reviewed, JSON.stringify(reviewed)).toMatchObject({ status: 'failed', error: { code: 'DELEGATION_REVIEWER_WRITE_FORBIDDEN' } });
    expect(reviewed!.error.message).toContain('reviewer-notes.txt');
    const state = w.runFile();
    expect(state).toMatchObject({ status: 'paused', pause: { code: 'DELEGATION_REVIEWER_WRITE_FORBIDDEN' } });
    expect(state.pendingDelegation).toMatchObject({ client: 'codex', status: 'stage-completed' });
  });

  it('baton task review: a reviewer that hangs is stopped at --timeout, its delegation released and its output kept (BATON_REVIEWER_TIMEOUT)', async (context) => {
    const w = await crossWorld(context, claudeNewest!, codexNewest!);
    const run = await w.run(
      'Drive task 01 through its analysis review, by Codex.',
      {
        parent: orchestrator('claude-code', [`${w.baton} task 01 review --client codex --timeout 15s`]),
        // It never hands a review over: every turn waits on a command that does not end.
        reviewer: () => ({ toolCalls: [shell('codex', 'sleep 600')] }),
      },
      200_000,
    );
    expect(run.code, `${run.stderr}\n${run.stdout.slice(-3000)}`).toBe(0);
    const [reviewed] = toolResults(w).map((result) => batonResult(result));
    expect(reviewed, JSON.stringify(reviewed)).toMatchObject({ status: 'failed', error: { code: 'BATON_REVIEWER_TIMEOUT' } });
    const log = /kept in (\S+\.log)/.exec(reviewed!.error.message)?.[1];
    expect(log && fs.existsSync(log), reviewed!.error.message).toBe(true);
    const state = w.runFile();
    expect(state.pendingDelegation).toBeNull();
    expect(state.receipts.at(-1)).toMatchObject({ client: 'codex', status: 'aborted' });
    // No reviewer process outlives the command (its process group was stopped).
    expect(reviewerProcesses(state.receipts.at(-1).id)).toEqual([]);
  });

  it(`cross-vendor review under reviewerVendor "different": a ${claudeNewest!.label} executor subagent's analysis, a Claude Code review of it refused (BATON_REVIEWER_VENDOR_REQUIRED), Codex's review sealed, then advance`, async (context) => {
    const w = await crossWorld(context, claudeNewest!, codexNewest!, {
      record: { profile: 'agent-infra-0.11.3', reviewerVendor: 'different' },
      begin: ['--executor-model', CLAUDE_MODEL, '--reviewer-model', CODEX_MODEL],
      analysed: false,
    });
    const prepared = await w.task('prepare', '--client', 'claude-code');
    expect(prepared, JSON.stringify(prepared)).toMatchObject({ error: null, run: { pendingDelegation: { role: 'executor' } } });
    const run = await w.run(
      'Drive task 01 through its analysis, by a subagent, and its review, by Codex.',
      {
        parent: parentThatSpawns('claude-code', spawn('claude-code', EXECUTOR, 'Run analyze-task for task 01, round 1.'), [
          `${w.baton} task 01 advance`,
          `${w.baton} task 01 prepare --client claude-code`,
          `${w.baton} task 01 review --client codex --timeout 150s`,
          `${w.baton} task 01 advance`,
        ]),
        executor: executorThatCompletes('claude-code', w.baton),
        reviewer: (request) => (request.step === 0 ? { toolCalls: [shell('codex', handOver(w, 'codex'))] } : { text: 'reviewed' }),
      },
      200_000,
    );
    expect(w.server.scriptErrors).toEqual([]);
    expect(run.code, `${run.stderr}\n${run.stdout.slice(-3000)}`).toBe(0);
    // The first tool result is the Agent call's.
    const [executorAdvanced, refused, reviewed, advanced] = toolResults(w)
      .slice(1)
      .map((result) => batonResult(result));
    expect(executorAdvanced, JSON.stringify(executorAdvanced)).toMatchObject({
      status: 'running',
      error: null,
      run: { pendingDelegation: null },
    });
    expect(refused, JSON.stringify(refused)).toMatchObject({ status: 'failed', error: { code: 'BATON_REVIEWER_VENDOR_REQUIRED' } });
    expect(refused!.error.message).toContain('would run in anthropic, the vendor of its executor');
    expect(refused!.error.message).toContain('baton task TASK-');
    expect(reviewed, JSON.stringify(reviewed)).toMatchObject({
      status: 'running',
      error: null,
      run: { pendingDelegation: { status: 'sealed', client: 'codex', vendor: 'openai' } },
    });
    expect(advanced, JSON.stringify(advanced)).toMatchObject({ status: 'running', error: null, run: { pendingDelegation: null } });
    const [executor, reviewer, ...more] = w.runFile().receipts;
    expect(more).toEqual([]);
    expect(executor).toMatchObject({ role: 'executor', client: 'claude-code', agent: 'claude', status: 'consumed', vendor: 'anthropic' });
    expect(reviewer).toMatchObject({ role: 'reviewer', client: 'codex', status: 'consumed', vendor: 'openai', actualModel: CODEX_MODEL });
  });

  it('baton task review: a reviewer that exits without a sealed review (its client killed, no Stop hook) is BATON_REVIEWER_EXITED, its delegation released and its output kept', async (context) => {
    const w = await crossWorld(context, claudeNewest!, codexNewest!);
    const { waiting, receiptId } = await reviewWorking(w);
    // The reviewer's client dies (SIGKILL, as the OOM killer would): no Stop hook runs. Killed: the
    // process baton started, the one of baton's variable whose parent has it not.
    const processes = reviewerProcesses(receiptId);
    // A process may end between the listing and this read (a hook the reviewer ran): no parent then.
    const parentOf = (pid: string) => {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
      } catch {
        return undefined;
      }
    };
    const commandLine = (pid: string) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      } catch {
        return '';
      }
    };
    // Its parent is the waiting `baton task 01 review` itself (a process whose own parent ended, a
    // hook's, is reparented elsewhere; one gone by now has no parent to read).
    const started = processes.filter((pid) => {
      const parent = parentOf(pid);
      return parent !== undefined && !processes.includes(parent) && commandLine(parent).includes(' task 01 review ');
    });
    expect(started, processes.map((pid) => `${pid} < ${parentOf(pid)}`).join(', ')).toHaveLength(1);
    process.kill(Number(started[0]), 'SIGKILL');
    const exited = await waiting;
    // What it left running (its shell's command) went with its process group.
    const result = givenUp(w, exited, receiptId, 'BATON_REVIEWER_EXITED');
    expect(result.error.message).toContain('exited (SIGKILL) without a sealed review (delegation activated)');
    const log = /kept in (\S+\.log)/.exec(result.error.message)?.[1];
    expect(log && fs.existsSync(log), result.error.message).toBe(true);
  });

  it('baton task review: Ctrl-C (SIGINT) of the waiting command stops its reviewer, leaves no process of it, and releases the delegation (BATON_REVIEWER_INTERRUPTED)', async (context) => {
    const w = await crossWorld(context, claudeNewest!, codexNewest!);
    const { waiting, receiptId, ctrlC } = await reviewWorking(w);
    ctrlC.abort();
    // No orphan: nothing of the reviewer's process group (nor anything it started) outlives the command.
    const result = givenUp(w, await waiting, receiptId, 'BATON_REVIEWER_INTERRUPTED');
    expect(result.error.message).toContain('interrupted (SIGINT)');
  });

  it('baton task review: a client that is not installed or not logged in is an error before anything is prepared', async (context) => {
    const w = await crossWorld(context, claudeNewest!, codexNewest!);
    const env = { ...process.env, ...w.env };
    const missing = await runBaton(['task', '01', 'review', '--client', 'codex'], {
      cwd: w.repo.root,
      env: { ...env, BATON_CODEX_COMMAND: path.join(w.repo.root, 'no-such-codex') },
    });
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toMatchObject({ status: 'failed', error: { code: 'BATON_CLIENT_NOT_INSTALLED' } });
    const emptyHome = fs.mkdtempSync(path.join(w.redis.dir, 'codex-home-'));
    const loggedOut = await runBaton(['task', '01', 'review', '--client', 'codex'], {
      cwd: w.repo.root,
      env: { ...env, CODEX_HOME: emptyHome, SCRIPTED_API_KEY: '' },
    });
    expect(JSON.parse(loggedOut.stdout)).toMatchObject({ status: 'failed', error: { code: 'BATON_CLIENT_NOT_LOGGED_IN' } });
    expect(w.runFile().pendingDelegation).toBeNull();
  });
});
