import type { Context, Hono } from 'hono';
import { html } from 'hono/html';
import { streamSSE } from 'hono/streaming';
import { RUN_ROW_STATUSES } from '../../runs/runList.ts';
import type { DashboardRepository } from '../repositories.ts';
import { repositoryRuns, runDetail, runSignature, runsSignature } from './data.ts';
import { layout } from './layout.ts';
import { runBody, runsFilterForm, runsTables } from './view.ts';

// The run view beside bull-board: /runs lists every run of every repository the dashboard knows,
// /runs/<checkout id>/<task id> shows one run as a pipeline of stages and a receipt timeline.
// Server-rendered (hono/html); each page keeps itself current over server-sent events: the server
// looks at the run files every `pollMs` and pushes the re-rendered part when they changed.
//
// The routes and the live updates; what they show is data.ts, how it looks is view.ts.

export type RunPagesOptions = Readonly<{ repositories: () => readonly DashboardRepository[]; pollMs?: number }>;

export type RunPages = Readonly<{ /** Event streams open now (pages being watched). */ liveStreams(): number }>;

export function registerRunPages(app: Hono, options: RunPagesOptions): RunPages {
  const pollMs = options.pollMs ?? 500;
  const live = { open: 0 };
  const repoById = (id: string) => options.repositories().find((repo) => repo.id === id) ?? null;
  const filterOf = (query: (name: string) => string | undefined) => ({ status: query('status') ?? null, search: query('q') ?? null });

  app.get('/api/runs', async (c) => {
    const filter = filterOf((name) => c.req.query(name));
    if (!validStatus(filter.status)) return c.json({ error: unknownStatus(filter.status) }, 400);
    return c.json({ repositories: await repositoryRuns(options.repositories(), filter) });
  });
  app.get('/runs', async (c) => {
    const filter = filterOf((name) => c.req.query(name));
    if (!validStatus(filter.status))
      return c.html(
        layout('baton · runs', html`${runsFilterForm({ ...filter, status: null })}<p class="error">${unknownStatus(filter.status)}</p>`),
        400,
      );
    const data = await repositoryRuns(options.repositories(), filter);
    return c.html(
      layout(
        'baton · runs',
        html`${runsFilterForm(filter)}<div id="live">${runsTables(data, isFiltered(filter))}</div>`,
        `/runs/events${new URL(c.req.url).search}`,
      ),
    );
  });
  app.get('/runs/events', (c) => {
    const filter = filterOf((name) => c.req.query(name));
    return liveStream(c, pollMs, live, async (previous) => {
      const repositories = options.repositories();
      const signature = runsSignature(repositories);
      if (signature === previous) return { signature, body: null };
      return { signature, body: runsTables(await repositoryRuns(repositories, filter), isFiltered(filter)).toString() };
    });
  });

  app.get('/api/runs/:repo/:task', async (c) => {
    const repo = repoById(c.req.param('repo'));
    if (!repo) return c.json({ error: `no repository ${c.req.param('repo')} on this dashboard` }, 404);
    const detail = await runDetail(repo, c.req.param('task'));
    return 'error' in detail ? c.json(detail, 404) : c.json(detail);
  });
  app.get('/runs/:repo/:task', async (c) => {
    const repo = repoById(c.req.param('repo'));
    const taskId = c.req.param('task');
    if (!repo)
      return c.html(
        layout(
          'baton · run',
          html`<p class="error">No repository ${c.req.param('repo')} on this dashboard. <a href="/runs">All runs</a></p>`,
        ),
        404,
      );
    const detail = await runDetail(repo, taskId);
    if ('error' in detail)
      return c.html(layout(`baton · ${taskId}`, html`<p class="error">${detail.error}</p><p><a href="/runs">All runs</a></p>`), 404);
    return c.html(
      layout(
        `baton · ${taskId}`,
        html`<div id="live">${runBody(detail)}</div>`,
        `/runs/${encodeURIComponent(repo.id)}/${encodeURIComponent(taskId)}/events`,
      ),
    );
  });
  app.get('/runs/:repo/:task/events', (c) => {
    const repo = repoById(c.req.param('repo'));
    const taskId = c.req.param('task');
    if (!repo) return c.text('no such repository', 404);
    return liveStream(c, pollMs, live, async (previous) => {
      const signature = runSignature(repo, taskId);
      if (signature === previous) return { signature, body: null };
      const detail = await runDetail(repo, taskId);
      return { signature, body: ('error' in detail ? html`<p class="error">${detail.error}</p>` : runBody(detail)).toString() };
    });
  });
  return { liveStreams: () => live.open };
}

/** An empty status (the form's "any") filters nothing; anything else must be a status a run can have. */
function validStatus(status: string | null): boolean {
  return !status || (RUN_ROW_STATUSES as readonly string[]).includes(status);
}

function unknownStatus(status: string | null): string {
  return `unknown status '${status}': one of ${RUN_ROW_STATUSES.join(', ')}`;
}

function isFiltered(filter: { status: string | null; search: string | null }): boolean {
  return Boolean(filter.status || filter.search?.trim());
}

/**
 * Server-sent events: `update` with the re-rendered part whenever `render` reports a new
 * signature. `render` may return a null body for "unchanged" without rendering.
 */
function liveStream(
  c: Context,
  pollMs: number,
  live: { open: number },
  render: (previous: string | null) => Promise<{ signature: string; body: string | null }>,
) {
  return streamSSE(c, async (stream) => {
    let closed = false;
    const close = () => {
      closed = true;
    };
    // A closed tab must end its loop: the stream's abort, and the request's signal where the
    // runtime sets it.
    stream.onAbort(close);
    c.req.raw.signal?.addEventListener('abort', close);
    live.open += 1;
    try {
      // The first look only sets the baseline: the page was rendered just now.
      let previous = (await render(null)).signature;
      await stream.writeSSE({ event: 'ready', data: '{}' });
      while (!closed && !stream.aborted && !stream.closed) {
        await stream.sleep(pollMs);
        if (closed || stream.aborted) break;
        const next = await render(previous);
        if (next.signature !== previous && next.body !== null) {
          await stream.writeSSE({ event: 'update', data: JSON.stringify({ html: next.body }) });
        }
        previous = next.signature;
      }
    } finally {
      live.open -= 1;
    }
  });
}
