import os from 'node:os';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Queue } from 'bullmq';
import type { ConnectionOptions } from 'bullmq';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TASK_ID, readRun, uniquePrefix } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { batonEnv, jsonOf, runBaton } from '../support/processes.ts';
import { URL_PATTERN, dashboardUrlOf, launchBrowser, startBaton } from '../support/services.ts';
import type { ServiceProcess } from '../support/services.ts';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { eventIdForKey } from '../../src/queue/eventIds.ts';
import { queueNameFor } from '../../src/queue/keys.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';

// The dashboard in a real browser (headless Debian Chromium through playwright-core): a repository
// queue shown by its path, a completed job's orchestration result, a failed job that the read-only
// dashboard cannot retry and the writable one can; no request to another host from any page; and the
// token rule when bound beyond loopback.

const redisUrl = inject('redisUrl');
let repo: GitRepo;
let env: NodeJS.ProcessEnv;
let prefix: string;
let writable: ServiceProcess;
let readOnly: ServiceProcess;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let queue: Queue;
const services: ServiceProcess[] = [];
const failingKey = 'dashboard-retry';
const failingJobId = eventIdForKey(failingKey);
let journalRecord: string;
let dashboardStartMs = 0;

beforeAll(async () => {
  repo = gitRepoWithTask();
  prefix = uniquePrefix('dash');
  env = batonEnv({ redisUrl, prefix });
  queue = new Queue(queueNameFor(repoIdentity(repo.root).id), { connection: redisOptionsFromUrl(redisUrl) as ConnectionOptions, prefix });
  [writable, browser] = await Promise.all([
    startBaton(['worker', '--repo', repo.root, '--dashboard', '--port', '0', '--allow-writes'], { env, ready: / ready:/ }),
    launchBrowser(),
  ]);
  services.push(writable);
  // A completed job: its return value is the orchestration result.
  const begun = await runBaton(['task', '01', 'begin-or-resume'], { env, cwd: repo.root });
  expect(jsonOf(begun).status, begun.stderr).toBe('running');
  // A failed job: the worker refuses to apply an event whose journal record is corrupt.
  journalRecord = path.join(repo.root, '.git', 'baton', 'journal', `${failingJobId}.json`);
  fs.mkdirSync(path.dirname(journalRecord), { recursive: true });
  fs.writeFileSync(journalRecord, 'not a journal record');
  const pause = await runBaton(
    [
      'task',
      '01',
      'pause',
      '--code',
      'BATON_DASHBOARD_TEST',
      '--message',
      'paused by a job retried from the dashboard',
      '--recoverable',
      'true',
      '--idempotency-key',
      failingKey,
    ],
    { env, cwd: repo.root },
  );
  expect(jsonOf(pause).error?.code, pause.stdout).toBe('BATON_JOB_FAILED');
  expect(await queue.getJobState(failingJobId)).toBe('failed');
  const started = performance.now();
  readOnly = await startBaton(['dashboard', '--port', '0'], { env, ready: URL_PATTERN });
  dashboardStartMs = performance.now() - started;
  services.push(readOnly);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all(services.map((service) => service.stop('SIGKILL')));
  await queue?.close();
  repo?.cleanup();
});

async function openQueue(page: Page, url: string, status: 'completed' | 'failed'): Promise<void> {
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  const link = page.getByRole('link', { name: repo.root }).first();
  await link.waitFor({ timeout: 15_000 });
  await link.click();
  await page
    .getByRole('link', { name: new RegExp(`^${status}`, 'i') })
    .first()
    .click();
  await page.waitForURL(new RegExp(`status=${status}`), { timeout: 10_000 });
}

/** The job card's retry action (an icon button) of the failing job. */
function retryButton(page: Page) {
  return page.locator('[class*="card"]', { hasText: failingJobId }).locator('button:has(svg.lucide-refresh-cw)').first();
}

/** A PUT the way the bull-board UI sends it. */
async function put(url: string, pathname: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(new URL(pathname, url), { method: 'PUT', headers });
  return response.status;
}

