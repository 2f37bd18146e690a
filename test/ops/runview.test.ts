import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TASK_ID, readRun, uniquePrefix } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { BATON_BIN, PROJECT_ROOT, batonEnv, runProcess } from '../support/processes.ts';
import { dashboardUrlOf, launchBrowser, startBaton } from '../support/services.ts';
import type { ServiceProcess } from '../support/services.ts';
import { completeStage, startStage, stepContext, task, titledTask, wholeStage } from '../support/runSteps.ts';
import type { StepContext } from '../support/runSteps.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';

// The run view in a real browser (headless Chromium through playwright-core), fed by a real
// lifecycle: hooks and `baton task` processes, a worker with its dashboard. What a person sees:
// the runs list with its filters, a run page with stage progress and the receipt timeline linked
// to bull-board jobs, the page following the run without a reload, and a paused run with the exact
// commands that go on. BATON_UPDATE_SCREENSHOTS=1 rewrites docs/images/run-*.png.

const redisUrl = inject('redisUrl');
const TITLE = 'Bound the retry budget of the uploader';
let repo: GitRepo;
let service: ServiceProcess;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let ctx: StepContext;
let url: string;
let repoId: string;
const screenshots = process.env.BATON_UPDATE_SCREENSHOTS === '1';

beforeAll(async () => {
  repo = gitRepoWithTask();
  titledTask(repo.taskDir, TASK_ID, TITLE);
  const env = batonEnv({ redisUrl, prefix: uniquePrefix('runview') });
  repoId = repoIdentity(repo.root).id;
  [service, browser] = await Promise.all([
    startBaton(['worker', '--repo', repo.root, '--dashboard', '--port', '0'], { env, ready: / ready:/ }),
    launchBrowser(),
  ]);
  url = dashboardUrlOf(service);
  ctx = stepContext(repo.root, repo.taskDir, env);
  expect((await task(ctx, ['begin-or-resume'])).status).toBe('running');
  // analysis and its review done; the plan's executor is at work.
  expect(await wholeStage(ctx, 'child-1')).toBe('running');
  expect(await wholeStage(ctx, 'child-2')).toBe('running');
  await startStage(ctx, 'child-3');
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await service?.stop('SIGKILL');
  repo?.cleanup();
});

async function open(pathname: string): Promise<Page> {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 1400, height: 900 });
  const response = await page.goto(new URL(pathname, url).toString(), { waitUntil: 'domcontentloaded' });
  expect(response?.status()).toBe(200);
  return page;
}

const runPath = () => `/runs/${repoId}/${TASK_ID}`;

describe('the runs page', () => {
  it('lists the run with its repository, machine, stage, steps and pending delegation', async () => {
    const page = await open('/runs');
    const section = page.locator(`section[data-repository="${repoId}"]`);
    await expect.poll(() => section.locator('h2').innerText()).toContain(repo.root);
    expect(await section.locator('h2').innerText()).toMatch(/ on \S+ · queue baton-[0-9a-f]{16}/);
    const row = section.locator(`tr[data-task="${TASK_ID}"]`);
    const cells = await row.locator('td').allInnerTexts();
    expect(cells[0]).toContain(TASK_ID);
    expect(cells[0]).toContain('#01');
    expect(cells[1]).toBe(TITLE);
    expect(cells[2]).toBe('running');
    expect(cells[3]).toBe('plan round 1');
    expect(cells[4]).toBe('2/24'); // two advances
    expect(cells[5]).toBe('-'); // its stops named no client record: no figures (docs/run-view.md "What a stage cost")
    expect(cells[6]).toMatch(/^executor · claude-code · child child-3\nactivated since \d+ s ago$/);
    if (screenshots) await page.screenshot({ path: path.join(PROJECT_ROOT, 'docs', 'images', 'run-list.png'), fullPage: true });
    await page.close();
  });

  it('filters by status and finds a run by short id or task id', async () => {
    const page = await open('/runs');
    await page.getByLabel('status').selectOption('paused');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=paused/);
    expect(await page.locator(`tr[data-task="${TASK_ID}"]`).count()).toBe(0);
    await page.getByText('No runs match.').waitFor();
    await page.getByLabel('status').selectOption('');
    await page.getByLabel('search').fill('#1');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/q=%231/);
    expect(await page.locator(`tr[data-task="${TASK_ID}"]`).count()).toBe(1);
    await page.close();
    const api = async (query: string) =>
      ((await (await fetch(new URL(`/api/runs?${query}`, url))).json()) as { repositories: { root: string; runs: { taskId: string }[] }[] })
        .repositories;
    expect((await api('q=000001'))[0]!.runs.map((run) => run.taskId)).toEqual([TASK_ID]);
    expect((await api('q=%232'))[0]!.runs).toEqual([]);
    expect((await api('q=TASK-2027'))[0]!.runs).toEqual([]);
    expect((await api('status=running'))[0]).toMatchObject({ root: repo.root, runs: [{ taskId: TASK_ID }] });
  });
});

