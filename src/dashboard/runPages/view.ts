import { html } from 'hono/html';
import { FIRST_RUN_HINT, RUN_ROW_STATUSES } from '../../runs/runList.ts';
import type { RunRow } from '../../runs/runList.ts';
import type { StageRound, StageView, TimelineStep } from '../../runs/runView.ts';
import { repositoryGroups } from './data.ts';
import { formatFigures } from '../../runs/runCost.ts';
import type { CostFigures, RoundCost, RunCost } from '../../runs/runCost.ts';
import type { RepositoryRuns, RunDetail } from './data.ts';
import type { Escaped } from './layout.ts';

// How runs look: the filterable runs table and one run's page (facts, pause box with the commands to
// type, stage pipeline, receipt timeline), server-rendered with hono/html.

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
  const text =
    seconds < 60 ? `${seconds} s ago` : seconds < 3600 ? `${Math.round(seconds / 60)} min ago` : `${(seconds / 3600).toFixed(1)} h ago`;
  return html`<span title="${at}" data-age="${text}">${text}</span>`;
}

function duration(ms: number | null): string {
  if (ms === null) return '-';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function runsFilterForm(filter: { status: string | null; search: string | null }): Escaped {
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

/** `filtered`: a status or search narrowed the listing (an empty one then needs no how-to). */
export function runsTables(data: readonly RepositoryRuns[], filtered = false): Escaped {
  if (data.length === 0) {
    return html`<p class="muted" data-empty>No repository yet: a repository appears once a hook or a command has queued an event for it.</p><p data-hint>${FIRST_RUN_HINT}</p>`;
  }
  return html`${repositoryGroups(data).map((group) =>
    group.checkouts.length === 1 && group.checkouts[0]!.mainRepository === null
      ? checkoutSection(group.checkouts[0]!, filtered)
      : html`<div class="repository-group" data-repository-group="${group.root}">
  <p class="muted" data-group-heading>Repository <span class="path">${group.root}</span> on ${group.machine}: ${group.checkouts.length} checkout${group.checkouts.length === 1 ? '' : 's'}, each with its own runs</p>
  ${group.checkouts.map((checkout) => checkoutSection(checkout, filtered))}
</div>`,
  )}`;
}

/** One checkout's runs: its path, machine, queue and branch (and, for a linked worktree, whose). */
function checkoutSection(repo: RepositoryRuns, filtered: boolean): Escaped {
  const branch = repo.readable
    ? html` · <span data-branch>${repo.branch === null ? 'detached HEAD' : html`branch ${repo.branch}`}</span>`
    : '';
  const worktree = repo.mainRepository ? html` · <span data-worktree-of>linked worktree of ${repo.mainRepository}</span>` : '';
  return html`<section class="repo${repo.mainRepository ? ' worktree' : ''}" data-repository="${repo.id}">
  <h2><span class="path">${repo.root}</span> <span class="muted">on ${repo.machine} · queue ${repo.queue}${branch}${worktree}</span></h2>
  ${
    !repo.readable
      ? html`<p class="muted">The task files of this repository are not readable from here.</p>`
      : repo.runs.length === 0
        ? html`<p class="muted" data-empty>No runs${filtered ? ' match' : ' yet'}.</p>${filtered ? '' : html`<p data-hint>${FIRST_RUN_HINT}</p>`}`
        : html`<table><thead><tr><th>Task</th><th>Title</th><th>Status</th><th>Stage</th><th>Steps</th><th>Cost</th><th>Pending delegation</th><th>Pause / note</th><th>Updated</th></tr></thead><tbody>
    ${repo.runs.map((row) => runRow(repo, row))}
  </tbody></table>`
  }
</section>`;
}

function runCostCell(row: Extract<RunRow, { cost: unknown }>): Escaped {
  const cost = row.cost;
  if (!cost) return html`<span class="muted">-</span>`;
  const figures = `${cost.tokens.toLocaleString('en-US')} tokens`;
  const price = cost.price !== null && cost.currency !== null ? html`<br>${cost.currency} ${cost.price.toFixed(4)}` : '';
  const failed =
    cost.failedReviewTokens > 0
      ? html`<br><span class="muted">${cost.failedReviewTokens.toLocaleString('en-US')} in reviews that did not pass</span>`
      : '';
  return html`${figures}${price}${failed}`;
}

function runRow(repo: RepositoryRuns, row: RunRow): Escaped {
  const link = html`<a href="/runs/${encodeURIComponent(repo.id)}/${encodeURIComponent(row.taskId)}">${row.taskId}</a>${row.shortId ? html` <span class="muted">#${row.shortId}</span>` : ''}`;
  if (row.status === 'corrupt') {
    return html`<tr data-task="${row.taskId}"><td>${link}</td><td>${row.title ?? ''}</td><td>${badge('corrupt')}</td><td colspan="6" class="error">${row.error}</td></tr>`;
  }
  const pending = row.pending
    ? html`${row.pending.role} · ${row.pending.client}${row.pending.childId ? html` · child <code>${row.pending.childId}</code>` : ''}<br><span class="muted">${row.pending.status} since ${ago(row.pending.since)}</span>`
    : html`<span class="muted">-</span>`;
  const pause = row.pause
    ? html`<code>${row.pause.code}</code><br>${row.pause.message}${row.pause.recoverable ? '' : html` <strong>(not recoverable)</strong>`}${outdated(row.pause.outdated)}`
    : row.note
      ? html`<span class="note" data-note>${row.note}</span>`
      : '';
  return html`<tr data-task="${row.taskId}" data-status="${row.status}">
  <td>${link}<br><span class="muted">${row.state}</span></td><td>${row.title ?? ''}</td><td>${badge(row.status)}</td>
  <td>${row.stage ?? '-'}${row.round === null ? '' : html` <span class="muted">round ${row.round}</span>`}</td>
  <td>${row.steps.done}/${row.steps.max}</td><td data-cost>${runCostCell(row)}</td><td>${pending}</td><td>${pause}</td><td>${ago(row.updatedAt)}</td></tr>`;
}

export function runBody(detail: RunDetail): Escaped {
  const { run, view } = detail;
  const commit = view.commit;
  return html`<p class="muted"><a href="/runs">Runs</a> › ${detail.repository.root} <span>on ${detail.repository.machine}</span> · <a href="${detail.queueLink}" data-queue-link>queue ${detail.repository.queue} in bull-board</a> · <span data-profile>profile ${detail.profile}</span>${detail.reviewerVendor ? html` · <span data-reviewer-vendor>reviewer vendor: ${detail.reviewerVendor}</span>` : ''}</p>
<h1>${detail.taskId}${detail.shortId ? html` <span class="muted">#${detail.shortId}</span>` : ''} ${badge(run.status)}</h1>
${detail.title ? html`<p style="margin:2px 0 8px;font-size:15px">${detail.title}</p>` : ''}
<div class="facts">
  <div><span>stage</span>${detail.position.stage ?? '-'}${detail.position.round === null ? '' : ` round ${detail.position.round}`}${detail.position.note ? html` <span class="note" data-note>— ${detail.position.note}</span>` : ''}</div>
  ${detail.clock ? html`<div data-clock><span>clock</span>${detail.clock}</div>` : ''}
  <div><span>steps</span>${run.stepCount}/${run.maxSteps}</div>
  <div data-run-cost><span>cost</span>${costFigures(detail.cost.total, detail.cost.currency)}</div>
  <div><span>run</span><code>${run.runId}</code></div>
  <div><span>directory</span><code>${detail.dir}</code></div>
  <div><span>updated</span>${ago(run.updatedAt)}</div>
  <div data-commit="${commit.state}"><span>commit authorization</span>${commit.state}${commit.issuedAt ? html` <span class="muted">(issued ${commit.issuedAt}${commit.consumedAt ? `, consumed ${commit.consumedAt}` : ''})</span>` : ''}</div>
</div>
${pauseBox(detail)}
<h2>Stages</h2>
<div class="pipeline">${view.stages.map((stage) => stageCard(stage, detail.dir, stage.stage === detail.position.stage ? detail.position.note : null, detail.cost))}</div>
<h2>Cost</h2>
${costTables(detail.cost, detail.pricesProblem)}
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
${commands.waiting ? html`<p data-waiting>Next: ${commands.waiting}.</p>` : ''}
If its subagent is gone, give it up (${where})<pre data-command="abort">${commands.abort}</pre></div>`;
  }
  return html`<div class="pause" data-pause-code="${run.pause?.code ?? ''}">
<strong>Paused: <code>${run.pause?.code ?? ''}</code></strong> — ${run.pause?.message ?? ''}${run.pause?.recoverable ? '' : html` <strong>(not recoverable)</strong>`}${outdated(view.pauseOutdated)}
${commands.waiting ? html`<p data-waiting>Pending delegation: ${commands.waiting}.</p>` : ''}
${commands.note ? html`<p>${commands.note}</p>` : ''}
${commands.abort ? html`<div>Abort the pending delegation (${where}):<pre data-command="abort">${commands.abort}</pre></div>` : ''}
${commands.resume ? html`<div>${commands.abort ? 'Then resume' : 'Resume'} (${where}):<pre data-command="resume">${commands.resume}</pre></div>` : ''}
</div>`;
}

/** Paths inside the task directory are shown relative to it (`analysis.md`), others from the root. */
function shownPath(file: string, taskDir: string): string {
  return file.startsWith(`${taskDir}/`) ? file.slice(taskDir.length + 1) : file;
}

/** The mark of a pause message that describes a receipt that has moved on since. */
function outdated(note: string | null): Escaped | string {
  return note ? html` <strong class="outdated" data-outdated>(${note})</strong>` : '';
}

/** `note`: why the run is at this stage's round (a review before it that does not count). */
function stageCard(stage: StageView, taskDir: string, note: string | null, cost: RunCost): Escaped {
  const label = { done: 'done', current: 'in progress', next: 'next', upcoming: 'not started' }[stage.state];
  return html`<div class="stage st-${stage.state}" data-stage="${stage.stage}" data-state="${stage.state}">
  <h3>${stage.stage}</h3><div class="state">${label}</div>
  ${note && stage.state !== 'done' ? html`<div class="note" data-note>${note}</div>` : ''}
  ${stage.rounds.map(
    (round) => html`<div class="round" data-round="${round.round}">
    <strong>round ${round.round}</strong> ${badge(round.status)}
    ${round.verdict ? html`<div class="verdict-${round.verdict.split(' ')[0]}">verdict: ${round.verdict}</div>` : ''}
    <div>${round.client}${round.agent ? ` · ${round.agent}` : ''}</div>
    <div class="muted">model ${round.actualModel ?? round.requestedModel ?? 'not reported'}${round.vendor ? html` · <span data-vendor>${round.vendor}</span>` : ''}</div>
    <div>${duration(round.durationMs)}${round.changedPaths.length > 0 ? ` · ${round.changedPaths.length} file(s)` : ''}</div>
    ${roundCost(round, cost)}
    ${round.changedPaths.length > 0 ? html`<div class="mono files" title="files changed (task files relative to the task directory)">${round.changedPaths.map((file) => html`<div title="${file}">${shownPath(file, taskDir)}</div>`)}</div>` : ''}
  </div>`,
  )}
</div>`;
}

/** `1,234 tokens · USD 0.0123`, or what is not known: not recorded, no price. */
function costFigures(figures: CostFigures, currency: string | null): Escaped {
  if (figures.receipts === 0) return html`<span class="muted">-</span>`;
  if (figures.receipts === figures.unrecorded) return html`<span class="muted">not recorded</span>`;
  const unpriced =
    currency !== null && figures.price === null ? html` <span class="muted">(no price: ${figures.unpriced.join(', ')})</span>` : '';
  const partly =
    figures.unrecorded > 0 ? html` <span class="muted">(${figures.unrecorded} of ${figures.receipts} rounds not recorded)</span>` : '';
  return html`${formatFigures(figures, currency)} · ${figures.requests} requests${unpriced}${partly}`;
}

/** A round's cost in its stage card: requests, tokens, the models, or why nothing was recorded. */
function roundCost(round: StageRound, cost: RunCost): Escaped | string {
  const entry: RoundCost | undefined = cost.rounds.find((candidate) => candidate.receiptId === round.receiptId);
  if (!entry) return '';
  if (entry.figures.unrecorded > 0) return html`<div class="muted" data-cost="none" title="${entry.note ?? ''}">cost not recorded</div>`;
  return html`<div data-cost="${entry.figures.requests}">${formatFigures(entry.figures, cost.currency)}</div><div class="muted">${entry.models.join(', ')} · ${entry.figures.requests} requests</div>`;
}

function costTables(cost: RunCost, pricesProblem: string | null): Escaped {
  if (cost.rounds.length === 0) return html`<p class="muted">No delegation has started yet.</p>`;
  const row = (name: string, figures: CostFigures) =>
    html`<tr><td>${name}</td><td class="num">${figures.requests}</td><td class="num">${figures.tokens.input.toLocaleString('en-US')}</td><td class="num">${figures.tokens.output.toLocaleString('en-US')}</td><td class="num">${figures.tokens.cacheRead.toLocaleString('en-US')}</td><td class="num">${figures.tokens.cacheCreation.toLocaleString('en-US')}</td><td>${costFigures(figures, cost.currency)}</td></tr>`;
  const group = (title: string, rows: ReadonlyArray<readonly [string, CostFigures]>) =>
    html`<tr><th colspan="7" class="group">${title}</th></tr>${rows.map(([name, figures]) => row(name, figures))}`;
  return html`${pricesProblem ? html`<p class="error">${pricesProblem}</p>` : cost.currency === null ? html`<p class="muted">Tokens only: no prices in .agents/baton.json (docs/run-view.md "Prices").</p>` : ''}
<table class="cost" data-cost-table><thead><tr><th></th><th>Requests</th><th>Input</th><th>Output</th><th>Cache read</th><th>Cache write</th><th>Total</th></tr></thead><tbody>
${group(
  'by stage',
  cost.byStage.map(({ stage, figures }) => [stage, figures] as const),
)}
${group(
  'by role',
  cost.byRole.map(({ role, figures }) => [role, figures] as const),
)}
${group(
  'by model',
  cost.byModel.map(({ model, figures }) => [model, figures] as const),
)}
${group('review rounds that did not pass', [[`${cost.rounds.filter((round) => round.passed === false).length} round(s)`, cost.failedReviews] as const])}
${group('run', [['total', cost.total] as const])}
</tbody></table>`;
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
  <td>${badge(step.status)}${step.reconciled ? html`<br><span class="muted" data-reconciled>${step.reconciled}</span>` : ''}</td>
  <td>${step.fingerprint ? html`<code title="${step.fingerprint}">${shortHash(step.fingerprint)}</code>` : ''}</td>
  <td>${step.childId ? html`child <code>${step.childId}</code><br>parent <code>${step.parentId ?? '-'}</code>` : ''}</td>
  <td>${step.job && link ? html`<a href="${link}" data-job="${step.job.id}">${step.job.intent}</a> <span class="muted mono">${shortHash(step.job.id, 14)}</span>` : html`<span class="muted">-</span>`}</td>
</tr>`;
}
