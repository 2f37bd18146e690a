import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { runFilePath } from '../../src/core/taskLayout.ts';
import type { OrchestrationRun } from '../../src/core/types.ts';
import { Redis } from 'ioredis';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { parseRepositoryEntry, repositoriesKey } from '../../src/queue/keys.ts';
import { doStageWork, queueFor } from '../chaos/support.ts';
import type { StageNext } from '../chaos/support.ts';
import { TASK_ID, TASK_ID_2 } from '../support/fixtures.ts';
import { git, writeTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { HOOK_WAITS_FOR_RESULT, jsonOf, runBaton } from '../support/processes.ts';
import { useWorkerHarness } from '../support/workerHarness.ts';

// `baton hook` and `baton task` in linked worktrees (docs/architecture.md "Worktrees"): each worktree
// is a checkout of its own (its id and queue, its `.agents/workspace/`, its fingerprint, its guard),
// and the one `baton worker --repo MAIN` serves them all.

const harness = useWorkerHarness();

type Checkout = Pick<GitRepo, 'root' | 'taskDir'>;

const task = async (env: NodeJS.ProcessEnv, at: Checkout, ...args: string[]) =>
  jsonOf(await runBaton(['task', ...args, '--timeout', '30000'], { env, cwd: at.root }));
// The hook waits for its event's result, so the run file can be read right after.
const hook = (env: NodeJS.ProcessEnv, at: Checkout, phase: 'SubagentStart' | 'SubagentStop', role: string, childId: string) =>
  runBaton(['hook', 'codex'], {
    env: { ...env, ...HOOK_WAITS_FOR_RESULT },
    cwd: at.root,
    input: nativePayload('codex', phase, role, childId, at.root),
  });
const runOf = (at: Checkout, taskDir = at.taskDir) => JSON.parse(fs.readFileSync(runFilePath(taskDir), 'utf8')) as OrchestrationRun;

/** route → prepare → SubagentStart → the stage's work and `work` → complete-stage → SubagentStop, in the checkout `at`. */
async function stage(env: NodeJS.ProcessEnv, at: Checkout, childId: string, work: () => void = () => undefined): Promise<StageNext> {
  const next = (await task(env, at, TASK_ID, 'route')).next as StageNext;
  expect((await task(env, at, TASK_ID, 'prepare', '--client', 'codex')).status).toBe('running');
  expect(await hook(env, at, 'SubagentStart', next.role, childId)).toMatchObject({ code: 0, stdout: '' });
  doStageWork(at.root, at.taskDir, next);
  work();
  const stageArgs = ['--stage', next.stage, '--round', String(next.round), '--artifact', next.artifact];
  const completed = await task(env, at, TASK_ID, 'complete-stage', ...stageArgs, '--agent', 'codex');
  expect(completed.status).toBe('running');
  expect(await hook(env, at, 'SubagentStop', next.role, childId)).toMatchObject({ code: 0, stdout: '' });
  return next;
}

describe('baton hook and baton task in linked worktrees', () => {
  it('two worktrees of one repository run prepare → activate → seal at the same time with one worker; each seal has exactly its own writes', async () => {
    const main = harness.repository('worktrees-two', { env: { BATON_HOOK_BUDGET_MS: '8000' } });
    const checkouts = [harness.worktree(main, 'agent-a'), harness.worktree(main, 'agent-b')];
    const worker = await harness.startWorker(['--repo', main.repo.root], { env: main.env });
    // Each a checkout of its own: three ids, three queues.
    const ids = [main.repo.root, ...checkouts.map((at) => at.root)].map((root) => repoIdentity(root).id);
    expect(new Set(ids).size).toBe(3);
    // The main checkout's own change is nobody's.
    fs.writeFileSync(path.join(main.repo.root, 'src', 'main-only.ts'), 'export {};\n');
    await Promise.all(
      checkouts.map(async (at, index) => {
        expect((await task(main.env, at, TASK_ID, 'begin-or-resume')).status).toBe('running');
        await stage(main.env, at, `child-${index}`, () =>
          fs.writeFileSync(path.join(at.root, 'src', `agent-${index}.ts`), `export const agent = ${index};\n`),
        );
      }),
    );
    for (const [index, at] of checkouts.entries()) {
      const sealed = runOf(at).pendingDelegation!;
      expect(sealed, worker.output()).toMatchObject({ status: 'sealed', childId: `child-${index}` });
      // The fingerprint takes in the task's own directory (docs/lifecycle.md §6.3): its artifact and run file.
      const own = `.agents/workspace/active/${TASK_ID}`;
      expect(sealed.changedPaths).toEqual([`${own}/analysis.md`, `${own}/orchestration.json`, `src/agent-${index}.ts`]);
    }
    // The tasks live in each worktree's own workspace; the main repository's task was never touched.
    expect(fs.existsSync(runFilePath(main.repo.taskDir))).toBe(false);
    for (const at of checkouts) expect(worker.output()).toContain(`serving ${at.root} `);
  });

  it("a reviewer's edit in its own worktree is refused; an edit in another checkout is not the reviewer's", async () => {
    const main = harness.repository('worktrees-reviewer', { env: { BATON_HOOK_BUDGET_MS: '8000' } });
    const at = harness.worktree(main, 'review');
    await harness.startWorker(['--repo', main.repo.root], { env: main.env });
    await task(main.env, at, TASK_ID, 'begin-or-resume');
    await stage(main.env, at, 'exec-1');
    expect((await task(main.env, at, TASK_ID, 'advance')).status).toBe('running');
    const review = await stage(main.env, at, 'rev-1', () => {
      fs.writeFileSync(path.join(main.repo.root, 'src', 'main-edit.ts'), 'edited in the main checkout\n');
      fs.writeFileSync(path.join(at.root, 'src', 'retry.ts'), 'edited by the reviewer\n');
    });
    expect(review.role).toBe('reviewer');
    const status = await task(main.env, at, TASK_ID, 'status');
    expect(status.run.status).toBe('paused');
    expect(status.run.pause).toMatchObject({ code: 'DELEGATION_REVIEWER_WRITE_FORBIDDEN' });
    expect(status.run.pause.message).toMatch(/^reviewer changed forbidden path 'src\/retry\.ts'/);
    expect(status.run.pause.message).not.toContain('main-edit');
  });

  it('the one-pending-delegation guard holds within a worktree and not across worktrees', async () => {
    const main = harness.repository('worktrees-guard');
    const [a, b] = [harness.worktree(main, 'guard-a'), harness.worktree(main, 'guard-b')];
    writeTask(a.root, TASK_ID_2, '02');
    await harness.startWorker(['--repo', main.repo.root], { env: main.env });
    for (const id of [TASK_ID, TASK_ID_2]) await task(main.env, a, id, 'begin-or-resume');
    await task(main.env, b, TASK_ID, 'begin-or-resume');
    expect((await task(main.env, a, TASK_ID, 'prepare', '--client', 'codex')).status).toBe('running');
    const second = await task(main.env, a, TASK_ID_2, 'prepare', '--client', 'codex');
    expect(second.error).toMatchObject({
      code: 'ORCHESTRATION_DELEGATION_BUSY',
      message: 'the repository already has a pending lifecycle delegation',
    });
    const other = await task(main.env, b, TASK_ID, 'prepare', '--client', 'codex');
    expect(other.status).toBe('running');
    expect(runOf(b).pendingDelegation).toMatchObject({ status: 'prepared' });
  });

  it('baton worker --repo MAIN serves a worktree added while it runs and drops it once removed', async () => {
    const main = harness.repository('worktrees-follow', { env: { BATON_HOOK_BUDGET_MS: '8000' } });
    const worker = await harness.startWorker(['--repo', main.repo.root], { env: main.env });
    const at = harness.worktree(main, 'later', null);
    // A detached HEAD is a checkout like any other.
    expect((await task(main.env, at, TASK_ID, 'begin-or-resume')).status).toBe('running');
    await stage(main.env, at, 'exec-late');
    expect(runOf(at).pendingDelegation).toMatchObject({ status: 'sealed', childId: 'exec-late' });
    expect(worker.output()).toContain(`serving ${at.root} `);
    git(main.repo.root, ['worktree', 'remove', '--force', at.root]);
    await expect
      .poll(() => worker.output(), { timeout: 30_000 })
      .toContain(`${at.root}: the linked worktree was removed or pruned; no longer serving queue`);
  });
});

describe('baton worker --repo MAIN and a worktree removed with queued events', () => {
  it('reports the events still waiting in the queue of a worktree removed while they wait', async () => {
    const main = harness.repository('worktrees-pruned', { env: { BATON_HOOK_BUDGET_MS: '8000' } });
    const at = harness.worktree(main, 'pruned');
    const worker = await harness.startWorker(['--repo', main.repo.root], { env: main.env });
    expect((await task(main.env, at, TASK_ID, 'begin-or-resume')).status).toBe('running');
    expect((await task(main.env, at, TASK_ID, 'prepare', '--client', 'codex')).status).toBe('running');
    // The worktree's queue paused (as from the dashboard): its event waits.
    const queue = queueFor(inject('redisUrl'), main.prefix, at.root);
    try {
      await queue.pause();
      const started = await runBaton(['hook', 'codex'], {
        env: main.env,
        cwd: at.root,
        input: nativePayload('codex', 'SubagentStart', 'executor', 'c-1', at.root),
      });
      expect(started).toMatchObject({ code: 0, stdout: '' });
      expect(await queue.getWaitingCount()).toBe(1);
      git(main.repo.root, ['worktree', 'remove', '--force', at.root]);
      await expect
        .poll(() => worker.output(), { timeout: 30_000 })
        .toContain(
          `${at.root}: the linked worktree was removed or pruned; no longer serving queue ${queue.name}, where 1 event(s) still wait that nothing can apply (their work tree is gone)`,
        );
      expect(await queue.getWaitingCount()).toBe(1);
    } finally {
      await queue.close();
    }
  });
});

describe('baton worker --repo MAIN started after a worktree with queued events was pruned', () => {
  it('reports the events that waited in the queue of a worktree pruned while no worker ran; they stay queued', async () => {
    const main = harness.repository('worktrees-pruned-unserved', { env: { BATON_HOOK_BUDGET_MS: '2000' } });
    const at = harness.worktree(main, 'unserved');
    // No worker: the hook queues its event and says so.
    const started = await runBaton(['hook', 'codex'], {
      env: main.env,
      cwd: at.root,
      input: nativePayload('codex', 'SubagentStart', 'executor', 'c-unserved', at.root),
    });
    expect(started.code, started.stderr).toBe(0);
    // The worker to start is the main checkout's, which serves its worktrees.
    expect(started.stderr).toContain(`applied when one starts: baton worker --repo ${main.repo.root}\n`);
    const queue = queueFor(inject('redisUrl'), main.prefix, at.root);
    try {
      expect(await queue.getWaitingCount()).toBe(1);
      // The registry records the worktree with its main repository: how the worker finds it once it is gone.
      const redis = new Redis(redisOptionsFromUrl(inject('redisUrl')));
      try {
        const entry = await redis.hget(repositoriesKey(main.prefix), repoIdentity(at.root).id);
        expect(parseRepositoryEntry(entry!)).toMatchObject({ root: at.root, main: main.repo.root });
      } finally {
        redis.disconnect();
      }
      git(main.repo.root, ['worktree', 'remove', '--force', at.root]);
      git(main.repo.root, ['worktree', 'prune']);
      const worker = await harness.startWorker(['--repo', main.repo.root], { env: main.env });
      await expect
        .poll(() => worker.output(), { timeout: 15_000 })
        .toContain(
          `${at.root}: a linked worktree of ${main.repo.root} that is gone (removed or pruned before a worker served it); queue ${queue.name} holds 1 event(s) that nothing can apply (their work tree is gone); they stay in Redis, see the dashboard`,
        );
      expect(await queue.getWaitingCount()).toBe(1);
    } finally {
      await queue.close();
    }
  });
});

describe('baton worker --discover and linked worktrees', () => {
  it('follows the linked worktrees of a main checkout it discovered, within its allowed roots, before their first event', async () => {
    const main = harness.repository('worktrees-discover-follow');
    const worker = await harness.startWorker(['--discover', '--allow-root', path.dirname(main.repo.root)], { env: main.env });
    expect((await task(main.env, main.repo, TASK_ID, 'begin-or-resume')).status).toBe('running');
    expect(worker.output()).toContain(`serving ${main.repo.root} `);
    const at = harness.worktree(main, 'followed');
    await expect.poll(() => worker.output(), { timeout: 15_000 }).toContain(`serving ${at.root} `);
    expect((await task(main.env, at, TASK_ID, 'begin-or-resume')).status).toBe('running');
    expect(runOf(at).status).toBe('running');
  });

  it('serves a worktree under an allowed root from its first baton task, apart from its main checkout', async () => {
    const main = harness.repository('worktrees-discover');
    const at = harness.worktree(main, 'found');
    const worker = await harness.startWorker(['--discover', '--allow-root', path.dirname(main.repo.root)], { env: main.env });
    expect((await task(main.env, at, TASK_ID, 'begin-or-resume')).status).toBe('running');
    expect(worker.output()).toContain(`serving ${at.root} `);
    expect(worker.output()).not.toContain(`serving ${main.repo.root} `);
    expect(runOf(at).status).toBe('running');
  });
});

describe('baton new --worktree', () => {
  it('adds a worktree on a new branch beside the repository, makes the task in its own workspace and says where to start the agent', async () => {
    const main = harness.repository('worktrees-new');
    const named = jsonOf(
      await runBaton(['new', 'Bound the retry budget', '--worktree', 'fix/retry', '--json'], { env: main.env, cwd: main.repo.root }),
    );
    const dir = `${main.repo.root}-fix-retry`;
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    expect(named).toMatchObject({ worktree: dir, branch: 'fix/retry', shortId: '01', tellTheAgent: 'Run task 01 through its lifecycle.' });
    expect(git(dir, ['rev-parse', '--abbrev-ref', 'HEAD']).trim()).toBe('fix/retry');
    expect(fs.existsSync(path.join(dir, named.taskFile))).toBe(true);
    expect(fs.existsSync(path.join(main.repo.root, named.taskFile))).toBe(false);
    // The default branch is the task id; the text names the worktree to start the agent in.
    const text = await runBaton(['new', 'Second', '--worktree', '--id', 'TASK-20260101-000009'], { env: main.env, cwd: main.repo.root });
    const second = `${main.repo.root}-TASK-20260101-000009`;
    onTestFinished(() => fs.rmSync(second, { recursive: true, force: true }));
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`created worktree ${second} on a new branch TASK-20260101-000009\n`);
    expect(text.stdout).toContain(`tell your agent (start it in ${second}):\n  Run task 01 through its lifecycle.\n`);
    // An existing directory is refused before git runs.
    const again = await runBaton(['new', 'Third', '--worktree', 'fix/retry'], { env: main.env, cwd: main.repo.root });
    expect(again).toMatchObject({ code: 1, stdout: '' });
    expect(again.stderr).toContain(`${dir} exists already`);
    // The worker of the main repository serves the new worktree's task.
    await harness.startWorker(['--repo', main.repo.root], { env: main.env });
    expect((await task(main.env, { root: dir, taskDir: '' }, '01', 'begin-or-resume')).status).toBe('running');
  });
});

