import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { engineHarness, readRun, taskMd, tempRepo, writeApprovedThroughCode, writeTask } from '../support/fixtures.ts';
import type { Fixture } from '../support/fixtures.ts';
import { runBaton } from '../support/processes.ts';
import { startBaton } from '../support/services.ts';

// `baton runs`: every run of the repository, in every task state, as an aligned table and as JSON;
// a corrupt run file is a row, not a failure. Read-only: no Redis, no writes.

let repo: Fixture;
afterEach(() => repo.cleanup());

const ACTIVE_PENDING = 'TASK-20260101-000001';
const ACTIVE_CORRUPT = 'TASK-20260101-000002';
const ACTIVE_NO_RUN = 'TASK-20260101-000003';
const BLOCKED_PAUSED = 'TASK-20260102-000004';
const COMPLETED = 'TASK-20260103-000005';
const ARCHIVED_BETWEEN = 'TASK-20260104-000006';

function placeTask(root: string, relativeDir: string, taskId: string): string {
  const dir = path.join(root, '.agents', 'workspace', relativeDir, taskId);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'task.md'), taskMd(taskId));
  return dir;
}

function writeRun(dir: string, run: object): void {
  fs.writeFileSync(path.join(dir, 'orchestration.json'), `${JSON.stringify(run, null, 2)}\n`);
}

/** A repository with runs in every state: pending delegation, paused, completed, archived, corrupt. */
async function repositoryWithRuns(): Promise<void> {
  repo = tempRepo();
  const harness = engineHarness(repo, { ids: ['run-1', 'receipt-1a2b3c4d'] });
  const activeDir = writeTask(repo, ACTIVE_PENDING);
  expect((await harness.apply({ intent: 'begin-or-resume', taskRef: ACTIVE_PENDING })).status).toBe('running');
  expect((await harness.apply({ intent: 'prepare', taskRef: ACTIVE_PENDING, client: 'claude-code' })).status).toBe('running');
  // What advance leaves behind: no pending delegation, no next stage.
  const base = { ...readRun(activeDir), pendingDelegation: null, nextStage: null };
  fs.writeFileSync(
    path.join(repo.root, '.agents', 'workspace', 'active', '.short-ids.json'),
    JSON.stringify({ version: 1, ids: { '01': ACTIVE_PENDING, '02': ACTIVE_CORRUPT } }),
  );

  const corrupt = writeTask(repo, ACTIVE_CORRUPT);
  fs.writeFileSync(path.join(corrupt, 'orchestration.json'), '{ "schemaVersion": 1, "status": ');
  writeTask(repo, ACTIVE_NO_RUN);

  writeRun(placeTask(repo.root, 'blocked', BLOCKED_PAUSED), {
    ...base,
    taskId: BLOCKED_PAUSED,
    pendingDelegation: null,
    status: 'paused',
    stepCount: 2,
    pause: { code: 'ORCHESTRATION_HUMAN_DECISION_REQUIRED', message: 'plan review needs a human decision', recoverable: true },
  });
  writeRun(placeTask(repo.root, 'completed', COMPLETED), {
    ...base,
    taskId: COMPLETED,
    pendingDelegation: null,
    status: 'completed',
    stepCount: 7,
  });
  const archived = placeTask(repo.root, path.join('archive', '2026', '01', '05'), ARCHIVED_BETWEEN);
  writeApprovedThroughCode(archived);
  writeRun(archived, { ...base, taskId: ARCHIVED_BETWEEN, pendingDelegation: null, stepCount: 6 });
}