describe('the run page', () => {
  it('shows the stages as a pipeline and the receipt timeline linked to bull-board jobs', async () => {
    const page = await open(runPath());
    const stage = (name: string) => page.locator(`.stage[data-stage="${name}"]`);
    expect(await stage('analysis').getAttribute('data-state')).toBe('done');
    expect(await stage('review-analysis').getAttribute('data-state')).toBe('done');
    expect(await stage('plan').getAttribute('data-state')).toBe('current');
    expect(await stage('commit').getAttribute('data-state')).toBe('upcoming');
    const analysis = await stage('analysis').innerText();
    expect(analysis).toContain('round 1');
    expect(analysis).toContain('consumed');
    expect(analysis).toContain('claude-code · claude');
    expect(await stage('analysis').locator('.files div').allInnerTexts()).toEqual(['analysis.md', 'orchestration.json']);
    expect(await stage('review-analysis').innerText()).toContain('verdict: Approved');
    expect(await stage('plan').innerText()).toContain('activated');

    const timeline = page.locator('table.timeline tbody tr');
    // two consumed receipts (5 steps each) and the plan's prepared + activated
    expect(await timeline.count()).toBe(12);
    const steps = await timeline.evaluateAll((rows) => rows.map((row) => row.getAttribute('data-step')));
    expect(steps).toEqual([
      'prepared',
      'activated',
      'stage-completed',
      'sealed',
      'consumed',
      'prepared',
      'activated',
      'stage-completed',
      'sealed',
      'consumed',
      'prepared',
      'activated',
    ]);
    const run = readRun(repo.taskDir);
    const first = run.receipts[0]!;
    const prepared = await timeline.nth(0).innerText();
    expect(prepared).toContain(first.beforeFingerprint.slice(0, 12));
    expect(prepared).toContain('prepare');
    expect(await timeline.nth(1).innerText()).toMatch(/child child-1\s+parent parent-session/);
    expect(await timeline.nth(3).innerText()).toContain(first.afterFingerprint!.slice(0, 12));
    // every step of the consumed receipts links to the job that made it
    const intents = await timeline.evaluateAll((rows) => rows.map((row) => row.querySelector('a[data-job]')?.textContent ?? null));
    expect(intents.slice(0, 5)).toEqual(['prepare', 'hook-start', 'complete-stage', 'hook-stop', 'advance']);
    if (screenshots) await page.screenshot({ path: path.join(PROJECT_ROOT, 'docs', 'images', 'run-page.png'), fullPage: true });

    // the link opens bull-board on that job, whose name carries the task the hook was applied to
    const hookLink = timeline.nth(1).locator('a[data-job]');
    const jobId = (await hookLink.getAttribute('data-job'))!;
    expect(jobId).toMatch(/^h-/);
    await hookLink.click();
    await page.waitForURL(new RegExp(`/queue/[^/]+/${jobId}$`));
    await page.getByText(`hook-start · ${TASK_ID}`).first().waitFor({ timeout: 15_000 });
    // and in the queue's list of jobs (linked from the run page), every hook job names its task instead of `auto`
    await page.goBack();
    // The lifecycle profile in force (the default: the repository records none).
    expect(await page.locator('[data-profile]').innerText()).toBe('profile agent-infra-0.9.2');
    const queuePath = (await page.locator('a[data-queue-link]').getAttribute('href'))!;
    expect(queuePath).toBe(`/queue/${encodeURIComponent(`${repo.root} · baton-${repoId}`)}`);
    await page.goto(new URL(`${queuePath}?status=completed`, url).toString());
    await page.getByText(`hook-stop · ${TASK_ID}`).first().waitFor({ timeout: 15_000 });
    expect(await page.getByText(`hook-start · ${TASK_ID}`).count()).toBeGreaterThanOrEqual(1);
    await page.close();
  });

  it('follows the run without a reload', async () => {
    const page = await open(runPath());
    await page.waitForSelector('body[data-live="connected"]');
    await page.evaluate(() => ((globalThis as unknown as { loadedOnce: boolean }).loadedOnce = true));
    const planRound = page.locator('.stage[data-stage="plan"] .round');
    expect(await planRound.innerText()).toContain('activated');
    await completeStage(ctx, { stage: 'plan', round: 1, artifact: 'plan.md' });
    await planRound.getByText('stage-completed').waitFor({ timeout: 10_000 });
    expect(await page.evaluate(() => (globalThis as unknown as { loadedOnce?: boolean }).loadedOnce)).toBe(true);
    expect(await page.locator('table.timeline tbody tr').count()).toBe(13);
    // the dashboard keeps the page's stream while it is open, and ends it when the tab closes
    const liveStreams = async () =>
      Number(/^baton_dashboard_live_streams (\d+)$/m.exec(await (await fetch(new URL('/metrics', url))).text())?.[1]);
    expect(await liveStreams()).toBe(1);
    await page.close();
    await expect.poll(liveStreams, { timeout: 10_000 }).toBe(0);
  });

  it('shows why a run is paused and the exact commands that abort and resume it', async () => {
    const page = await open(runPath());
    await page.waitForSelector('body[data-live="connected"]');
    const list = await open('/runs');
    await list.waitForSelector('body[data-live="connected"]');
    expect(
      (await task(ctx, ['pause', '--code', 'BATON_TEST_HOLD', '--message', 'waiting for the API key', '--recoverable', 'true'])).status,
    ).toBe('paused');
    const pause = page.locator('.pause[data-pause-code="BATON_TEST_HOLD"]');
    await pause.waitFor({ timeout: 10_000 });
    expect(await pause.innerText()).toContain('waiting for the API key');
    const abort = await pause.locator('pre[data-command="abort"]').innerText();
    const pending = readRun(repo.taskDir).pendingDelegation!;
    expect(abort).toBe(`baton task 01 abort --reason 'give up delegation ${pending.id}'`);
    expect(await pause.locator('pre[data-command="resume"]').innerText()).toBe('baton task 01 begin-or-resume');
    expect(await page.locator('h1 .badge').innerText()).toBe('paused');
    // the runs list follows as well
    const row = list.locator(`tr[data-task="${TASK_ID}"][data-status="paused"]`);
    await row.waitFor({ timeout: 10_000 });
    expect(await row.innerText()).toContain('BATON_TEST_HOLD');
    await list.close();
    if (screenshots) await page.screenshot({ path: path.join(PROJECT_ROOT, 'docs', 'images', 'run-paused.png'), fullPage: true });

    // The commands as shown work, in the repository the page names.
    const shell = async (command: string) =>
      runProcess('sh', ['-c', command.replace(/^baton /, `"${process.execPath}" "${BATON_BIN}" `)], { cwd: repo.root, env: ctx.env });
    const aborted = await shell(abort);
    expect(aborted.code, aborted.stderr).toBe(0);
    const resumeBox = page.locator('.pause[data-pause-code="ORCHESTRATION_DELEGATION_ABORTED"]');
    await resumeBox.waitFor({ timeout: 10_000 });
    expect(await resumeBox.locator('pre[data-command="abort"]').count()).toBe(0);
    const resume = await resumeBox.locator('pre[data-command="resume"]').innerText();
    expect(resume).toBe('baton task 01 begin-or-resume');
    expect((await shell(resume)).code).toBe(0);
    await page.locator('h1 .badge', { hasText: 'running' }).waitFor({ timeout: 10_000 });
    expect(await page.locator('.pause').count()).toBe(0);
    const abortedStep = page.locator('table.timeline tr[data-step="aborted"]');
    expect(await abortedStep.count()).toBe(1);
    expect(await abortedStep.innerText()).toContain('abort');
    expect(fs.existsSync(path.join(repo.root, '.git', 'baton', 'runlog', `${TASK_ID}.jsonl`))).toBe(true);

    // A prepared delegation: the page says what happens next, not only how to give it up.
    // (plan.md was written before the abort, so its review comes next)
    expect((await task(ctx, ['prepare', '--client', 'claude-code'])).next).toMatchObject({ stage: 'review-plan', round: 1 });
    const waiting = page.locator('.pause [data-waiting]');
    await waiting.waitFor({ timeout: 10_000 });
    expect(await waiting.innerText()).toBe(
      'Next: spawn agent-infra-lifecycle-reviewer for review-plan r1 (a fresh subagent, in the foreground); waiting for its SubagentStart.',
    );
    expect(await page.locator('.pause pre[data-command="abort"]').count()).toBe(1);
    await page.close();
  });

  it('no page above made a request to another host, the live updates included', () => {
    expect(browser.foreignRequests()).toEqual([]);
  });
});