describe('baton runs in a repository with linked worktrees', () => {
  it("names the checkout's branch, the main repository of a worktree, and the repository's other checkouts", async () => {
    const main = harness.repository('worktrees-runs');
    const at = harness.worktree(main, 'listed');
    const detached = harness.worktree(main, 'detached', null);
    const run = await runBaton(['runs'], { env: main.env, cwd: at.root });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      `branch listed · linked worktree of ${main.repo.root}\n` +
        "the repository's other checkouts, each with its own runs (baton runs --repo DIR):\n" +
        `  ${main.repo.root} (branch main)\n  ${detached.root} (detached HEAD)\n`,
    );
    const listed = JSON.parse((await runBaton(['runs', '--json'], { env: main.env, cwd: main.repo.root })).stdout);
    expect(listed.checkout).toMatchObject({ root: main.repo.root, branch: 'main', mainRepository: null });
    expect(listed.checkout.otherCheckouts).toEqual([
      { root: detached.root, branch: null },
      { root: at.root, branch: 'listed' },
    ]);
  });
});

describe('baton runs --worktrees', () => {
  it('lists the runs of every checkout of the repository, grouped by checkout, each with its branch (text and --json)', async () => {
    const main = harness.repository('worktrees-runs-all');
    const a = harness.worktree(main, 'listed-a');
    const detached = harness.worktree(main, 'listed-d', null);
    await harness.startWorker(['--repo', main.repo.root], { env: main.env });
    for (const at of [main.repo, a]) expect((await task(main.env, at, TASK_ID, 'begin-or-resume')).status).toBe('running');
    const text = await runBaton(['runs', '--worktrees'], { env: main.env, cwd: a.root });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      `repository ${main.repo.root}: 3 checkouts, each with its own runs\n\n== ${main.repo.root} (branch main · main checkout)\n`,
    );
    const sections = text.stdout.split(/^== /m).slice(1);
    expect(sections.map((section) => section.split('\n')[0])).toEqual([
      `${main.repo.root} (branch main · main checkout)`,
      `${a.root} (branch listed-a · linked worktree)`,
      `${detached.root} (detached HEAD · linked worktree)`,
    ]);
    expect(sections[0]).toContain(TASK_ID);
    expect(sections[1]).toContain(TASK_ID);
    expect(sections[2]).toContain('no runs');
    const listed = JSON.parse((await runBaton(['runs', '--worktrees', '--json'], { env: main.env, cwd: main.repo.root })).stdout);
    expect(
      listed.worktrees.map((group: any) => [group.root, group.branch, group.mainCheckout, group.runs.map((row: any) => row.taskId)]),
    ).toEqual([
      [main.repo.root, 'main', true, [TASK_ID]],
      [a.root, 'listed-a', false, [TASK_ID]],
      [detached.root, null, false, []],
    ]);
  });
});

