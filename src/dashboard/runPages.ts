import fs from 'node:fs';
import path from 'node:path';
import type { Context, Hono } from 'hono';
import { html, raw } from 'hono/html';
import { streamSSE } from 'hono/streaming';
import { RUN_ROW_STATUSES, currentPosition, filterRuns, listRuns, nodeRunFiles, readRun, taskDirectories, taskTitle } from '../core/runList.ts';
import { shortIdsByTask } from '../core/taskRef.ts';
import type { RunRow } from '../core/runList.ts';
import { parseRunLog, runLogFile } from '../core/runLog.ts';
import { describeRun } from '../core/runView.ts';
import type { RunView, StageView, TimelineStep } from '../core/runView.ts';
import { runFilePath } from '../core/taskLayout.ts';
import type { OrchestrationRun, TaskState } from '../core/types.ts';
import { batonDir } from '../core/batonDir.ts';
import { boardJobPath, boardQueuePath } from './repositories.ts';
import type { DashboardRepository } from './repositories.ts';

// The run view beside bull-board: /runs lists every run of every repository the dashboard knows,
// /runs/<checkout id>/<task id> shows one run as a pipeline of stages and a receipt timeline.
// Server-rendered (hono/html); each page keeps itself current over server-sent events: the server
// looks at the run files every `pollMs` and pushes the re-rendered part when they changed.

type Escaped = ReturnType<typeof html>;

export type RunPagesOptions = Readonly<{ repositories: () => readonly DashboardRepository[]; pollMs?: number }>;

export type RepositoryRuns = Readonly<{ id: string; root: string; machine: string; queue: string; readable: boolean; runs: RunRow[] }>;

export type RunDetail = Readonly<{
  repository: Readonly<{ id: string; root: string; machine: string; queue: string }>;
  taskId: string;
  shortId: string | null;
  title: string | null;
  state: TaskState;
  dir: string;
  run: OrchestrationRun;
  position: Readonly<{ stage: string | null; round: number | null }>;
  view: RunView;
  /** bull-board page of each job on the timeline. */
  jobLinks: Readonly<Record<string, string>>;
  /** bull-board page of the repository's queue. */
  queueLink: string;
}>;

const isReadable = (root: string) => fs.existsSync(path.join(root, '.git'));

export async function repositoryRuns(repositories: readonly DashboardRepository[], filter: { status?: string | null; search?: string | null }): Promise<RepositoryRuns[]> {
  return Promise.all(
    repositories.map(async (repo) => {
      const readable = isReadable(repo.root);
      const runs = readable ? filterRuns(await listRuns(repo.root), filter) : [];
      return { id: repo.id, root: repo.root, machine: repo.machine, queue: repo.queue.name, readable, runs };
    }),
  );
}

function findTaskDir(root: string, taskId: string): { state: TaskState; dir: string } | null {
  return taskDirectories(root).find((entry) => path.basename(entry.dir) === taskId) ?? null;
}

function logFileOf(root: string, taskId: string): string | null {
  try {
    return runLogFile(batonDir(root), taskId);
  } catch {
    return null;
  }
}

export async function runDetail(repo: DashboardRepository, taskId: string): Promise<RunDetail | { error: string }> {
  if (!isReadable(repo.root)) return { error: `${repo.root} is not readable from this dashboard (machine ${repo.machine})` };
  const found = findTaskDir(repo.root, taskId);
  if (!found) return { error: `no task ${taskId} in ${repo.root}` };
  const read = readRun(found.dir);
  if (read.kind === 'missing') return { error: `task ${taskId} has no orchestration run yet (run 'baton task ${taskId} begin-or-resume')` };
  if (read.kind === 'invalid') return { error: read.message };
  const { run } = read;
  const shortId = shortIdsByTask(repo.root).get(taskId) ?? null;
  const logFile = logFileOf(repo.root, taskId);
  const log = parseRunLog(logFile ? nodeRunFiles.readText(logFile) : null);
  const position = await currentPosition(repo.root, run);
  const view = describeRun({ run, taskDir: found.dir, position, log, taskRef: shortId ?? taskId, readText: nodeRunFiles.readText });
  const jobLinks: Record<string, string> = {};
  for (const step of view.timeline) if (step.job) jobLinks[step.job.id] = boardJobPath(repo, step.job.id);
  let title: string | null = null;
  try {
    title = taskTitle(nodeRunFiles.readText(path.join(found.dir, 'task.md')));
  } catch {
    title = null;
  }
  return {
    repository: { id: repo.id, root: repo.root, machine: repo.machine, queue: repo.queue.name },
    taskId,
    shortId,
    title,
    state: found.state,
    dir: path.relative(repo.root, found.dir),
    run,
    position,
    view,
    jobLinks,
    queueLink: boardQueuePath(repo),
  };
}

