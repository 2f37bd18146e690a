import fs from 'node:fs';
import path from 'node:path';
import {
  currentPosition,
  filterRuns,
  listRuns,
  nodeRunFiles,
  readRun,
  repositoryRunFiles,
  taskDirectories,
  taskTitle,
} from '../../runs/runList.ts';
import { shortIdsByTask } from '../../core/taskRef.ts';
import type { RunPosition, RunRow } from '../../runs/runList.ts';
import { parseRunLog, runLogFile } from '../../runs/runLog.ts';
import { describeRun, reviewVerdict } from '../../runs/runView.ts';
import { describeRunCost } from '../../runs/runCost.ts';
import type { RunCost } from '../../runs/runCost.ts';
import { readPriceTable } from '../../runs/prices.ts';
import type { RunView } from '../../runs/runView.ts';
import { runFilePath, taskFilePath } from '../../core/taskLayout.ts';
import type { RunFiles } from '../../core/taskLayout.ts';
import type { OrchestrationRun, TaskState } from '../../core/types.ts';
import { batonDir } from '../../base/batonDir.ts';
import { branchOf, mainRepositoryOf } from '../../base/repoRoot.ts';
import { DEFAULT_GRACES, delegationClock } from '../../core/orchestration/index.ts';
import { readEndpoint } from '../../queue/endpoint.ts';
import { boardJobPath, boardQueuePath } from '../repositories.ts';
import type { DashboardRepository } from '../repositories.ts';
import { profileRunReadOptions, readRepositoryRecord } from '../../core/profiles/file.ts';
import { reviewerVendorText } from '../../core/profiles/reviewerVendor.ts';
import { profileRules } from '../../core/profile.ts';

// The run view's data (docs/run-view.md): every run of the repositories a dashboard knows, one run
// in detail (stages, receipt timeline, the bull-board page of each job), and cheap signatures of the
// files behind them, so a watched page is re-rendered only when they changed.

export type RepositoryRuns = Readonly<{
  id: string;
  root: string;
  machine: string;
  queue: string;
  readable: boolean;
  /** The checkout's branch (null: a detached HEAD, or not readable from here). */
  branch: string | null;
  /** The main repository's root when the checkout is a linked worktree (docs/architecture.md "Worktrees"). */
  mainRepository: string | null;
  runs: RunRow[];
}>;

/** A repository and its checkouts on one machine: the main checkout first (when the dashboard knows it), then its worktrees. */
export type RepositoryGroup = Readonly<{ root: string; machine: string; checkouts: readonly RepositoryRuns[] }>;

/** The checkouts grouped by repository (a linked worktree under its main repository), in first-seen order. */
export function repositoryGroups(data: readonly RepositoryRuns[]): RepositoryGroup[] {
  const groups = new Map<string, { root: string; machine: string; checkouts: RepositoryRuns[] }>();
  for (const checkout of data) {
    const root = checkout.mainRepository ?? checkout.root;
    const key = `${checkout.machine}\u0000${root}`;
    const group = groups.get(key) ?? { root, machine: checkout.machine, checkouts: [] };
    group.checkouts.push(checkout);
    groups.set(key, group);
  }
  return [...groups.values()].map((group) => ({
    ...group,
    checkouts: group.checkouts.sort(
      (a, b) => Number(a.mainRepository !== null) - Number(b.mainRepository !== null) || a.root.localeCompare(b.root),
    ),
  }));
}

export type RunDetail = Readonly<{
  repository: Readonly<{ id: string; root: string; machine: string; queue: string }>;
  taskId: string;
  shortId: string | null;
  title: string | null;
  state: TaskState;
  dir: string;
  run: OrchestrationRun;
  position: RunPosition;
  /** The pending delegation's clock (docs/architecture.md "Reconciliation"). */
  clock: string | null;
  view: RunView;
  /** What the run cost by its receipts' figures (docs/run-view.md "What a stage cost"), and why the price table does not read, if it does not. */
  cost: RunCost;
  pricesProblem: string | null;
  /** bull-board page of each job on the timeline. */
  jobLinks: Readonly<Record<string, string>>;
  /** bull-board page of the repository's queue. */
  queueLink: string;
  /** The lifecycle profile the repository records (src/core/profile.ts), or why it cannot be read. */
  profile: string;
  /** The repository's reviewer-vendor policy in words, where its profile enforces one (src/core/profiles/reviewerVendor.ts). */
  reviewerVendor: string | null;
}>;

