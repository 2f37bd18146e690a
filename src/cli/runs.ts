import fs from 'node:fs';
import os from 'node:os';
import { Command, Option } from 'commander';
import { milliseconds, parseCommand } from './options.ts';
import { FIRST_RUN_HINT, RUN_ROW_STATUSES, filterRuns, formatRunsTable, listRuns } from '../runs/runList.ts';
import type { RunRow } from '../runs/runList.ts';
import { lookupRepoRoot } from './common.ts';
import { branchOf, commonDirOf, gitDirOf, linkedWorktreesOf, mainRepositoryOf } from '../base/repoRoot.ts';
import { checkoutRecord } from '../queue/checkoutId.ts';
import { queueNameFor } from '../queue/keys.ts';
import { readEndpoint } from '../queue/endpoint.ts';

// `baton runs [--json] [--watch]`: every orchestration run of the repository, read straight from
// the task directories (src/runs/runList.ts), and which queue/machine/path they belong to.
// Read-only for runs (it may create the checkout id in .git/baton), no Redis. `--watch` redraws the
// table in place until Ctrl-C, for people without a browser.

export { formatRunsTable, listRuns, taskDirectories } from '../runs/runList.ts';
export type { PendingSummary, RunRow } from '../runs/runList.ts';

/** A checkout's branch as `baton runs` says it: `branch B`, or `detached HEAD`. */
type CheckoutBranch = Readonly<{ root: string; branch: string | null }>;

/**
 * Which checkout (and so which queue) this is, on which machine and path: one team Redis holds many.
 * With linked worktrees, its branch, the main repository of a linked worktree, and the repository's
 * other checkouts, each with its own runs (docs/architecture.md "Worktrees").
 */
export type CheckoutSummary = Readonly<{
  id: string;
  queue: string;
  host: string;
  root: string;
  createdAt: string;
  branch: string | null;
  /** The main repository's root when this checkout is a linked worktree. */
  mainRepository: string | null;
  /** The repository's other checkouts (its main checkout and linked worktrees whose work tree is there). */
  otherCheckouts: readonly CheckoutBranch[];
}>;

/** Every checkout of the repository `real` is a checkout of: its main checkout first, then its linked worktrees whose work tree is there. */
function repositoryCheckouts(real: string): string[] {
  return [
    mainRepositoryOf(real) ?? real,
    ...linkedWorktreesOf(commonDirOf(gitDirOf(real))).flatMap((worktree) => (worktree.root ? [worktree.root] : [])),
  ];
}

export function checkoutSummary(repoRoot: string): CheckoutSummary {
  const real = fs.realpathSync.native(repoRoot);
  const record = checkoutRecord(real);
  const main = mainRepositoryOf(real);
  const checkouts = repositoryCheckouts(real);
  return {
    id: record.id,
    queue: queueNameFor(record.id),
    host: os.hostname(),
    root: real,
    createdAt: record.createdAt,
    branch: branchOf(real),
    mainRepository: main,
    otherCheckouts: checkouts.filter((root) => root !== real).map((root) => ({ root, branch: branchOf(root) })),
  };
}

const branchText = (branch: string | null) => (branch === null ? 'detached HEAD' : `branch ${branch}`);

export function formatCheckout(checkout: CheckoutSummary): string {
  let text = `queue ${checkout.queue} · checkout ${checkout.id} on ${checkout.host}:${checkout.root}\n`;
  if (checkout.mainRepository === null && checkout.otherCheckouts.length === 0) return text;
  text += `${branchText(checkout.branch)}${checkout.mainRepository ? ` · linked worktree of ${checkout.mainRepository}` : ''}\n`;
  const others = checkout.otherCheckouts.map((other) => `  ${other.root} (${branchText(other.branch)})\n`).join('');
  return `${text}the repository's other checkouts, each with its own runs (baton runs --repo DIR):\n${others}`;
}

/** One checkout of the repository with its own runs (`baton runs --worktrees`). */
export type CheckoutRuns = Readonly<{ root: string; branch: string | null; mainCheckout: boolean; runs: RunRow[] }>;

/** The runs of every checkout of the repository `repoRoot` belongs to, grouped by checkout (main checkout first). */
export async function repositoryRuns(repoRoot: string, filter: { status?: string; search?: string }): Promise<CheckoutRuns[]> {
  const real = fs.realpathSync.native(repoRoot);
  return Promise.all(
    repositoryCheckouts(real).map(async (root, index) => ({
      root,
      branch: branchOf(root),
      mainCheckout: index === 0 && mainRepositoryOf(root) === null,
      runs: filterRuns(await listRuns(root, undefined, { graces: readEndpoint(root)?.graces }), filter),
    })),
  );
}

