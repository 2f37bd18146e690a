import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { metricsKey } from '../../src/queue/keys.ts';
import type { OrchestrationRun } from '../../src/core/types.ts';
import { TASK_ID } from '../support/fixtures.ts';
import { git } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { preToolUsePayload } from '../support/hookPayloads.ts';
import { jsonOf, runBaton } from '../support/processes.ts';
import { useWorkerHarness } from '../support/workerHarness.ts';
import type { CliRun, WorkerProcess } from '../support/processes.ts';
import { doStageWork, queueFor } from '../chaos/support.ts';
import type { StageNext } from '../chaos/support.ts';

// Hook semantics with the real clients' behaviour (docs/hooks.md), through `baton hook` processes,
// the queue and a worker process: the output contract, the spawn claim, later turns of a child,
// deduplication that cannot swallow a new delegation, and which Redis a hook uses.

const redisUrl = inject('redisUrl');
const harness = useWorkerHarness();
let repo: GitRepo;
let worker: WorkerProcess | null = null;
let env: NodeJS.ProcessEnv;

async function setUp(label: string, startWorker = true) {
  ({ repo, env } = harness.repository(label, { env: { BATON_HOOK_BUDGET_MS: '8000' } }));
  worker = startWorker ? await harness.startWorker(['--repo', repo.root], { env }) : null;
}

const task = async (...args: string[]) => jsonOf(await runBaton(['task', TASK_ID, ...args, '--timeout', '20000'], { env, cwd: repo.root }));
type Client = 'claude-code' | 'codex';
// BATON_HOOK_VERBOSE=1 makes the hook wait for its event's result (on stderr), so the test can read
// the run file right after; stdout stays empty either way.
const hook = (
  client: Client,
  phase: 'SubagentStart' | 'SubagentStop',
  role: string,
  childId: string,
  extra: Record<string, unknown> = {},
  verbose = true,
): Promise<CliRun> =>
  runBaton(['hook', client], {
    env: verbose ? { ...env, BATON_HOOK_VERBOSE: '1' } : env,
    cwd: repo.root,
    input: JSON.stringify({ ...JSON.parse(nativePayload(client, phase, role, childId, repo.root)), ...extra }),
  });
const spawn = (
  client: Client,
  toolCallId: string,
  type = 'agent-infra-lifecycle-executor',
  input: Record<string, unknown> = {},
  runEnv = env,
) =>
  runBaton(['hook', client], {
    env: runEnv,
    cwd: repo.root,
    input: JSON.stringify({
      session_id: 'parent-session',
      cwd: repo.root,
      hook_event_name: 'PreToolUse',
      tool_name: client === 'claude-code' ? 'Agent' : 'spawn_agent',
      tool_use_id: toolCallId,
      tool_input:
        client === 'claude-code'
          ? { subagent_type: type, prompt: 'x', description: 'd', ...input }
          : { agent_type: type, message: 'x', ...input },
    }),
  });