const isReadable = (root: string) => fs.existsSync(path.join(root, '.git'));

export async function repositoryRuns(
  repositories: readonly DashboardRepository[],
  filter: { status?: string | null; search?: string | null },
): Promise<RepositoryRuns[]> {
  return Promise.all(
    repositories.map(async (repo) => {
      const readable = isReadable(repo.root);
      const runs = readable ? filterRuns(await listRuns(repo.root, undefined, { graces: readEndpoint(repo.root)?.graces }), filter) : [];
      const where = readable
        ? { branch: branchOf(repo.root), mainRepository: mainRepositoryOf(repo.root) }
        : { branch: null, mainRepository: null };
      return { id: repo.id, root: repo.root, machine: repo.machine, queue: repo.queue.name, readable, ...where, runs };
    }),
  );
}

function findTaskDir(root: string, taskId: string, files: RunFiles = repositoryRunFiles(root)): { state: TaskState; dir: string } | null {
  return taskDirectories(root, files).find((entry) => path.basename(entry.dir) === taskId) ?? null;
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
  // Task files are read only inside the repository (repositoryRunFiles); the job log is baton's own, in the git directory.
  const files = repositoryRunFiles(repo.root);
  const found = findTaskDir(repo.root, taskId, files);
  if (!found) return { error: `no task ${taskId} in ${repo.root}` };
  const read = readRun(found.dir, files, profileRunReadOptions(repo.root));
  if (read.kind === 'missing') return { error: `task ${taskId} has no orchestration run yet (run 'baton task ${taskId} begin-or-resume')` };
  if (read.kind === 'invalid') return { error: read.message };
  const { run } = read;
  const shortId = shortIdsByTask(repo.root, files).get(taskId) ?? null;
  const logFile = logFileOf(repo.root, taskId);
  const log = parseRunLog(logFile ? nodeRunFiles.readText(logFile) : null);
  const position = await currentPosition(repo.root, run, files);
  const view = describeRun({ run, taskDir: found.dir, position, log, taskRef: shortId ?? taskId, readText: files.readText });
  // What it cost, priced by the repository's table only (docs/run-view.md "Prices").
  const prices = readPriceTable(repo.root, files.readText);
  const cost = describeRunCost({
    run,
    prices: prices.ok ? prices.prices : null,
    verdictOf: (receipt) => reviewVerdict(receipt, found.dir, files.readText),
  });
  const jobLinks: Record<string, string> = {};
  for (const step of view.timeline) if (step.job) jobLinks[step.job.id] = boardJobPath(repo, step.job.id);
  let title: string | null = null;
  try {
    title = taskTitle(files.readText(taskFilePath(found.dir)));
  } catch {
    title = null;
  }
  let profile: string;
  let reviewerVendor: string | null = null;
  try {
    const record = readRepositoryRecord(repo.root);
    profile = record.profile;
    if (record.reviewerVendor !== null)
      reviewerVendor = profileRules(record.profile).reviewerVendorPolicy
        ? reviewerVendorText(record.reviewerVendor)
        : `"${record.reviewerVendor}" recorded, not enforced under ${record.profile}`;
  } catch (error) {
    profile = `BATON_PROFILE_INVALID (${(error as Error).message})`;
  }
  return {
    profile,
    reviewerVendor,
    repository: { id: repo.id, root: repo.root, machine: repo.machine, queue: repo.queue.name },
    taskId,
    shortId,
    title,
    state: found.state,
    dir: path.relative(repo.root, found.dir),
    run,
    position,
    clock: run.pendingDelegation
      ? delegationClock(run.pendingDelegation, readEndpoint(repo.root)?.graces ?? DEFAULT_GRACES, Date.now())
      : null,
    view,
    cost,
    pricesProblem: prices.ok ? null : prices.message,
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
export function runsSignature(repositories: readonly DashboardRepository[]): string {
  return repositories
    .map(
      (repo) =>
        `${repo.id}=${
          isReadable(repo.root)
            ? taskDirectories(repo.root)
                .map((entry) => statSignature(runFilePath(entry.dir)))
                .join(',')
            : '-'
        }`,
    )
    .join('|');
}

/** Cheap change detection for a watched run: sizes and mtimes of its run file and job log. */
export function runSignature(repo: DashboardRepository, taskId: string): string {
  const found = findTaskDir(repo.root, taskId);
  const files = [found ? runFilePath(found.dir) : null, logFileOf(repo.root, taskId)];
  return files.map((file) => (file ? statSignature(file) : '-')).join('|');
}
