import path from 'node:path';
import { applyEvent } from '../core/engine.ts';
import { parseTaskFrontmatter } from '../core/frontmatter.ts';
import { parseRunText } from '../core/runStore.ts';
import type { RunRead, RunReadOptions } from '../core/runStore.ts';
import { profileRunReadOptions } from '../core/profiles/file.ts';
import {
  ARCHIVE_STATE,
  archiveDayDirs,
  FLAT_TASK_STATES,
  nodeRunFiles,
  repositoryRunFiles,
  runFilePath,
  stateDir,
  taskFilePath,
} from '../core/taskLayout.ts';
import type { RunFiles } from '../core/taskLayout.ts';
import { readPriceTable } from './prices.ts';
import { compact, describeRunCost, formatPrice } from './runCost.ts';
import type { RunCost } from './runCost.ts';
import { reviewVerdict } from './runView.ts';
import { totalTokens } from '../core/stageCost.ts';
import { shortIdsByTask } from '../core/taskRef.ts';
import { outdatedPause } from '../core/nextSteps.ts';
import { receiptVendor } from '../core/vendors.ts';
import type { OrchestrationRun, TaskState, WorkspaceFingerprinter } from '../core/types.ts';
import { DEFAULT_GRACES, delegationClock, reconciliationNote } from '../core/reconciliation.ts';
import type { Graces } from '../core/reconciliation.ts';

export { nodeRunFiles, repositoryRunFiles } from '../core/taskLayout.ts';
export type { RunFiles } from '../core/taskLayout.ts';

// Every orchestration run of a repository, read from its task directories (active, blocked,
// completed, archive): what `baton runs`, the run view and the metrics show. Read-only. Files are
// read through `RunFiles` (core/taskLayout.ts), so the listing can be fed from anything that holds the task tree. A
// corrupt run file is a row of its own (decision 2), never the end of the listing.

export type PendingSummary = Readonly<{
  id: string;
  role: string;
  stage: string;
  round: number;
  status: string;
  client: string;
  /** The vendor it runs in (src/core/vendors.ts). */
  vendor: string | null;
  childId: string | null;
  /** When the delegation was prepared. */
  since: string;
}>;

export type RunStatus = 'running' | 'paused' | 'completed';

export type RunRow =
  | Readonly<{
      taskId: string;
      shortId: string | null;
      title: string | null;
      state: TaskState;
      dir: string;
      status: RunStatus;
      stage: string | null;
      round: number | null;
      /** Why the run is at this stage and round, when routing says (a review that does not count). */
      note: string | null;
      steps: Readonly<{ done: number; max: number }>;
      pending: PendingSummary | null;
      /** `outdated`: how things are now, when the pause message describes a receipt that has moved on since. */
      pause: Readonly<{ code: string; message: string; recoverable: boolean; outdated: string | null }> | null;
      /** The pending delegation's clock: what it waits for, since when, what the worker does when (docs/architecture.md "Reconciliation"). */
      clock: string | null;
      /** The run's latest reconciliation, when the worker settled one of its delegations itself. */
      reconciled: string | null;
      /** What the run cost so far (runCost.ts): null until a receipt holds figures. */
      cost: RunCostSummary | null;
      updatedAt: string;
    }>
  | Readonly<{
      taskId: string;
      shortId: string | null;
      title: string | null;
      state: TaskState;
      dir: string;
      status: 'corrupt';
      error: string;
    }>;

export const RUN_ROW_STATUSES = ['running', 'paused', 'completed', 'corrupt'] as const;

/** How to get a first run, for a listing that has none (`baton runs`, the dashboard's /runs). */
export const FIRST_RUN_HINT =
  "To see one, run 'baton demo' (a complete lifecycle in a temporary repository). " +
  "In your project: 'baton init' wires your agent client once, 'baton start' serves the repository, " +
  "then ask the agent to run a task through its lifecycle (or start one by hand: 'baton task <task> begin-or-resume').";

/** route never captures a fingerprint; this seam proves it. */
const noFingerprints: WorkspaceFingerprinter = {
  capture: () => Promise.reject(new Error('listing runs is read-only')),
  diff: () => Promise.reject(new Error('listing runs is read-only')),
};

/** Every task directory of the repository, with the state its location says. */
export function taskDirectories(repoRoot: string, files: RunFiles = nodeRunFiles): { state: TaskState; dir: string }[] {
  const found: { state: TaskState; dir: string }[] = [];
  for (const state of FLAT_TASK_STATES) {
    for (const name of files.subdirs(stateDir(repoRoot, state))) found.push({ state, dir: path.join(stateDir(repoRoot, state), name) });
  }
  // The archive walk of task lookup, oldest day first here: the listing shows the archive in date order.
  for (const day of archiveDayDirs(repoRoot, (dir) => files.subdirs(dir)).reverse()) {
    for (const name of files.subdirs(day)) found.push({ state: ARCHIVE_STATE, dir: path.join(day, name) });
  }
  return found;
}