describe('baton runs', () => {
  it('prints an aligned table of every run, the corrupt one included, without failing', async () => {
    await repositoryWithRuns();
    const before = fs.readdirSync(path.join(repo.root, '.agents', 'workspace', 'active', ACTIVE_PENDING));
    const run = await runBaton(['runs', '--repo', repo.root], { env: { ...process.env, REDIS_URL: 'unix:///nonexistent/redis.sock' } });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    const header = lines[0]!;
    expect(header).toMatch(/^TASK\s+ID\s+STATE\s+STATUS\s+STAGE\s+ROUND\s+STEPS\s+COST\s+PENDING\s+PAUSE \/ NOTE$/);
    expect(lines).toHaveLength(8); // header + 5 runs (the task without a run is not listed), blank, checkout
    const checkout = JSON.parse(fs.readFileSync(path.join(repo.root, '.git', 'baton', 'checkout.json'), 'utf8'));
    expect(lines[7]).toBe(`queue baton-${checkout.id} · checkout ${checkout.id} on ${os.hostname()}:${fs.realpathSync(repo.root)}`);
    const row = (taskId: string) => lines.find((line) => line.startsWith(taskId))!;
    const column = (line: string, title: string) => line.slice(header.indexOf(title)).split(/\s{2,}/)[0];
    // every column starts at the same offset in every row
    expect(column(row(ACTIVE_PENDING), 'ID')).toBe('#01');
    expect(column(row(ACTIVE_PENDING), 'STATUS')).toBe('running');
    expect(column(row(ACTIVE_PENDING), 'STAGE')).toBe('analysis');
    expect(column(row(ACTIVE_PENDING), 'ROUND')).toBe('1');
    expect(column(row(ACTIVE_PENDING), 'STEPS')).toBe('0/24');
    // No receipt holds figures yet (docs/run-view.md "What a stage cost").
    expect(column(row(ACTIVE_PENDING), 'COST')).toBe('-');
    expect(column(row(ACTIVE_PENDING), 'PENDING')).toBe('receipt- executor prepared claude-code/anthropic');
    expect(column(row(ACTIVE_CORRUPT), 'STATUS')).toBe('corrupt');
    expect(row(ACTIVE_CORRUPT)).toContain('is not valid JSON');
    expect(column(row(BLOCKED_PAUSED), 'STATE')).toBe('blocked');
    expect(column(row(BLOCKED_PAUSED), 'STATUS')).toBe('paused');
    expect(row(BLOCKED_PAUSED)).toContain('ORCHESTRATION_HUMAN_DECISION_REQUIRED: plan review needs a human decision');
    expect(column(row(COMPLETED), 'STATUS')).toBe('completed');
    expect(column(row(COMPLETED), 'STAGE')).toBe('-');
    // an archived run between delegations: the stage comes from routing its artifacts
    expect(column(row(ARCHIVED_BETWEEN), 'STATE')).toBe('archive');
    expect(column(row(ARCHIVED_BETWEEN), 'STAGE')).toBe('commit');
    expect(column(row(ARCHIVED_BETWEEN), 'ROUND')).toBe('1');
    expect(run.stderr).toContain('1 run file(s) could not be read');
    // read-only
    expect(fs.readdirSync(path.join(repo.root, '.agents', 'workspace', 'active', ACTIVE_PENDING))).toEqual(before);
  });

  it('--json lists the same runs with full pending-delegation and pause details', async () => {
    await repositoryWithRuns();
    const run = await runBaton(['runs', '--json'], { cwd: path.join(repo.root, '.agents') });
    expect(run.code, run.stderr).toBe(0);
    const { repo: root, runs } = JSON.parse(run.stdout);
    expect(root).toBe(repo.root);
    const checkout = JSON.parse(run.stdout).checkout;
    expect(checkout).toMatchObject({ id: expect.stringMatching(/^[0-9a-f]{16}$/), host: os.hostname(), root: fs.realpathSync(repo.root) });
    expect(checkout.queue).toBe(`baton-${checkout.id}`);
    const byId = new Map<string, any>(runs.map((row: any) => [row.taskId, row]));
    expect([...byId.keys()].sort()).toEqual([ACTIVE_PENDING, ACTIVE_CORRUPT, BLOCKED_PAUSED, COMPLETED, ARCHIVED_BETWEEN].sort());
    expect(byId.get(ACTIVE_PENDING)).toMatchObject({
      shortId: '01',
      state: 'active',
      status: 'running',
      stage: 'analysis',
      round: 1,
      steps: { done: 0, max: 24 },
      pending: {
        id: 'receipt-1a2b3c4d',
        role: 'executor',
        stage: 'analysis',
        round: 1,
        status: 'prepared',
        client: 'claude-code',
        vendor: 'anthropic',
      },
      pause: null,
    });
    expect(byId.get(ACTIVE_CORRUPT)).toMatchObject({
      shortId: '02',
      status: 'corrupt',
      error: expect.stringContaining('is not valid JSON'),
    });
    expect(byId.get(BLOCKED_PAUSED)).toMatchObject({
      state: 'blocked',
      status: 'paused',
      pause: { code: 'ORCHESTRATION_HUMAN_DECISION_REQUIRED', recoverable: true },
    });
    expect(byId.get(COMPLETED)).toMatchObject({ state: 'completed', status: 'completed', stage: null, pending: null });
    expect(byId.get(ARCHIVED_BETWEEN)).toMatchObject({
      state: 'archive',
      dir: path.join('.agents', 'workspace', 'archive', '2026', '01', '05', ARCHIVED_BETWEEN),
      stage: 'commit',
      round: 1,
    });
  });

  it('says so when there are no runs, and fails clearly outside a repository', async () => {
    repo = tempRepo();
    const empty = await runBaton(['runs', '--repo', repo.root]);
    expect(empty.code).toBe(0);
    expect(empty.stdout).toContain(
      `no orchestration runs in ${repo.root} yet. To see one, run 'baton demo' (a complete lifecycle in a temporary repository). In your project: 'baton init' wires your agent client once`,
    );
    // Filtered to nothing: no how-to, and an unknown status is a usage error.
    expect((await runBaton(['runs', '--repo', repo.root, '--status', 'paused'])).stdout).toMatch(/^no orchestration runs in \S+ match\n/);
    const unknown = await runBaton(['runs', '--repo', repo.root, '--status', 'stuck']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("argument 'stuck' is invalid. Allowed choices are running, paused, completed, corrupt.");
    const outside = tempRepo({ gitDir: false });
    try {
      const run = await runBaton(['runs'], { cwd: outside.root });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('not inside a git repository');
    } finally {
      outside.cleanup();
    }
  });
});

describe('baton runs --watch and filters', () => {
  it('--status and --search narrow the listing; --json carries the title', async () => {
    await repositoryWithRuns();
    const json = async (args: string[]) =>
      JSON.parse((await runBaton(['runs', '--repo', repo.root, '--json', ...args])).stdout).runs.map((row: any) => row.taskId);
    expect(await json(['--status', 'paused'])).toEqual([BLOCKED_PAUSED]);
    expect(await json(['--search', '#2'])).toEqual([ACTIVE_CORRUPT]);
    expect(await json(['--search', '000005'])).toEqual([COMPLETED]);
    const all = JSON.parse((await runBaton(['runs', '--repo', repo.root, '--json'])).stdout).runs;
    expect(all.find((row: any) => row.taskId === ACTIVE_PENDING).title).toBe('Task');
  });

  it('--watch redraws the table in place as runs change, until Ctrl-C', async () => {
    await repositoryWithRuns();
    const watcher = await startBaton(['runs', '--repo', repo.root, '--watch', '--interval', '100'], {
      env: process.env,
      ready: new RegExp(ACTIVE_PENDING),
    });
    try {
      expect(watcher.output().startsWith('\x1b[H')).toBe(true);
      expect(watcher.output()).toContain(`baton runs — ${repo.root}`);
      const harness = engineHarness(repo);
      expect(
        (
          await harness.apply({
            intent: 'pause',
            taskRef: ACTIVE_PENDING,
            code: 'BATON_WATCH_TEST',
            message: 'watch me',
            recoverable: true,
          })
        ).status,
      ).toBe('paused');
      await expect.poll(() => watcher.output(), { timeout: 5_000 }).toContain('BATON_WATCH_TEST: watch me');
      const frames = watcher.output().split('\x1b[H').filter(Boolean);
      expect(frames.length).toBeGreaterThanOrEqual(2);
      // the last frame is a whole table: header, five runs, and it clears what a longer frame left
      const last = frames.at(-1)!;
      expect(last.endsWith('\x1b[J')).toBe(true);
      expect(last).toMatch(/TASK\s+ID\s+STATE\s+STATUS/);
      expect(last.split('\n').filter((line) => line.startsWith('TASK-')).length).toBe(5);
    } finally {
      expect(await watcher.stop('SIGINT')).toBe(0);
    }
  });
});