describe('baton dashboard in a browser', () => {
  it('lists the repository queue by its path and shows a completed job with the orchestration result', async () => {
    console.info(`baton dashboard: ready ${dashboardStartMs.toFixed(0)} ms after spawn`);
    const page = await browser.context.newPage();
    await openQueue(page, dashboardUrlOf(readOnly), 'completed');
    const card = page.locator('div', { hasText: 'begin-or-resume' }).filter({ hasText: 'returnValue' }).last();
    await card.waitFor({ timeout: 15_000 });
    const text = await card.innerText();
    expect(text).toContain('returnValue');
    expect(text).toContain(TASK_ID);
    expect(text).toContain('"running"');
    expect(text).toContain(repo.root);
    await page.close();
  });

  it("bull-board's header menu links to the run view", async () => {
    const page = await browser.context.newPage();
    await page.goto(dashboardUrlOf(readOnly), { waitUntil: 'domcontentloaded' });
    await page.getByRole('link', { name: repo.root }).first().waitFor({ timeout: 15_000 });
    // bull-board's "misc links" menu: the last action of its header.
    await page.locator('header ul li').last().locator('button').click();
    await page.getByRole('menuitem', { name: 'Runs' }).click();
    await page.waitForURL(/\/runs$/);
    await page.locator(`tr[data-task="${TASK_ID}"]`).waitFor({ timeout: 10_000 });
    await page.close();
  });

  it('read-only by default: the failed job has no retry button and the API refuses the retry', async () => {
    const url = dashboardUrlOf(readOnly);
    const page = await browser.context.newPage();
    await openQueue(page, url, 'failed');
    await page.getByText(failingJobId).first().waitFor({ timeout: 15_000 });
    await page.getByText('journal record').first().waitFor();
    expect(await retryButton(page).count()).toBe(0);
    expect(await page.getByRole('button', { name: /retry all/i }).count()).toBe(0);
    await page.close();
    const body = (await (await fetch(new URL('api/queues', url))).json()) as { queues: { name: string }[] };
    const name = encodeURIComponent(body.queues[0]!.name);
    expect(await put(url, `api/queues/${name}/${failingJobId}/retry`)).toBe(403);
    expect(await put(url, `api/queues/${name}/retry/failed`)).toBe(403);
    expect(await put(url, 'api/queues/pause')).toBe(403);
    expect(await queue.getJobState(failingJobId)).toBe('failed');
  });

  it('with --allow-writes, retries the failed job from the browser; it then applies', async () => {
    fs.rmSync(journalRecord); // the cause of the failure is gone
    const page = await browser.context.newPage();
    await openQueue(page, dashboardUrlOf(writable), 'failed');
    await page.getByText(failingJobId).first().waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: /retry all/i }).waitFor();
    await retryButton(page).click();
    await page.getByRole('button', { name: 'Confirm' }).click(); // "Are you sure that you want to retry this job?"
    await expect.poll(() => queue.getJobState(failingJobId), { timeout: 15_000 }).toBe('completed');
    expect(readRun(repo.taskDir)).toMatchObject({ status: 'paused', pause: { code: 'BATON_DASHBOARD_TEST' } });
    await page.close();
  });

  it('keeps the one-at-a-time rule and refuses cross-origin writes even with --allow-writes', async () => {
    const url = dashboardUrlOf(writable);
    const origin = new URL(url).origin;
    const name = encodeURIComponent(`${repo.root} · ${queueNameFor(repoIdentity(repo.root).id)}`);
    expect(await put(url, `api/queues/${name}/concurrency`, { 'content-type': 'application/json', origin })).toBe(403);
    expect(await put(url, `api/queues/${name}/pause`, { origin: 'http://evil.example' })).toBe(403);
    // No Origin at all (a form or a script whose browser or client sent none): refused.
    const bare = await fetch(new URL(`api/queues/${name}/pause`, url), { method: 'PUT' });
    expect(bare.status).toBe(403);
    expect(((await bare.json()) as { error: string }).error).toMatch(/^write refused: no Origin header/);
    // The browser's own mark of another site (another port of this host is same-site), whatever Origin says.
    for (const site of ['cross-site', 'same-site']) {
      expect(await put(url, `api/queues/${name}/pause`, { origin, 'sec-fetch-site': site })).toBe(403);
    }
    expect(await queue.getGlobalConcurrency()).toBe(1);
    expect(await queue.isPaused()).toBe(false);
    // What the dashboard's own page sends is a write it accepts (the browser test above retries a job the same way).
    expect(await put(url, `api/queues/${name}/pause`, { origin, 'sec-fetch-site': 'same-origin' })).toBe(200);
    expect(await queue.isPaused()).toBe(true);
    expect(await put(url, `api/queues/${name}/resume`, { origin, 'sec-fetch-site': 'same-origin' })).toBe(200);
    expect(await queue.isPaused()).toBe(false);
  });

  it('no page above made a request to another host (bull-board links a public font host; baton serves it without)', () => {
    expect(browser.foreignRequests()).toEqual([]);
  });

  it('answers only to loopback host names without a token (DNS rebinding)', async () => {
    const url = new URL(dashboardUrlOf(readOnly));
    const status = await new Promise<number>((resolve, reject) => {
      http
        .get({ host: url.hostname, port: url.port, path: '/api/queues', headers: { host: `evil.example:${url.port}` } }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        })
        .on('error', reject);
    });
    expect(status).toBe(403);
  });
});