function statSignature(file: string): string {
  try {
    const stat = fs.statSync(file);
    return `${file}:${stat.size}:${stat.mtimeMs}`;
  } catch {
    return `${file}:none`;
  }
}

/** Cheap change detection for the runs list: the repositories, their task directories and run files. */
function runsSignature(repositories: readonly DashboardRepository[]): string {
  return repositories
    .map((repo) => `${repo.id}=${isReadable(repo.root) ? taskDirectories(repo.root).map((entry) => statSignature(runFilePath(entry.dir))).join(',') : '-'}`)
    .join('|');
}

/** Cheap change detection for a watched run: sizes and mtimes of its run file and job log. */
function runSignature(repo: DashboardRepository, taskId: string): string {
  const found = findTaskDir(repo.root, taskId);
  const files = [found ? runFilePath(found.dir) : null, logFileOf(repo.root, taskId)];
  return files.map((file) => (file ? statSignature(file) : '-')).join('|');
}

export type RunPages = Readonly<{ /** Event streams open now (pages being watched). */ liveStreams(): number }>;

export function registerRunPages(app: Hono, options: RunPagesOptions): RunPages {
  const pollMs = options.pollMs ?? 500;
  const live = { open: 0 };
  const repoById = (id: string) => options.repositories().find((repo) => repo.id === id) ?? null;
  const filterOf = (query: (name: string) => string | undefined) => ({ status: query('status') ?? null, search: query('q') ?? null });

  app.get('/api/runs', async (c) => c.json({ repositories: await repositoryRuns(options.repositories(), filterOf((name) => c.req.query(name))) }));
  app.get('/runs', async (c) => {
    const filter = filterOf((name) => c.req.query(name));
    const data = await repositoryRuns(options.repositories(), filter);
    return c.html(layout('baton · runs', html`${runsFilterForm(filter)}<div id="live">${runsTables(data)}</div>`, `/runs/events${new URL(c.req.url).search}`));
  });
  app.get('/runs/events', (c) => {
    const filter = filterOf((name) => c.req.query(name));
    return liveStream(c, pollMs, live, async (previous) => {
      const repositories = options.repositories();
      const signature = runsSignature(repositories);
      if (signature === previous) return { signature, body: null };
      return { signature, body: runsTables(await repositoryRuns(repositories, filter)).toString() };
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
    if (!repo) return c.html(layout('baton · run', html`<p class="error">No repository ${c.req.param('repo')} on this dashboard. <a href="/runs">All runs</a></p>`), 404);
    const detail = await runDetail(repo, taskId);
    if ('error' in detail) return c.html(layout(`baton · ${taskId}`, html`<p class="error">${detail.error}</p><p><a href="/runs">All runs</a></p>`), 404);
    return c.html(layout(`baton · ${taskId}`, html`<div id="live">${runBody(detail)}</div>`, `/runs/${encodeURIComponent(repo.id)}/${encodeURIComponent(taskId)}/events`));
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

// ---------------------------------------------------------------------------------------------
// HTML

const STYLE = `
:root { --fg:#1d2330; --muted:#5b6475; --line:#d9dee7; --bg:#f6f7fa; --card:#fff; --run:#1f6feb; --pause:#b35900; --done:#1a7f37; --bad:#c62828; }
* { box-sizing: border-box; }
body { margin:0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color:var(--fg); background:var(--bg); }
header { background:#1d2330; color:#fff; padding:10px 20px; display:flex; gap:20px; align-items:center; }
header a { color:#cfd8ea; text-decoration:none; } header a:hover { color:#fff; } header strong { font-size:16px; margin-right:12px; }
main { padding:16px 20px 40px; max-width:1400px; }
h1 { font-size:20px; margin:4px 0 2px; } h2 { font-size:16px; margin:22px 0 8px; } h3 { font-size:14px; margin:0 0 6px; }
.muted { color:var(--muted); } code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size:12.5px; }
table { border-collapse:collapse; width:100%; background:var(--card); border:1px solid var(--line); }
th, td { text-align:left; padding:6px 9px; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:#eef1f6; font-weight:600; font-size:12.5px; color:#39414f; }
.badge { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px; font-weight:600; color:#fff; background:#6b7385; }
.s-running { background:var(--run); } .s-paused { background:var(--pause); } .s-completed { background:var(--done); } .s-corrupt, .s-failed, .s-aborted { background:var(--bad); }
.s-prepared { background:#6b7385; } .s-activated { background:#7b50c7; } .s-stage-completed { background:#0f7b8a; } .s-sealed { background:#3d6fb6; } .s-consumed { background:var(--done); }
.repo { margin:18px 0 6px; } .repo .path { font-weight:600; }
form.filters { display:flex; gap:10px; align-items:center; margin:6px 0 10px; }
form.filters input, form.filters select { padding:5px 8px; border:1px solid var(--line); border-radius:4px; font:inherit; }
.pipeline { display:grid; grid-template-columns: repeat(7, minmax(150px, 1fr)); gap:8px; }
.stage { background:var(--card); border:1px solid var(--line); border-top:4px solid #c5cbd6; border-radius:4px; padding:8px; min-height:92px; }
.stage.st-done { border-top-color:var(--done); } .stage.st-current { border-top-color:var(--run); box-shadow:0 0 0 2px #1f6feb33; } .stage.st-next { border-top-color:#8fb3ef; border-style:dashed; }
.stage .state { font-size:11.5px; text-transform:uppercase; letter-spacing:.04em; color:var(--muted); }
.round { border-top:1px dashed var(--line); margin-top:6px; padding-top:5px; font-size:12.5px; }
.verdict-Approved { color:var(--done); font-weight:600; } .verdict-Changes { color:var(--pause); font-weight:600; } .verdict-Rejected { color:var(--bad); font-weight:600; }
.pause { background:#fff4e5; border:1px solid #f0b36b; border-radius:4px; padding:10px 14px; margin:12px 0; }
.pause pre { background:#1d2330; color:#e8edf6; padding:8px 10px; border-radius:4px; margin:6px 0; overflow-x:auto; }
.facts { display:flex; flex-wrap:wrap; gap:6px 22px; margin:6px 0; } .facts div span { color:var(--muted); margin-right:5px; }
.error { color:var(--bad); }
.files { overflow-wrap:anywhere; margin-top:3px; }
`;

const LIVE_SCRIPT = `
(function () {
  var live = document.getElementById('live');
  var source = document.body.getAttribute('data-events');
  if (!live || !source || !window.EventSource) return;
  var events = new EventSource(source);
  events.addEventListener('ready', function () { document.body.setAttribute('data-live', 'connected'); });
  events.addEventListener('update', function (event) {
    live.innerHTML = JSON.parse(event.data).html;
    document.body.setAttribute('data-updated', new Date().toISOString());
  });
  events.onerror = function () { document.body.setAttribute('data-live', 'reconnecting'); };
})();
`;

function layout(title: string, body: Escaped, events?: string): Escaped {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><style>${raw(STYLE)}</style></head>
<body data-events="${events ?? ''}" data-live="off">
<header><strong>baton</strong><a href="/runs">Runs</a><a href="/">Queues (bull-board)</a><a href="/metrics">Metrics</a></header>
<main>${body}</main>
${events ? html`<script>${raw(LIVE_SCRIPT)}</script>` : ''}
</body></html>`;
}

function badge(status: string): Escaped {
  return html`<span class="badge s-${status}">${status}</span>`;
}

function shortHash(value: string | null | undefined, length = 12): string {
  return value ? value.slice(0, length) : '-';
}

/** "3 min ago" with the exact time in the title, for people scanning a table. */
function ago(at: string | null | undefined, now = Date.now()): Escaped {
  if (!at) return html`-`;
  const ms = now - Date.parse(at);
  if (Number.isNaN(ms)) return html`${at}`;
  const seconds = Math.max(0, Math.round(ms / 1000));
  const text = seconds < 60 ? `${seconds} s ago` : seconds < 3600 ? `${Math.round(seconds / 60)} min ago` : `${(seconds / 3600).toFixed(1)} h ago`;
  return html`<span title="${at}" data-age="${text}">${text}</span>`;
}

function duration(ms: number | null): string {
  if (ms === null) return '-';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

function runsFilterForm(filter: { status: string | null; search: string | null }): Escaped {
  return html`<h1>Runs</h1>
<form class="filters" method="get" action="/runs">
  <label>Status <select name="status" aria-label="status">
    <option value="">any</option>
    ${RUN_ROW_STATUSES.map((status) => html`<option value="${status}" ${filter.status === status ? 'selected' : ''}>${status}</option>`)}
  </select></label>
  <input type="search" name="q" placeholder="task id or short id" aria-label="search" value="${filter.search ?? ''}">
  <button type="submit">Filter</button>
  ${filter.status || filter.search ? html`<a href="/runs">clear</a>` : ''}
</form>`;
}

function runsTables(data: readonly RepositoryRuns[]): Escaped {
  if (data.length === 0) return html`<p class="muted">No repository yet: a repository appears once a hook or a command has queued an event for it.</p>`;
  return html`${data.map(
    (repo) => html`<section class="repo" data-repository="${repo.id}">
  <h2><span class="path">${repo.root}</span> <span class="muted">on ${repo.machine} · queue ${repo.queue}</span></h2>
  ${!repo.readable
    ? html`<p class="muted">The task files of this repository are not readable from here.</p>`
    : repo.runs.length === 0
      ? html`<p class="muted">No runs.</p>`
      : html`<table><thead><tr><th>Task</th><th>Title</th><th>Status</th><th>Stage</th><th>Steps</th><th>Pending delegation</th><th>Pause</th><th>Updated</th></tr></thead><tbody>
    ${repo.runs.map((row) => runRow(repo, row))}
  </tbody></table>`}
</section>`,
  )}`;
}

function runRow(repo: RepositoryRuns, row: RunRow): Escaped {
  const link = html`<a href="/runs/${encodeURIComponent(repo.id)}/${encodeURIComponent(row.taskId)}">${row.taskId}</a>${row.shortId ? html` <span class="muted">#${row.shortId}</span>` : ''}`;
  if (row.status === 'corrupt') {
    return html`<tr data-task="${row.taskId}"><td>${link}</td><td>${row.title ?? ''}</td><td>${badge('corrupt')}</td><td colspan="5" class="error">${row.error}</td></tr>`;
  }
  const pending = row.pending
    ? html`${row.pending.role} · ${row.pending.client}${row.pending.childId ? html` · child <code>${row.pending.childId}</code>` : ''}<br><span class="muted">${row.pending.status} since ${ago(row.pending.since)}</span>`
    : html`<span class="muted">-</span>`;
  const pause = row.pause ? html`<code>${row.pause.code}</code><br>${row.pause.message}${row.pause.recoverable ? '' : html` <strong>(not recoverable)</strong>`}` : '';
  return html`<tr data-task="${row.taskId}" data-status="${row.status}">
  <td>${link}<br><span class="muted">${row.state}</span></td><td>${row.title ?? ''}</td><td>${badge(row.status)}</td>
  <td>${row.stage ?? '-'}${row.round === null ? '' : html` <span class="muted">round ${row.round}</span>`}</td>
  <td>${row.steps.done}/${row.steps.max}</td><td>${pending}</td><td>${pause}</td><td>${ago(row.updatedAt)}</td></tr>`;
}

function runBody(detail: RunDetail): Escaped {
  const { run, view } = detail;
  const commit = view.commit;
  return html`<p class="muted"><a href="/runs">Runs</a> › ${detail.repository.root} <span>on ${detail.repository.machine}</span> · <a href="${detail.queueLink}" data-queue-link>queue ${detail.repository.queue} in bull-board</a></p>
<h1>${detail.taskId}${detail.shortId ? html` <span class="muted">#${detail.shortId}</span>` : ''} ${badge(run.status)}</h1>
${detail.title ? html`<p style="margin:2px 0 8px;font-size:15px">${detail.title}</p>` : ''}
<div class="facts">
  <div><span>stage</span>${detail.position.stage ?? '-'}${detail.position.round === null ? '' : ` round ${detail.position.round}`}</div>
  <div><span>steps</span>${run.stepCount}/${run.maxSteps}</div>
  <div><span>run</span><code>${run.runId}</code></div>
  <div><span>directory</span><code>${detail.dir}</code></div>
  <div><span>updated</span>${ago(run.updatedAt)}</div>
  <div data-commit="${commit.state}"><span>commit authorization</span>${commit.state}${commit.issuedAt ? html` <span class="muted">(issued ${commit.issuedAt}${commit.consumedAt ? `, consumed ${commit.consumedAt}` : ''})</span>` : ''}</div>
</div>
${pauseBox(detail)}
<h2>Stages</h2>
<div class="pipeline">${view.stages.map((stage) => stageCard(stage, detail.dir))}</div>
<h2>Receipt timeline</h2>
${timelineTable(detail)}`;
}

function pauseBox(detail: RunDetail): Escaped {
  const { run, view } = detail;
  const commands = view.commands;
  if (run.status !== 'paused' && !commands.abort) return html``;
  const where = html`<span class="muted">in ${detail.repository.root}</span>`;
  if (run.status !== 'paused') {
    return html`<div class="pause" style="background:#eef4ff;border-color:#9ebcf0"><strong>Delegation pending</strong> (${run.pendingDelegation?.role} · ${run.pendingDelegation?.status}).
If its subagent is gone, give it up (${where})<pre data-command="abort">${commands.abort}</pre></div>`;
  }
  return html`<div class="pause" data-pause-code="${run.pause?.code ?? ''}">
<strong>Paused: <code>${run.pause?.code ?? ''}</code></strong> — ${run.pause?.message ?? ''}${run.pause?.recoverable ? '' : html` <strong>(not recoverable)</strong>`}
${commands.note ? html`<p>${commands.note}</p>` : ''}
${commands.abort ? html`<div>Abort the pending delegation (${where}):<pre data-command="abort">${commands.abort}</pre></div>` : ''}
${commands.resume ? html`<div>${commands.abort ? 'Then resume' : 'Resume'} (${where}):<pre data-command="resume">${commands.resume}</pre></div>` : ''}
</div>`;
}

/** Paths inside the task directory are shown relative to it (`analysis.md`), others from the root. */
function shownPath(file: string, taskDir: string): string {
  return file.startsWith(`${taskDir}/`) ? file.slice(taskDir.length + 1) : file;
}

function stageCard(stage: StageView, taskDir: string): Escaped {
  const label = { done: 'done', current: 'in progress', next: 'next', upcoming: 'not started' }[stage.state];
  return html`<div class="stage st-${stage.state}" data-stage="${stage.stage}" data-state="${stage.state}">
  <h3>${stage.stage}</h3><div class="state">${label}</div>
  ${stage.rounds.map(
    (round) => html`<div class="round" data-round="${round.round}">
    <strong>round ${round.round}</strong> ${badge(round.status)}
    ${round.verdict ? html`<div class="verdict-${round.verdict.split(' ')[0]}">verdict: ${round.verdict}</div>` : ''}
    <div>${round.client}${round.agent ? ` · ${round.agent}` : ''}</div>
    <div class="muted">model ${round.actualModel ?? round.requestedModel ?? 'not reported'}</div>
    <div>${duration(round.durationMs)}${round.changedPaths.length > 0 ? ` · ${round.changedPaths.length} file(s)` : ''}</div>
    ${round.changedPaths.length > 0 ? html`<div class="mono files" title="files changed (task files relative to the task directory)">${round.changedPaths.map((file) => html`<div title="${file}">${shownPath(file, taskDir)}</div>`)}</div>` : ''}
  </div>`,
  )}
</div>`;
}

function timelineTable(detail: RunDetail): Escaped {
  const steps = detail.view.timeline;
  if (steps.length === 0) return html`<p class="muted">No delegation yet.</p>`;
  return html`<table class="timeline"><thead><tr><th>When</th><th>Receipt</th><th>Stage</th><th>Step</th><th>Fingerprint</th><th>Child / parent</th><th>Job</th></tr></thead><tbody>
${steps.map((step) => timelineRow(detail, step))}
</tbody></table>`;
}

function timelineRow(detail: RunDetail, step: TimelineStep): Escaped {
  const link = step.job ? detail.jobLinks[step.job.id] : undefined;
  return html`<tr data-receipt="${step.receiptId}" data-step="${step.status}">
  <td>${step.at ? html`<span title="${step.at}">${step.at.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</span>` : '-'}</td>
  <td><code title="${step.receiptId}">${shortHash(step.receiptId, 8)}</code></td>
  <td>${step.stage} <span class="muted">r${step.round} · ${step.role}</span></td>
  <td>${badge(step.status)}</td>
  <td>${step.fingerprint ? html`<code title="${step.fingerprint}">${shortHash(step.fingerprint)}</code>` : ''}</td>
  <td>${step.childId ? html`child <code>${step.childId}</code><br>parent <code>${step.parentId ?? '-'}</code>` : ''}</td>
  <td>${step.job && link ? html`<a href="${link}" data-job="${step.job.id}">${step.job.intent}</a> <span class="muted mono">${shortHash(step.job.id, 14)}</span>` : html`<span class="muted">-</span>`}</td>
</tr>`;
}