describe("the dashboard's runs list with linked worktrees", () => {
  it("groups a repository's worktrees under it (/api/runs and /runs), each with its branch", async () => {
    const main = harness.repository('worktrees-dashboard');
    const a = harness.worktree(main, 'board-a');
    const worker = await harness.startWorker(['--repo', main.repo.root, '--dashboard', '--port', '0'], { env: main.env });
    for (const at of [main.repo, a]) expect((await task(main.env, at, TASK_ID, 'begin-or-resume')).status).toBe('running');
    const url = /dashboard: (http:\/\/\S+)/.exec(worker.output())?.[1];
    expect(url, worker.output()).toBeDefined();
    const api = async () =>
      ((await (await fetch(new URL('/api/runs', url))).json()) as { repositories: Array<Record<string, unknown>> }).repositories;
    await expect.poll(async () => (await api()).length, { timeout: 15_000 }).toBe(2);
    expect(
      (await api())
        .map(({ root, branch, mainRepository }) => ({ root, branch, mainRepository }))
        .sort((x, y) => String(x.root).localeCompare(String(y.root))),
    ).toEqual([
      { root: main.repo.root, branch: 'main', mainRepository: null },
      { root: a.root, branch: 'board-a', mainRepository: main.repo.root },
    ]);
    const page = await (await fetch(new URL('/runs', url))).text();
    const group = page.slice(page.indexOf(`data-repository-group="${main.repo.root}"`));
    expect(group).toContain('2 checkouts, each with its own runs');
    const [first, second] = [
      group.indexOf(`data-repository="${repoIdentity(main.repo.root).id}"`),
      group.indexOf(`data-repository="${repoIdentity(a.root).id}"`),
    ];
    expect(first).toBeGreaterThan(0);
    expect(second).toBeGreaterThan(first);
    expect(group.slice(second)).toContain(
      `<span data-branch>branch board-a</span> · <span data-worktree-of>linked worktree of ${main.repo.root}</span>`,
    );
  });
});

describe('baton hook in a worktree that cannot be served', () => {
  it('a worktree whose main repository is gone: the hook says so and what to do, and creates nothing', async () => {
    const main = harness.repository('worktrees-gone');
    const at = harness.worktree(main, 'orphan');
    const gitDir = path.join(main.repo.root, '.git', 'worktrees', path.basename(at.root));
    fs.rmSync(path.join(main.repo.root, '.git'), { recursive: true });
    const run = await runBaton(['hook', 'codex'], {
      env: main.env,
      cwd: at.root,
      input: nativePayload('codex', 'SubagentStart', 'executor', 'c', at.root),
    });
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toContain(`${at.root} is a linked worktree whose git directory is gone`);
    expect(run.stderr).toContain(`git worktree repair ${at.root}`);
    expect(fs.existsSync(gitDir)).toBe(false);
  });
});