describe('baton dashboard beyond loopback', () => {
  it('refuses to start without a token', async () => {
    const run = await runBaton(['dashboard', '--host', '127.0.0.2', '--port', '0'], { env: { ...env, BATON_DASHBOARD_TOKEN: '' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('without a token');
    expect(run.stderr).toContain('BATON_DASHBOARD_TOKEN');
    const worker = await runBaton(['worker', '--repo', repo.root, '--dashboard', '--host', '0.0.0.0'], {
      env: { ...env, BATON_DASHBOARD_TOKEN: '' },
    });
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain('without a token');
  });

  it('with a token: 401 without it, bearer or ?token= (HttpOnly cookie) with it', async () => {
    const token = 'tok-8f2c1e9a';
    const service = await startBaton(['dashboard', '--host', '127.0.0.2', '--port', '0', '--token', token], { env, ready: URL_PATTERN });
    services.push(service);
    const url = dashboardUrlOf(service);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.2:\d+\/$/);
    const refused = await fetch(new URL('api/queues', url));
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toContain('Bearer');
    expect((await fetch(new URL('api/queues', url), { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const allowed = await fetch(new URL('api/queues', url), { headers: { authorization: `Bearer ${token}` } });
    expect(allowed.status).toBe(200);
    expect(JSON.stringify(await allowed.json())).toContain(repo.root);

    const page = await browser.context.newPage();
    const unauthorized = await page.goto(url);
    expect(unauthorized?.status()).toBe(401);
    await page.goto(`${url}?token=${token}`);
    expect(page.url()).toBe(url);
    await page.getByRole('link', { name: repo.root }).first().waitFor({ timeout: 15_000 });
    const cookie = (await browser.context.cookies(url)).find((entry) => entry.name === 'baton_dashboard_token');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    await page.close();

    // 0.0.0.0 as well: reached through 127.0.0.1, still 401 without the token. The token comes from
    // BATON_DASHBOARD_TOKEN here, as on a shared machine (a --token value shows in the process list).
    const everywhere = await startBaton(['dashboard', '--host', '0.0.0.0', '--port', '0'], {
      env: { ...env, BATON_DASHBOARD_TOKEN: token },
      ready: URL_PATTERN,
    });
    services.push(everywhere);
    const local = dashboardUrlOf(everywhere);
    expect((await fetch(new URL('api/queues', local))).status).toBe(401);
    expect((await fetch(new URL('api/queues', local), { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect(everywhere.child.spawnargs.join(' ')).not.toContain(token);
  });

  it('with a token and --allow-writes: a script writes with the bearer header and no Origin; the cookie alone does not', async () => {
    const token = 'tok-5d1e0c7b';
    const service = await startBaton(['dashboard', '--host', '127.0.0.2', '--port', '0', '--allow-writes'], {
      env: { ...env, BATON_DASHBOARD_TOKEN: token },
      ready: URL_PATTERN,
    });
    services.push(service);
    const url = dashboardUrlOf(service);
    const name = encodeURIComponent(`${repo.root} · ${queueNameFor(repoIdentity(repo.root).id)}`);
    const write = (action: string, headers: Record<string, string>) =>
      fetch(new URL(`api/queues/${name}/${action}`, url), { method: 'PUT', headers }).then((response) => response.status);
    expect(await write('pause', { cookie: `baton_dashboard_token=${token}` })).toBe(403);
    expect(await queue.isPaused()).toBe(false);
    expect(await write('pause', { authorization: `Bearer ${token}` })).toBe(200);
    expect(await queue.isPaused()).toBe(true);
    expect(await write('resume', { authorization: `Bearer ${token}`, 'sec-fetch-site': 'cross-site' })).toBe(403);
    expect(await write('resume', { authorization: `Bearer ${token}` })).toBe(200);
    expect(await queue.isPaused()).toBe(false);
  });
});

describe('dashboards follow new repositories', () => {
  const queueRoots = async (url: string): Promise<string[]> =>
    ((await (await fetch(new URL('api/queues', url))).json()) as { queues: { displayName: string }[] }).queues.map(
      (entry) => entry.displayName,
    );

  it('`baton worker --discover --dashboard` and `baton dashboard` show a repository that appears later', async () => {
    const later = gitRepoWithTask();
    try {
      const laterEnv = batonEnv({ redisUrl, prefix: uniquePrefix('dash-later') });
      const worker = await startBaton(['worker', '--discover', '--allow-root', path.dirname(later.root), '--dashboard', '--port', '0'], {
        env: laterEnv,
        ready: / ready:/,
      });
      services.push(worker);
      const standalone = await startBaton(['dashboard', '--port', '0', '--refresh', '200'], { env: laterEnv, ready: URL_PATTERN });
      services.push(standalone);
      expect(await queueRoots(dashboardUrlOf(worker))).toEqual([]);
      expect(await queueRoots(dashboardUrlOf(standalone))).toEqual([]);
      // An empty run view says how to get a first run.
      const empty = await (await fetch(new URL('/runs', dashboardUrlOf(standalone)))).text();
      expect(empty).toContain('No repository yet');
      expect(empty).toContain(
        '<p data-hint>To see one, run &#39;baton demo&#39; (a complete lifecycle in a temporary repository). In your project: &#39;baton init&#39; wires your agent client once',
      );
      const begun = await runBaton(['task', '01', 'begin-or-resume'], { env: laterEnv, cwd: later.root });
      expect(jsonOf(begun).status, begun.stdout + begun.stderr).toBe('running');
      await expect.poll(() => queueRoots(dashboardUrlOf(worker)), { timeout: 10_000 }).toEqual([`${later.root} (${os.hostname()})`]);
      await expect.poll(() => queueRoots(dashboardUrlOf(standalone)), { timeout: 10_000 }).toEqual([`${later.root} (${os.hostname()})`]);
    } finally {
      later.cleanup();
    }
  });
});