/** The task's title: `title:` of task.md's frontmatter, else its first `# ` heading. */
export function taskTitle(taskMd: string | null): string | null {
  if (taskMd === null) return null;
  const fromFrontmatter = parseTaskFrontmatter(taskMd)
    .title?.replace(/^(['"])(.*)\1$/, '$2')
    .trim();
  if (fromFrontmatter) return fromFrontmatter;
  const end = taskMd.startsWith('---') ? taskMd.indexOf('\n---', 3) : -1;
  const heading = /^#\s+(.+?)\s*$/m.exec(end === -1 ? taskMd : taskMd.slice(end + 4));
  return heading?.[1] ?? null;
}

export function readRun(taskDir: string, files: RunFiles = nodeRunFiles, options: RunReadOptions = {}): RunRead {
  const file = runFilePath(taskDir);
  let text: string | null;
  try {
    text = files.readText(file);
  } catch (error) {
    return { kind: 'invalid', message: `${file} cannot be read: ${(error as Error).message}` };
  }
  return text === null ? { kind: 'missing' } : parseRunText(text, file, options);
}

/** Where a run is: stage and round, and why, when routing has something to say (a review that does not count). */
export type RunPosition = Readonly<{ stage: string | null; round: number | null; note: string | null }>;

/** Stage and round the run is at: the pending delegation's, else what routing (read-only) says. */
export async function currentPosition(repoRoot: string, run: OrchestrationRun, files: RunFiles = nodeRunFiles): Promise<RunPosition> {
  const routed = async () =>
    (
      await applyEvent(
        { intent: 'route', taskRef: run.taskId },
        { repoRoot, fingerprinter: noFingerprints, readRun: (dir) => readRun(dir, files, profileRunReadOptions(repoRoot)) },
      )
    ).result;
  const noteOf = (result: Awaited<ReturnType<typeof routed>>) => (result.warnings?.length ? result.warnings.join('; ') : null);
  const receipt = run.pendingDelegation;
  if (receipt) {
    // A review round after the first: routing says why when the review before it did not count.
    const why = receipt.role === 'reviewer' && receipt.round > 1 && run.status !== 'completed' ? await routed() : null;
    const note = why?.next?.stage === receipt.stage && why.next.round === receipt.round ? noteOf(why) : null;
    return { stage: receipt.stage, round: receipt.round, note };
  }
  let stage: string | null = run.nextStage;
  let round: number | null = null;
  let note: string | null = null;
  if (run.status === 'running') {
    // Between delegations the run does not store what comes next; routing knows.
    const next = await routed();
    if (next.next && (stage === null || stage === next.next.stage)) {
      stage = next.next.stage;
      round = next.next.round;
      note = noteOf(next);
    }
  }
  return { stage, round, note };
}

/** The graces the clocks are shown with (the worker's, as it recorded them) and the time now. */
export type ClockOptions = Readonly<{ graces?: Graces | undefined; nowMs?: number }>;

/** The latest reconciliation of `run` (of its pending delegation or its history), as a mark. */
export function latestReconciliation(run: OrchestrationRun): string | null {
  const marks = [...run.receipts, ...(run.pendingDelegation ? [run.pendingDelegation] : [])].flatMap(
    (receipt) => receipt.reconciliations ?? [],
  );
  const latest = marks.reduce<(typeof marks)[number] | null>((found, mark) => (!found || mark.at > found.at ? mark : found), null);
  return latest ? reconciliationNote(latest) : null;
}

/** Read through `repositoryRunFiles` unless told otherwise: nothing outside the repository is listed. */
export async function listRuns(
  repoRoot: string,
  files: RunFiles = repositoryRunFiles(repoRoot),
  clock: ClockOptions = {},
): Promise<RunRow[]> {
  const graces = clock.graces ?? DEFAULT_GRACES;
  const nowMs = clock.nowMs ?? Date.now();
  // The registry as task lookup reads it: a registry that resolution refuses gives no short ids.
  const shorts = shortIdsByTask(repoRoot, files);
  const rows: RunRow[] = [];
  const readOptions = profileRunReadOptions(repoRoot);
  // The user's prices (docs/run-view.md "Prices"); a table that does not read prices nothing here (`baton cost` says why).
  const priceRead = readPriceTable(repoRoot, files.readText);
  const prices = priceRead.ok ? priceRead.prices : null;
  for (const { state, dir } of taskDirectories(repoRoot, files)) {
    const read = readRun(dir, files, readOptions);
    if (read.kind === 'missing') continue;
    const name = path.basename(dir);
    const relative = path.relative(repoRoot, dir);
    let title: string | null = null;
    try {
      title = taskTitle(files.readText(taskFilePath(dir)));
    } catch {
      title = null;
    }
    if (read.kind === 'invalid') {
      rows.push({ taskId: name, shortId: shorts.get(name) ?? null, title, state, dir: relative, status: 'corrupt', error: read.message });
      continue;
    }
    const { run } = read;
    const receipt = run.pendingDelegation;
    const { stage, round, note } = await currentPosition(repoRoot, run, files);
    rows.push({
      taskId: run.taskId,
      shortId: shorts.get(run.taskId) ?? null,
      title,
      state,
      dir: relative,
      status: run.status,
      stage,
      round,
      note,
      steps: { done: run.stepCount, max: run.maxSteps },
      pending: receipt
        ? {
            id: receipt.id,
            role: receipt.role,
            stage: receipt.stage,
            round: receipt.round,
            status: receipt.status,
            client: receipt.client,
            vendor: receiptVendor(receipt),
            childId: receipt.childId,
            since: receipt.createdAt,
          }
        : null,
      pause: run.pause
        ? { code: run.pause.code, message: run.pause.message, recoverable: run.pause.recoverable, outdated: outdatedPause(run) }
        : null,
      clock: receipt ? delegationClock(receipt, graces, nowMs) : null,
      reconciled: latestReconciliation(run),
      cost: costSummary(describeRunCost({ run, prices, verdictOf: (r) => reviewVerdict(r, dir, files.readText) })),
      updatedAt: run.updatedAt,
    });
  }
  return rows;
}

/** A run's cost in the listing: the run's total and its review rounds that did not pass. */
export type RunCostSummary = Readonly<{
  requests: number;
  tokens: number;
  failedReviewTokens: number;
  price: number | null;
  currency: string | null;
  /** Rounds that started and hold no figures (docs/run-view.md "What a stage cost"). */
  unrecorded: number;
}>;

function costSummary(cost: RunCost): RunCostSummary | null {
  const { total } = cost;
  if (total.receipts === total.unrecorded) return null;
  return {
    requests: total.requests,
    tokens: totalTokens(total.tokens),
    failedReviewTokens: totalTokens(cost.failedReviews.tokens),
    price: cost.currency === null ? null : total.price,
    currency: cost.currency,
    unrecorded: total.unrecorded,
  };
}

/** The COST cell: `5.3k tok`, with the price when the table prices all of it. */
function costCell(cost: RunCostSummary | null): string {
  if (!cost) return '-';
  const price = cost.price !== null && cost.currency !== null ? ` ${formatPrice(cost.price, cost.currency)}` : '';
  return `${compact(cost.tokens)} tok${price}`;
}

export type RunFilter = Readonly<{ status?: string | null; search?: string | null }>;

/** `search` matches a task id (any part, any case) or a short id (`1`, `01`, `#1`). */
export function filterRuns<T extends RunRow>(rows: readonly T[], filter: RunFilter): T[] {
  const status = filter.status?.trim() || null;
  const search = filter.search?.trim().toLowerCase() || null;
  const short = search !== null && /^#?\d+$/.test(search) ? Number(search.replace('#', '')) : null;
  return rows.filter((row) => {
    if (status !== null && row.status !== status) return false;
    if (search === null) return true;
    if (row.taskId.toLowerCase().includes(search)) return true;
    return short !== null && row.shortId !== null && Number(row.shortId) === short;
  });
}

export function formatRunsTable(rows: readonly RunRow[]): string {
  const header = ['TASK', 'ID', 'STATE', 'STATUS', 'STAGE', 'ROUND', 'STEPS', 'COST', 'PENDING', 'PAUSE / NOTE'];
  const lines = rows.map((row) => {
    const short = row.shortId ? `#${row.shortId}` : '-';
    if (row.status === 'corrupt') return [row.taskId, short, row.state, 'corrupt', '-', '-', '-', '-', '-', row.error];
    const pending = row.pending
      ? `${row.pending.id.slice(0, 8)} ${row.pending.role} ${row.pending.status} ${row.pending.client}${row.pending.vendor ? `/${row.pending.vendor}` : ''}`
      : '-';
    const said = row.pause
      ? `${row.pause.code}: ${row.pause.message}${row.pause.recoverable ? '' : ' (not recoverable)'}${row.pause.outdated ? ` [${row.pause.outdated}]` : ''}`
      : (row.note ?? '');
    const note = [said, row.clock, row.reconciled ? `[${row.reconciled}]` : null].filter(Boolean).join('; ');
    return [
      row.taskId,
      short,
      row.state,
      row.status,
      row.stage ?? '-',
      row.round === null ? '-' : String(row.round),
      `${row.steps.done}/${row.steps.max}`,
      costCell(row.cost),
      pending,
      note,
    ];
  });
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column]!.length)));
  const render = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return `${[header, ...lines].map(render).join('\n')}\n`;
}
