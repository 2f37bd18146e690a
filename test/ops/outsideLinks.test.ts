import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TASK_ID, taskMd, uniquePrefix } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { batonEnv, jsonOf, runBaton } from '../support/processes.ts';
import { dashboardUrlOf, startBaton } from '../support/services.ts';
import type { ServiceProcess } from '../support/services.ts';
import { activeTaskDir } from '../../src/core/taskLayout.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';

// Task files that lead out of the repository: the run listing and the run page
// show what they read to whoever may open the dashboard, so a task.md (or a run file) linked to a
// file elsewhere on the machine is not followed there; one linked inside the repository still is.

const SECRET = 'Heading of a file outside the repository';
const OUTSIDE_TASK = 'TASK-20260101-000002';
const INSIDE_TASK = 'TASK-20260101-000003';
const RUN_OUTSIDE_TASK = 'TASK-20260101-000004';
const redisUrl = inject('redisUrl');
let repo: GitRepo;
let outside: string;
let service: ServiceProcess;
let env: NodeJS.ProcessEnv;

/** A task directory holding a copy of task 01's run file under `taskId`. */
function taskWithRun(taskId: string): string {
  const dir = activeTaskDir(repo.root, taskId);
  fs.mkdirSync(dir, { recursive: true });
  const run = JSON.parse(fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8'));
  fs.writeFileSync(path.join(dir, 'orchestration.json'), `${JSON.stringify({ ...run, taskId }, null, 2)}\n`);
  return dir;
}

beforeAll(async () => {
  repo = gitRepoWithTask();
  outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-outside-')));
  fs.writeFileSync(path.join(outside, 'notes.md'), `# ${SECRET}\n\nsecret body\n`);
  env = batonEnv({ redisUrl, prefix: uniquePrefix('links') });
  service = await startBaton(['worker', '--repo', repo.root, '--dashboard', '--port', '0'], { env, ready: / ready:/ });
  expect(jsonOf(await runBaton(['task', '01', 'begin-or-resume'], { env, cwd: repo.root })).status).toBe('running');

  fs.symlinkSync(path.join(outside, 'notes.md'), path.join(taskWithRun(OUTSIDE_TASK), 'task.md'));
  fs.mkdirSync(path.join(repo.root, 'docs'));
  fs.writeFileSync(
    path.join(repo.root, 'docs', 'task.md'),
    taskMd(INSIDE_TASK, 'requirement-analysis', '# Linked inside the repository\n'),
  );
  fs.symlinkSync(path.join(repo.root, 'docs', 'task.md'), path.join(taskWithRun(INSIDE_TASK), 'task.md'));
  const runOutside = activeTaskDir(repo.root, RUN_OUTSIDE_TASK);
  fs.mkdirSync(runOutside, { recursive: true });
  fs.writeFileSync(path.join(runOutside, 'task.md'), taskMd(RUN_OUTSIDE_TASK));
  fs.copyFileSync(path.join(repo.taskDir, 'orchestration.json'), path.join(outside, 'orchestration.json'));
  fs.symlinkSync(path.join(outside, 'orchestration.json'), path.join(runOutside, 'orchestration.json'));
}, 60_000);

afterAll(async () => {
  await service?.stop('SIGKILL');
  repo?.cleanup();
  fs.rmSync(outside, { recursive: true, force: true });
});

type Row = { taskId: string; title: string | null; status: string; error?: string };

function expectNotFollowed(rows: Row[]): void {
  const byId = new Map(rows.map((row) => [row.taskId, row]));
  expect(byId.get(TASK_ID)).toMatchObject({ title: 'Task', status: 'running' });
  expect(byId.get(OUTSIDE_TASK)).toMatchObject({ title: null, status: 'running' });
  expect(byId.get(INSIDE_TASK)).toMatchObject({ title: 'Linked inside the repository', status: 'running' });
  expect(byId.get(RUN_OUTSIDE_TASK)).toMatchObject({
    status: 'corrupt',
    error: expect.stringContaining(`orchestration.json leads outside the repository (a symbolic link); not read`),
  });
  expect(JSON.stringify(rows)).not.toContain(SECRET);
}

describe('task files linked out of the repository are not followed', () => {
  it('baton runs --json', async () => {
    const run = await runBaton(['runs', '--json', '--repo', repo.root], { env });
    expect(run.code, run.stderr).toBe(0);
    expectNotFollowed(JSON.parse(run.stdout).runs);
  });

  it('the dashboard: /api/runs, /runs and the run page', async () => {
    const url = dashboardUrlOf(service);
    const api = (await (await fetch(new URL('/api/runs', url))).json()) as { repositories: { runs: Row[] }[] };
    expectNotFollowed(api.repositories[0]!.runs);
    expect(await (await fetch(new URL('/runs', url))).text()).not.toContain(SECRET);
    const page = await fetch(new URL(`/runs/${repoIdentity(repo.root).id}/${OUTSIDE_TASK}`, url));
    expect(page.status).toBe(200);
    expect(await page.text()).not.toContain(SECRET);
    const detail = (await (await fetch(new URL(`/api/runs/${repoIdentity(repo.root).id}/${OUTSIDE_TASK}`, url))).json()) as {
      title: string | null;
    };
    expect(detail.title).toBeNull();
    const inside = (await (await fetch(new URL(`/api/runs/${repoIdentity(repo.root).id}/${INSIDE_TASK}`, url))).json()) as {
      title: string | null;
    };
    expect(inside.title).toBe('Linked inside the repository');
  });
});
