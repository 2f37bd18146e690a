import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestContext } from 'vitest';
import { approvedReview } from '../../src/demo/driver.ts';
import { CODEX_MODEL, clientVersions, makeClientHome } from '../support/agentClients.ts';
import type { ClientName, ClientVersion } from '../support/agentClients.ts';
import { agentName, batonResult, editCalls, shell } from '../support/agentScripts.ts';
import { worldFor } from '../support/agentWorld.ts';
import type { AgentWorld } from '../support/agentWorld.ts';
import type { ModelRequest, Turn } from '../support/modelServer.ts';
import { runBaton } from '../support/processes.ts';

// Issue 43, `baton task <ref> review --client <id>` with the real clients: the orchestrator runs in
// one client, baton starts the other headless as the reviewer (codex exec, claude -p) in the same
// checkout, and the reviewer's own session hooks (SessionStart, Stop) activate and seal the receipt.
// docs/clients.md "A reviewer from another vendor".

const [claudeNewest] = clientVersions('claude-code');
const [codexNewest] = clientVersions('codex');

/** A world of `orchestrator` with `reviewer` installed in the same repository, and its home and command in the world's environment. */
async function crossWorld(context: TestContext, orchestrator: ClientVersion, reviewer: ClientVersion): Promise<AgentWorld> {
  const w = await worldFor(context, orchestrator, { record: true });
  const home = makeClientHome(reviewer, w.server);
  context.onTestFinished(() => fs.rmSync(home.dir, { recursive: true, force: true }));
  // One HOME for both: Codex reads its own from CODEX_HOME.
  const { HOME: _reviewerHome, ...reviewerEnv } = home.env;
  const env = { ...process.env, ...w.env, ...w.home.env, ...reviewerEnv };
  const installed = await runBaton(['install-hooks', reviewer.client, '--trust'], { cwd: w.repo.root, env });
  expect(installed.code, installed.stderr).toBe(0);
  Object.assign(w.env, reviewerEnv, {
    [`BATON_${reviewer.client.toUpperCase().replace(/-/g, '_')}_COMMAND`]: JSON.stringify(reviewer.command),
  });
  fs.writeFileSync(path.join(w.repo.taskDir, 'analysis.md'), '# Analysis\n\nDone.\n');
  expect(await w.task('begin-or-resume')).toMatchObject({ status: 'running' });
  return w;
}

/** The reviewer's hand-over of an approved review of analysis.md, in its own client's words. */
function handOver(w: AgentWorld, reviewer: ClientName): string {
  return `${w.baton} task 01 complete-stage --stage review-analysis --round 1 --artifact review-analysis.md --agent ${agentName(reviewer)} --content - <<'BATON_ARTIFACT'\n${approvedReview('analysis.md')}BATON_ARTIFACT`;
}

/** An orchestrator that runs `commands` in its shell, one a turn, then ends its turn. */
function orchestrator(client: ClientName, commands: string[]): (request: ModelRequest) => Turn {
  return (request) => {
    const command = commands[request.step];
    return command ? { toolCalls: [shell(client, command)] } : { text: 'done' };
  };
}

function toolResults(w: AgentWorld): string[] {
  return w.server.byRole('parent').at(-1)?.toolResults ?? [];
}

/**
 * The orchestrator (the world's client) has `reviewer` review the analysis headless, then advances;
 * both answers as baton printed them, checked to be a sealed review and an advance.
 */
async function reviewedThenAdvanced(w: AgentWorld, reviewer: ClientName): Promise<Record<string, any>> {
  const run = await w.run(
    `Drive task 01 through its analysis review, by ${reviewer}.`,
    {
      parent: orchestrator(w.client, [`${w.baton} task 01 review --client ${reviewer} --timeout 150s`, `${w.baton} task 01 advance`]),
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
    await reviewedThenAdvanced(w, 'claude-code');
    const receipt = w.runFile().receipts.at(-1);
    expect(receipt).toMatchObject({ role: 'reviewer', client: 'claude-code', status: 'consumed', agent: 'claude' });
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
    const alive = fs
      .readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          return fs.readFileSync(`/proc/${pid}/environ`, 'utf8').includes(`BATON_HEADLESS_RECEIPT=${state.receipts.at(-1).id}`);
        } catch {
          return false;
        }
      });
    expect(alive).toEqual([]);
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