const run = () => JSON.parse(fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8')) as OrchestrationRun;

/** route → prepare → start → stage work → complete-stage → stop (no advance); returns the stage. */
async function runStage(
  client: Client,
  childId: string,
  extra: (turn: number) => Record<string, unknown> = () => ({}),
): Promise<StageNext> {
  const next = (await task('route')).next as StageNext;
  expect((await task('prepare', '--client', client)).status).toBe('running');
  const started = await hook(client, 'SubagentStart', next.role, childId, extra(1));
  expect(started).toMatchObject({ code: 0, stdout: '' });
  doStageWork(repo.root, repo.taskDir, next);
  const agent = client === 'claude-code' ? 'claude' : 'codex';
  expect(
    (await task('complete-stage', '--stage', next.stage, '--round', String(next.round), '--artifact', next.artifact, '--agent', agent))
      .status,
  ).toBe('running');
  const stopped = await hook(client, 'SubagentStop', next.role, childId, extra(1));
  expect(stopped).toMatchObject({ code: 0, stdout: '' });
  return next;
}

/** The hook of Codex's executor exec-1 in its turn `turnId`: it exits 0 and prints nothing. */
async function quietExecTurn(phase: 'SubagentStart' | 'SubagentStop', turnId: string): Promise<void> {
  expect(await hook('codex', phase, 'executor', 'exec-1', { turn_id: turnId })).toMatchObject({ code: 0, stdout: '' });
}

/** A turn `turnId` of Codex's exec-1 that writes `file` in the repository; the status after its stop. */
async function execTurnWriting(turnId: string, file: string, content: string) {
  await quietExecTurn('SubagentStart', turnId);
  fs.writeFileSync(path.join(repo.root, file), content);
  await quietExecTurn('SubagentStop', turnId);
  return task('status');
}

/** A new set-up `name` whose run's first stage was done by `client`'s child `childId` and advanced past. */
async function firstStageConsumed(name: string, client: Client, childId: string): Promise<void> {
  await setUp(name);
  await task('begin-or-resume');
  await runStage(client, childId);
  expect((await task('advance')).status).toBe('running');
}

/** How many times a worker applied each spawn-claim intent of the checkout (src/workers/jobRecords.ts counts replays too). */
async function spawnApplications(): Promise<Record<string, number>> {
  const redis = new Redis(redisOptionsFromUrl(redisUrl));
  try {
    const fields = await redis.hgetall(metricsKey(env.BATON_PREFIX!, 'events'));
    const counts: Record<string, number> = {};
    for (const [field, count] of Object.entries(fields)) {
      const [checkout, intent, outcome] = field.split('\t');
      if (checkout !== repoIdentity(repo.root).id || !intent?.endsWith('-spawn') || !outcome?.startsWith('applied:')) continue;
      counts[intent] = (counts[intent] ?? 0) + Number(count);
    }
    return counts;
  } finally {
    redis.disconnect();
  }
}

describe('output contract', () => {
  it('SubagentStart and SubagentStop print nothing at all and exit 0 without waiting; the queue applies them in order', async () => {
    await setUp('contract');
    await task('begin-or-resume');
    const next = (await task('route')).next as StageNext;
    await task('prepare', '--client', 'codex');
    expect(await hook('codex', 'SubagentStart', next.role, 'child-1', {}, false)).toMatchObject({ code: 0, stdout: '', stderr: '' });
    doStageWork(repo.root, repo.taskDir, next);
    expect(
      (await task('complete-stage', '--stage', next.stage, '--round', '1', '--artifact', next.artifact, '--agent', 'codex')).status,
    ).toBe('running');
    expect(await hook('codex', 'SubagentStop', next.role, 'child-1', {}, false)).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const advanced = await task('advance');
    expect(advanced.status).toBe('running');
    expect(advanced.run.receipts[0]).toMatchObject({ status: 'consumed', childId: 'child-1' });
  });
});

describe('spawn claim (PreToolUse)', () => {
  it('two concurrent lifecycle spawns with different tool call ids: exactly one passes; repeating the winner is idempotent', async () => {
    await setUp('claim');
    await task('begin-or-resume');
    await task('prepare', '--client', 'claude-code');
    const [a, b] = await Promise.all([spawn('claude-code', 'toolu_A'), spawn('claude-code', 'toolu_B')]);
    expect([a.code, b.code].sort()).toEqual([0, 2]);
    expect(a.stdout + b.stdout).toBe('');
    const loser = a.code === 2 ? a : b;
    const winner = a.code === 0 ? 'toolu_A' : 'toolu_B';
    expect(loser.stderr).toContain('baton: DELEGATION_SPAWN_CLAIMED: delegation ');
    expect(loser.stderr).toContain(`already claimed by tool call ${winner}`);
    expect(run().pendingDelegation?.spawnClaim?.toolCallId).toBe(winner);
    expect((await spawn('claude-code', winner)).code).toBe(0);
    const wrongRole = await spawn('claude-code', 'toolu_C', 'agent-infra-lifecycle-reviewer');
    expect(wrongRole.code).toBe(2);
    expect(wrongRole.stderr).toContain('baton: DELEGATION_ROLE_MISMATCH');
  });

  it('with no worker, the spawn is blocked with a reason naming baton worker and its claim withdrawn: a worker started right after applies nothing, the next spawn passes', async () => {
    await setUp('claim-noworker', false);
    const inline = ['--worker', 'inline'];
    jsonOf(await runBaton(['task', TASK_ID, 'begin-or-resume', ...inline], { env, cwd: repo.root }));
    jsonOf(await runBaton(['task', TASK_ID, 'prepare', '--client', 'codex', ...inline], { env, cwd: repo.root }));
    // A long budget: a claim left in the queue would still be within its lifetime when the worker comes.
    const blocked = await spawn('codex', 'call_1', undefined, {}, { ...env, BATON_HOOK_BUDGET_MS: '60000' });
    expect(blocked.code).toBe(2);
    expect(blocked.stderr).toMatch(
      /^baton: the spawn of agent-infra-lifecycle-executor was not claimed, so it is blocked: no worker serves .*, so the claim-spawn event h-[0-9a-f]{40} was not applied; it was withdrawn before any worker took it: it is never applied, so nothing holds the delegation\. Start the repository's worker \(baton worker --repo .*, or baton start\) and spawn again\.\n$/,
    );
    worker = await harness.startWorker(['--repo', repo.root], { env });
    const next = await spawn('codex', 'call_2');
    expect(next.code, next.stderr).toBe(0);
    expect(run().pendingDelegation?.spawnClaim?.toolCallId).toBe('call_2');
    // Never applied, counted: the queue is applied in order, so once call_2's claim is applied the
    // withdrawn one would have been before it; it has no journal record, and one claim was applied.
    const withdrawn = /claim-spawn event (h-[0-9a-f]{40})/.exec(blocked.stderr)![1]!;
    expect(fs.existsSync(path.join(repo.root, '.git', 'baton', 'journal', `${withdrawn}.json`))).toBe(false);
    expect(await spawnApplications()).toEqual({ 'claim-spawn': 1 });
  });

  it('a worker that takes the claim just as the hook gives up and does not answer: blocked, and the release queued behind the claim frees the delegation', async () => {
    await setUp('claim-taken', false);
    // The worker applies the claim, then freezes holding its job (as if stuck) until SIGCONT.
    worker = await harness.startWorker(['--repo', repo.root], { env: { ...env, BATON_FAILPOINT: 'after-commit:claim-spawn:stop' } });
    await task('begin-or-resume');
    await task('prepare', '--client', 'codex');
    const blocked = await spawn('codex', 'call_1', undefined, {}, { ...env, BATON_HOOK_BUDGET_MS: '2000' });
    expect(blocked.code).toBe(2);
    expect(blocked.stderr).toContain(
      'was not applied within the hook budget (2000 ms); a worker took it at that moment and gave no result within 1000 ms more: it may still be applied',
    );
    expect(blocked.stderr).toContain(
      'its release was queued behind the claim, so the claim does not hold the delegation once the worker applies both',
    );
    // The frozen worker did apply the claim: it holds until the release is applied.
    expect(run().pendingDelegation?.spawnClaim?.toolCallId).toBe('call_1');
    worker.child.kill('SIGCONT');
    await expect.poll(() => run().pendingDelegation?.spawnClaim, { timeout: 20_000 }).toBeUndefined();
    await worker.stop();
    worker = await harness.startWorker(['--repo', repo.root], { env });
    const next = await spawn('codex', 'call_2');
    expect(next.code, next.stderr).toBe(0);
    expect(run().pendingDelegation).toMatchObject({ status: 'prepared', spawnClaim: { toolCallId: 'call_2' } });
    // Each applied once: the frozen claim, its release, the next claim (a replay would count too).
    expect(await spawnApplications()).toEqual({ 'claim-spawn': 2, 'release-spawn': 1 });
  });

  it('with Redis unreachable, the read-only check of the run files decides, and the hook says so', async () => {
    await setUp('claim-noredis');
    await task('begin-or-resume');
    const deadRedis = { ...env, REDIS_URL: `unix://${path.join(repo.root, '.git', 'no-such-redis.sock')}`, BATON_HOOK_BUDGET_MS: '5000' };
    fs.rmSync(path.join(repo.root, '.git', 'baton', 'endpoint.json'));
    const blocked = await spawn('claude-code', 'toolu_1', undefined, {}, deadRedis);
    expect(blocked.code).toBe(2);
    expect(blocked.stderr).toContain('checked the run files instead (concurrent spawns are not serialized without the worker)');
    expect(blocked.stderr).toContain('baton: ORCHESTRATION_DELEGATION_MISSING: no lifecycle delegation is prepared');
    await task('prepare', '--client', 'claude-code');
    fs.rmSync(path.join(repo.root, '.git', 'baton', 'endpoint.json'), { force: true });
    const allowed = await spawn('claude-code', 'toolu_2', undefined, {}, deadRedis);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(JSON.parse(allowed.stdout).systemMessage).toMatch(/^baton: Redis unreachable .*checked the run files instead/s);
    // The spooled claim of the allowed call may be applied by the worker's spool drain within the
    // claim's lifetime (then it records that very call) or after it (then it expires, changing nothing).
    expect([undefined, 'toolu_2']).toContain(run().pendingDelegation?.spawnClaim?.toolCallId);
  });

  it('forked and worktree-isolated lifecycle spawns are blocked before they start', async () => {
    await setUp('claim-fork');
    await task('begin-or-resume');
    await task('prepare', '--client', 'codex');
    const fork = await runBaton(['hook', 'codex'], {
      env,
      cwd: repo.root,
      input: preToolUsePayload(repo.root, {
        tool_name: 'collaborationspawn_agent',
        tool_use_id: 'c1',
        tool_input: { agent_type: 'agent-infra-lifecycle-executor', message: 'x' },
      }),
    });
    expect(fork.code).toBe(2);
    expect(fork.stderr).toContain("DELEGATION_FORK_FORBIDDEN: spawn mode 'fork' is not fresh");
    const worktree = await spawn('claude-code', 'toolu_W', undefined, { isolation: 'worktree' });
    expect(worktree.code).toBe(2);
    expect(worktree.stderr).toContain("isolation 'worktree'");
    expect(run().pendingDelegation).toMatchObject({ status: 'prepared' });
    expect(run().pendingDelegation?.spawnClaim).toBeUndefined();
  });
});

describe('linked worktrees', () => {
  it("a hook running in a linked worktree addresses that worktree, not the main repository's run, and says nothing", async () => {
    await setUp('worktree', false);
    await harness.startWorker(['--repo', repo.root], { env });
    await task('begin-or-resume');
    await task('prepare', '--client', 'codex');
    const linked = path.join(fs.realpathSync(os.tmpdir()), `baton-linked-${process.pid}-${Date.now()}`);
    git(repo.root, ['worktree', 'add', '-q', '--detach', linked]);
    try {
      const payload = { ...JSON.parse(nativePayload('codex', 'SubagentStart', 'executor', 'wt-child', linked)) };
      const started = await runBaton(['hook', 'codex'], {
        env: { ...env, BATON_HOOK_VERBOSE: '1' },
        cwd: linked,
        input: JSON.stringify(payload),
      });
      // The worker picked the new worktree up (no "no worker serves" notice); the worktree has no task
      // of its own, so its event found no delegation there (test/integration/worktrees.test.ts runs lifecycles in worktrees).
      expect(started.stdout).toBe('');
      expect(started.stderr).toContain('ORCHESTRATION_DELEGATION_MISSING');
      expect(run().pendingDelegation).toMatchObject({ status: 'prepared' });
    } finally {
      git(repo.root, ['worktree', 'remove', '--force', linked]);
    }
  });
});

describe("Claude Code's worktree of one subagent (isolation: worktree)", () => {
  it('a lifecycle SubagentStart or SubagentStop from <main>/.claude/worktrees/agent-<agent_id> is refused with why and not queued', async () => {
    await setUp('isolation-worktree');
    await task('begin-or-resume');
    await task('prepare', '--client', 'claude-code');
    // As Claude Code makes it when the spawn gets through (docs/clients.md "Worktree isolation").
    const isolated = path.join(repo.root, '.claude', 'worktrees', 'agent-a1b2c3');
    git(repo.root, ['worktree', 'add', '-q', '-b', 'worktree-agent-a1b2c3', isolated]);
    try {
      for (const phase of ['SubagentStart', 'SubagentStop'] as const) {
        const ran = await runBaton(['hook', 'claude-code'], {
          env,
          cwd: isolated,
          input: nativePayload('claude-code', phase, 'executor', 'a1b2c3', isolated),
        });
        expect(ran).toMatchObject({ code: 1, stdout: '' });
        expect(ran.stderr).toContain(
          `baton: DELEGATION_ISOLATION_FORBIDDEN: subagent a1b2c3 runs in the worktree the client made for it (${isolated}), not in the task's checkout ${repo.root}`,
        );
      }
      // Nothing queued for that worktree, and the task's delegation is as it was.
      const queue = queueFor(redisUrl, env.BATON_PREFIX!, isolated);
      try {
        expect(await queue.getJobCountByTypes('waiting', 'active', 'completed', 'failed', 'delayed', 'prioritized')).toBe(0);
      } finally {
        await queue.close();
      }
      expect(run().pendingDelegation).toMatchObject({ status: 'prepared' });
      // A worktree of a whole session (`claude --worktree`, named otherwise) is a checkout like any other.
      const session = path.join(repo.root, '.claude', 'worktrees', 'my-feature');
      git(repo.root, ['worktree', 'add', '-q', '-b', 'my-feature', session]);
      const ordinary = await runBaton(['hook', 'claude-code'], {
        env,
        cwd: session,
        input: nativePayload('claude-code', 'SubagentStart', 'executor', 'a1b2c3', session),
      });
      expect(ordinary.stderr).not.toContain('DELEGATION_ISOLATION_FORBIDDEN');
    } finally {
      fs.rmSync(path.join(repo.root, '.claude', 'worktrees'), { recursive: true, force: true });
      git(repo.root, ['worktree', 'prune']);
    }
  });
});

describe('later turns of a child', () => {
  it('Claude Code: a reviewer resumed after its seal (same agent_id, no turn id) that edits a source file pauses the run; advance is refused until the edit is gone', async () => {
    await firstStageConsumed('resume-reviewer', 'claude-code', 'exec-1');
    const review = await runStage('claude-code', 'rev-1');
    expect(review.role).toBe('reviewer');
    const sealed = run().pendingDelegation!;
    expect(sealed).toMatchObject({ status: 'sealed' });
    // SendMessage resumes the sealed reviewer: start and stop again, identical payloads.
    expect(await hook('claude-code', 'SubagentStart', 'reviewer', 'rev-1')).toMatchObject({ code: 0, stdout: '' });
    fs.writeFileSync(path.join(repo.root, 'src', 'app.js'), 'edited by a reviewer\n');
    expect(await hook('claude-code', 'SubagentStop', 'reviewer', 'rev-1')).toMatchObject({ code: 0, stdout: '' });
    const status = await task('status');
    expect(status.run.status).toBe('paused');
    expect(status.run.pause).toMatchObject({ code: 'DELEGATION_REVIEWER_WRITE_FORBIDDEN', recoverable: true });
    expect(status.run.pause.message).toMatch(/^reviewer changed forbidden path 'src\/app\.js'; delegation \S+ cannot be consumed/);
    // The orchestrator advances anyway (0.9.2 consumed the review with the edit): refused.
    const refused = await task('advance');
    expect(refused).toMatchObject({ status: 'paused', error: { code: 'DELEGATION_REVIEWER_WRITE_FORBIDDEN' } });
    expect(refused.error.message).toContain(`git restore --source=${sealed.afterFingerprint} -- <path>`);
    expect(run()).toMatchObject({ status: 'paused', pendingDelegation: { id: sealed.id, status: 'sealed' } });
    // src/app.js did not exist when the review was sealed: deleting it is the revert.
    fs.rmSync(path.join(repo.root, 'src', 'app.js'));
    const advanced = await task('advance');
    expect(advanced.status).toBe('running');
    expect(run().receipts.at(-1)).toMatchObject({ id: sealed.id, status: 'consumed', changedPaths: sealed.changedPaths });
  });

  it('Codex: a follow-up turn of a sealed executor extends its changed paths; a turn without changes is harmless', async () => {
    await setUp('codex-turns');
    await task('begin-or-resume');
    await runStage('codex', 'exec-1');
    const sealed = run().pendingDelegation!;
    expect(sealed.status).toBe('sealed');
    // A later turn with nothing changed.
    await quietExecTurn('SubagentStop', 'turn-2');
    expect((await task('status')).run.pendingDelegation).toEqual(sealed);
    // send_input: another turn that writes a file.
    const status = await execTurnWriting('turn-3', 'NOTES.md', 'follow-up\n');
    expect(status.run.status).toBe('running');
    expect(status.run.pendingDelegation.status).toBe('sealed');
    expect(status.run.pendingDelegation.changedPaths).toEqual([...sealed.changedPaths, 'NOTES.md'].sort());
    expect(status.run.pendingDelegation.afterFingerprint).not.toBe(sealed.afterFingerprint);
    expect((await task('advance')).status).toBe('running');
  });

  it('writes in a turn after the receipt was consumed belong to no delegation: the run pauses with a clear code', async () => {
    await firstStageConsumed('after-consumed', 'codex', 'exec-1');
    const status = await execTurnWriting('turn-9', 'LATE.md', 'late\n');
    expect(status.run.status).toBe('paused');
    expect(status.run.pause.code).toBe('DELEGATION_TURN_AFTER_CONSUMED');
    expect(status.run.pause.message).toMatch(
      /^child exec-1 ran a turn after its delegation \S+ \(analysis round 1\) was consumed and changed 'LATE\.md'; these changes belong to no delegation; the run cannot be resumed/,
    );
    expect(status.run.receipts[0].changedPaths).not.toContain('LATE.md');
    // begin-or-resume would let the next prepare take LATE.md into its before-fingerprint: refused.
    expect(await task('begin-or-resume')).toMatchObject({ status: 'paused', error: { code: 'DELEGATION_TURN_AFTER_CONSUMED' } });
    fs.rmSync(path.join(repo.root, 'LATE.md'));
    expect((await task('begin-or-resume')).status).toBe('running');
    expect((await task('prepare', '--client', 'codex')).status).toBe('running');
  });
});

describe('duplicates versus new events', () => {
  it('a reused child id for a later delegation (same native ids) is not swallowed: upstream DELEGATION_IDENTITY_REUSED', async () => {
    await firstStageConsumed('identity-reuse', 'codex', 'child-x');
    expect((await task('prepare', '--client', 'codex')).status).toBe('running');
    // Exactly the first SubagentStart's payload (same session, child, type and turn id): same event id.
    const reused = await hook('codex', 'SubagentStart', 'executor', 'child-x');
    expect(reused, reused.stderr).toMatchObject({ code: 0, stdout: '' });
    const status = await task('status');
    expect(status.run.status).toBe('paused');
    expect(status.run.pause).toEqual({
      code: 'DELEGATION_IDENTITY_REUSED',
      message: 'native child identity was already used by this run',
      recoverable: true,
    });
  });
});

describe('which Redis', () => {
  it('the worker records its endpoint (mode 0600); a hook without REDIS_URL uses it', async () => {
    await setUp('endpoint');
    const file = path.join(repo.root, '.git', 'baton', 'endpoint.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ redisUrl, prefix: env.BATON_PREFIX });
    await task('begin-or-resume');
    await task('prepare', '--client', 'codex');
    const { REDIS_URL: _url, BATON_PREFIX: _prefix, ...bare } = env;
    const started = await runBaton(['hook', 'codex'], {
      env: { ...bare, BATON_HOOK_VERBOSE: '1' },
      cwd: repo.root,
      input: nativePayload('codex', 'SubagentStart', 'executor', 'c-1', repo.root),
    });
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout).toBe('');
    expect(run().pendingDelegation).toMatchObject({ status: 'activated', childId: 'c-1' });
    // `baton task` finds the same Redis and prefix the same way.
    const resumed = jsonOf(await runBaton(['task', TASK_ID, 'begin-or-resume', '--timeout', '10000'], { env: bare, cwd: repo.root }));
    expect(resumed).toMatchObject({ status: 'running', changed: false });
  });

  it('with no endpoint recorded and no REDIS_URL, the hook spools the event and says what to do', async () => {
    await setUp('no-endpoint', false);
    const { REDIS_URL: _url, BATON_PREFIX: _prefix, ...bare } = env;
    const started = await runBaton(['hook', 'codex'], {
      env: bare,
      cwd: repo.root,
      input: nativePayload('codex', 'SubagentStart', 'executor', 'c-1', repo.root),
    });
    expect(started.code).toBe(0);
    // The one hook-output field both clients accept on every event, shown to the user.
    const output = JSON.parse(started.stdout);
    expect(Object.keys(output)).toEqual(['systemMessage']);
    expect(output.systemMessage).toMatch(/^baton: WARNING: no Redis is configured for .*; it is applied once a worker runs\.$/s);
    expect(started.stderr).toContain('baton: WARNING: no Redis is configured for');
    expect(started.stderr).toContain('baton worker --repo');
    expect(fs.readdirSync(path.join(repo.root, '.git', 'baton', 'spool'))).toHaveLength(1);
  });
});