export function formatRepositoryRuns(groups: readonly CheckoutRuns[]): string {
  const main = groups.find((group) => group.mainCheckout)?.root ?? groups[0]?.root ?? '';
  const parts = groups.map((group) => {
    const kind = group.mainCheckout ? 'main checkout' : 'linked worktree';
    const body = group.runs.length === 0 ? 'no runs\n' : formatRunsTable(group.runs);
    return `== ${group.root} (${branchText(group.branch)} · ${kind})\n${body}`;
  });
  return `repository ${main}: ${groups.length} checkout${groups.length === 1 ? '' : 's'}, each with its own runs\n\n${parts.join('\n')}`;
}

/** Cursor home, the frame, then clear whatever the previous (longer) frame left below it. */
export function watchFrame(root: string, rows: readonly RunRow[], at: Date, checkout?: CheckoutSummary): string {
  const table = rows.length === 0 ? noRuns(root) : formatRunsTable(rows);
  const body = checkout ? `${table}\n${formatCheckout(checkout)}` : table;
  const lines = `baton runs — ${root} — ${at.toISOString().slice(11, 19)} UTC (Ctrl-C to stop)\n\n${body}`.split('\n');
  return `\x1b[H${lines.map((line) => `${line}\x1b[K`).join('\n')}\x1b[J`;
}

function noRuns(root: string): string {
  return `no orchestration runs in ${root} yet. ${FIRST_RUN_HINT}\n`;
}

type RunsOptions = {
  json?: boolean;
  repo?: string;
  watch?: boolean;
  interval: number;
  status?: string;
  search?: string;
  worktrees?: boolean;
};

export async function run(argv: string[]): Promise<number> {
  const program = new Command('baton runs')
    .description('List every orchestration run of the repository (read-only, no Redis).')
    .option('--json', 'print JSON: { repo, runs: [...] }')
    .option('--repo <dir>', 'repository (default: the nearest ancestor of the working directory holding .git)')
    .addOption(new Option('--status <status>', 'only runs with this status').choices(RUN_ROW_STATUSES))
    .option('--search <ref>', 'only runs whose task id contains this, or whose short id is this')
    .option(
      '--worktrees',
      'every checkout of the repository (its main checkout and linked worktrees), each with its branch and its own runs',
    )
    .option('--watch', 'redraw the table in place until Ctrl-C')
    .option('--interval <ms>', 'how often --watch redraws', milliseconds, 1_000);
  const exit = parseCommand(program, argv, { redis: 'baton runs reads the run files directly; it does not use Redis' });
  if (exit !== null) return exit;
  const options = program.opts<RunsOptions>();
  const root = lookupRepoRoot(options.repo);
  if (!root.ok) {
    process.stderr.write(`baton runs: ${root.message}\n`);
    return 1;
  }
  // The clocks with the graces the repository's worker recorded (docs/architecture.md "Reconciliation").
  const rowsNow = async () =>
    filterRuns(await listRuns(root.root, undefined, { graces: readEndpoint(root.root)?.graces }), {
      status: options.status,
      search: options.search,
    });
  const checkout = checkoutSummary(root.root);
  if (options.worktrees) {
    if (options.watch) {
      process.stderr.write('baton runs: --worktrees and --watch cannot be combined\n');
      return 1;
    }
    const groups = await repositoryRuns(root.root, { status: options.status, search: options.search });
    process.stdout.write(
      options.json ? `${JSON.stringify({ repo: root.root, checkout, worktrees: groups }, null, 2)}\n` : formatRepositoryRuns(groups),
    );
    return 0;
  }
  if (options.watch) return watch(root.root, rowsNow, options.interval, checkout);
  const rows = await rowsNow();
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ repo: root.root, checkout, runs: rows }, null, 2)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    process.stdout.write(
      `${options.status || options.search ? `no orchestration runs in ${root.root} match\n` : noRuns(root.root)}${formatCheckout(checkout)}`,
    );
    return 0;
  }
  process.stdout.write(`${formatRunsTable(rows)}\n${formatCheckout(checkout)}`);
  const corrupt = rows.filter((row) => row.status === 'corrupt').length;
  if (corrupt > 0)
    process.stderr.write(
      `baton runs: ${corrupt} run file(s) could not be read; commands on those tasks report ORCHESTRATION_STATE_INVALID\n`,
    );
  return 0;
}

async function watch(root: string, rowsNow: () => Promise<RunRow[]>, intervalMs: number, checkout: CheckoutSummary): Promise<number> {
  const interactive = process.stdout.isTTY === true;
  // Alternate screen on a terminal, so the shell's scrollback is left as it was.
  if (interactive) process.stdout.write('\x1b[?1049h\x1b[?25l');
  let stopped = false;
  const stop = () => {
    stopped = true;
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  let last = '';
  try {
    while (!stopped) {
      const rows = await rowsNow();
      const frame = watchFrame(root, rows, new Date(), checkout);
      // Redraw only when something besides the clock changed (the clock is second-resolution).
      const content = frame.replace(/\d\d:\d\d:\d\d UTC/, '');
      if (content !== last || interactive) process.stdout.write(frame);
      last = content;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    if (interactive) process.stdout.write('\x1b[?25h\x1b[?1049l');
  }
  return 0;
}
