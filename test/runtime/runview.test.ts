import { afterEach, describe, expect, inject, it } from 'vitest';
import { TASK_ID, uniquePrefix } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { DENO_DIR, RUNTIMES, batonEnv, jsonOf, runBaton } from '../support/processes.ts';
import { dashboardUrlOf, startBaton } from '../support/services.ts';
import type { ServiceProcess } from '../support/services.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';

// The run view, its live stream, the job log and /metrics, served by a worker running on Bun and
// on Deno (Node is covered by the browser tests): the same bundle, the runtime's own HTTP server.

const redisUrl = inject('redisUrl');

let repo: GitRepo | null = null;
let service: ServiceProcess | null = null;
afterEach(async () => {
  await service?.stop('SIGKILL');
  service = null;
  repo?.cleanup();
  repo = null;
});

/** Reads server-sent events until `until` says stop; returns the event names seen. */
async function readEvents(url: string, whileOpen: (events: string[]) => Promise<boolean>): Promise<string[]> {
  const controller = new AbortController();
  const response = await fetch(url, { signal: controller.signal });
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const events: string[] = [];
  const decoder = new TextDecoder();
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      for (const match of decoder.decode(chunk, { stream: true }).matchAll(/^event: (\S+)$/gm)) events.push(match[1]!);
      if (!(await whileOpen(events))) break;
    }
  } finally {
    controller.abort();
  }
  return events;
}

describe.each(['bun', 'deno'] as const)('run view on %s', (name) => {
  it('serves /runs, a live run page and /metrics from a worker on this runtime', async () => {
    const runtime = RUNTIMES[name];
    repo = gitRepoWithTask();
    const env = batonEnv({ redisUrl, prefix: uniquePrefix(`rv-${name}`) }, { DENO_DIR, NO_COLOR: '1' });
    service = await startBaton(['worker', '--repo', repo.root, '--dashboard', '--port', '0'], {
      env,
      ready: / ready:/,
      timeoutMs: 60_000,
      command: runtime.command,
      commandArgs: runtime.args,
    });
    const url = dashboardUrlOf(service);
    const task = async (...args: string[]) => jsonOf(await runBaton(['task', '01', ...args], { env, cwd: repo!.root }));
    expect((await task('begin-or-resume')).status).toBe('running');
    expect((await task('prepare', '--client', 'claude-code')).status).toBe('running');

    const runs = (await (await fetch(new URL('/api/runs', url))).json()) as {
      repositories: { root: string; runs: { taskId: string; pending: { status: string } }[] }[];
    };
    expect(runs.repositories[0]).toMatchObject({ root: repo.root, runs: [{ taskId: TASK_ID, pending: { status: 'prepared' } }] });
    const runPath = `/runs/${repoIdentity(repo.root).id}/${TASK_ID}`;
    const page = await fetch(new URL(runPath, url));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('data-step="prepared"');
    expect(html).toMatch(/data-job="c-[^"]+">prepare</);

    let paused = false;
    const events = await readEvents(new URL(`${runPath}/events`, url).toString(), async (seen) => {
      if (seen.includes('ready') && !paused) {
        paused = true;
        expect((await task('pause', '--code', 'RUNTIME_TEST', '--message', 'on hold', '--recoverable', 'true')).status).toBe('paused');
      }
      return !seen.includes('update');
    });
    expect(events).toEqual(['ready', 'update']);

    const metrics = async () => await (await fetch(new URL('/metrics', url))).text();
    await expect.poll(metrics, { timeout: 10_000 }).toContain('baton_dashboard_live_streams 0');
    const text = await metrics();
    expect(text).toContain(`baton_events_applied_total{repository="${repo.root}",`);
    expect(text).toMatch(new RegExp(`baton_runs\\{repository="${repo.root}",machine="[^"]+",status="paused"\\} 1`));
    expect(text).toMatch(/baton_workers\{[^}]*\} 1/);
  }, 120_000);
});
