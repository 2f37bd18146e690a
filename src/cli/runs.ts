import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { parseCommand } from './options.ts';
import { applyEvent } from '../core/engine.ts';
import { readRunFile } from '../core/runStore.ts';
import type { TaskState, WorkspaceFingerprinter } from '../core/types.ts';
import { lookupRepoRoot } from './common.ts';
import { checkoutRecord } from '../queue/checkoutId.ts';
import { queueNameFor } from '../queue/eventIds.ts';

// `baton runs [--json]`: every orchestration run of the repository, read straight from the task
// directories (active, blocked, completed, archive), and which queue/machine/path they belong to.
// Read-only for runs (it may create the checkout id in .git/baton), no Redis. A corrupt run file is a
// row of its own (decision 2), never the end of the listing.

export type PendingSummary = Readonly<{ id: string; role: string; stage: string; round: number; status: string; client: string }>;

export type RunRow =
  | Readonly<{
      taskId: string;
      shortId: string | null;
      state: TaskState;
      dir: string;
      status: 'running' | 'paused' | 'completed';
      stage: string | null;
      round: number | null;
      steps: Readonly<{ done: number; max: number }>;
      pending: PendingSummary | null;
      pause: Readonly<{ code: string; message: string; recoverable: boolean }> | null;
      updatedAt: string;
    }>
  | Readonly<{ taskId: string; shortId: string | null; state: TaskState; dir: string; status: 'corrupt'; error: string }>;

const FLAT_STATES = ['active', 'blocked', 'completed'] as const;

/** route never captures a fingerprint; this seam proves it. */
const noFingerprints: WorkspaceFingerprinter = {
  capture: () => Promise.reject(new Error('baton runs is read-only')),
  diff: () => Promise.reject(new Error('baton runs is read-only')),
};

function subdirs(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
  } catch {
    return [];
  }
}

/** Every task directory of the repository, with the state its location says. */
export function taskDirectories(repoRoot: string): { state: TaskState; dir: string }[] {
  const workspace = path.join(repoRoot, '.agents', 'workspace');
  const found: { state: TaskState; dir: string }[] = [];
  for (const state of FLAT_STATES) {
    for (const name of subdirs(path.join(workspace, state))) found.push({ state, dir: path.join(workspace, state, name) });
  }
  const archive = path.join(workspace, 'archive');
  for (const year of subdirs(archive).filter((name) => /^\d{4}$/.test(name))) {
    for (const month of subdirs(path.join(archive, year)).filter((name) => /^\d{2}$/.test(name))) {
      for (const day of subdirs(path.join(archive, year, month)).filter((name) => /^\d{2}$/.test(name))) {
        for (const name of subdirs(path.join(archive, year, month, day))) found.push({ state: 'archive', dir: path.join(archive, year, month, day, name) });
      }
    }
  }
  return found;
}

/** task id → short id, from the active registry; anything unreadable means no short ids. */
function shortIds(repoRoot: string): Map<string, string> {
  try {
    const registry = JSON.parse(fs.readFileSync(path.join(repoRoot, '.agents', 'workspace', 'active', '.short-ids.json'), 'utf8')) as { ids?: Record<string, unknown> };
    return new Map(Object.entries(registry.ids ?? {}).flatMap(([key, value]) => (typeof value === 'string' ? [[value, key] as const] : [])));
  } catch {
    return new Map();
  }
}

export async function listRuns(repoRoot: string): Promise<RunRow[]> {
  const shorts = shortIds(repoRoot);
  const rows: RunRow[] = [];
  for (const { state, dir } of taskDirectories(repoRoot)) {
    const read = readRunFile(dir);
    if (read.kind === 'missing') continue;
    const name = path.basename(dir);
    const relative = path.relative(repoRoot, dir);
    if (read.kind === 'invalid') {
      rows.push({ taskId: name, shortId: shorts.get(name) ?? null, state, dir: relative, status: 'corrupt', error: read.message });
      continue;
    }
    const { run } = read;
    const receipt = run.pendingDelegation;
    let stage: string | null = receipt?.stage ?? run.nextStage;
    let round: number | null = receipt?.round ?? null;
    if (!receipt && run.status === 'running') {
      // Between delegations the run does not store what comes next; routing (read-only) knows.
      const routed = (await applyEvent({ intent: 'route', taskRef: run.taskId }, { repoRoot, fingerprinter: noFingerprints })).result;
      if (routed.next && (stage === null || stage === routed.next.stage)) {
        stage = routed.next.stage;
        round = routed.next.round;
      }
    }
    rows.push({
      taskId: run.taskId,
      shortId: shorts.get(run.taskId) ?? null,
      state,
      dir: relative,
      status: run.status,
      stage,
      round,
      steps: { done: run.stepCount, max: run.maxSteps },
      pending: receipt ? { id: receipt.id, role: receipt.role, stage: receipt.stage, round: receipt.round, status: receipt.status, client: receipt.client } : null,
      pause: run.pause,
      updatedAt: run.updatedAt,
    });
  }
  return rows;
}

export function formatRunsTable(rows: readonly RunRow[]): string {
  const header = ['TASK', 'ID', 'STATE', 'STATUS', 'STAGE', 'ROUND', 'STEPS', 'PENDING', 'PAUSE / NOTE'];
  const lines = rows.map((row) => {
    const short = row.shortId ? `#${row.shortId}` : '-';
    if (row.status === 'corrupt') return [row.taskId, short, row.state, 'corrupt', '-', '-', '-', '-', row.error];
    const pending = row.pending ? `${row.pending.id.slice(0, 8)} ${row.pending.role} ${row.pending.status} ${row.pending.client}` : '-';
    const pause = row.pause ? `${row.pause.code}: ${row.pause.message}${row.pause.recoverable ? '' : ' (not recoverable)'}` : '';
    return [row.taskId, short, row.state, row.status, row.stage ?? '-', row.round === null ? '-' : String(row.round), `${row.steps.done}/${row.steps.max}`, pending, pause];
  });
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column]!.length)));
  const render = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return `${[header, ...lines].map(render).join('\n')}\n`;
}

/** Which checkout (and so which queue) this is, on which machine and path: one team Redis holds many. */
export type CheckoutSummary = Readonly<{ id: string; queue: string; host: string; root: string; createdAt: string }>;

export function checkoutSummary(repoRoot: string): CheckoutSummary {
  const real = fs.realpathSync.native(repoRoot);
  const record = checkoutRecord(real);
  return { id: record.id, queue: queueNameFor(record.id), host: os.hostname(), root: real, createdAt: record.createdAt };
}

export function formatCheckout(checkout: CheckoutSummary): string {
  return `queue ${checkout.queue} · checkout ${checkout.id} on ${checkout.host}:${checkout.root}\n`;
}

export async function run(argv: string[]): Promise<number> {
  const program = new Command('baton runs')
    .description('List every orchestration run of the repository (read-only, no Redis).')
    .option('--json', 'print JSON: { repo, runs: [...] }')
    .option('--repo <dir>', 'repository (default: the nearest ancestor of the working directory holding .git)');
  const exit = parseCommand(program, argv, { redis: 'baton runs reads the run files directly; it does not use Redis' });
  if (exit !== null) return exit;
  const options = program.opts<{ json?: boolean; repo?: string }>();
  const root = lookupRepoRoot(options.repo);
  if (!root.ok) {
    process.stderr.write(`baton runs: ${root.message}\n`);
    return 1;
  }
  const rows = await listRuns(root.root);
  const checkout = checkoutSummary(root.root);
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ repo: root.root, checkout, runs: rows }, null, 2)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    process.stdout.write(`no orchestration runs in ${root.root}\n${formatCheckout(checkout)}`);
    return 0;
  }
  process.stdout.write(`${formatRunsTable(rows)}\n${formatCheckout(checkout)}`);
  const corrupt = rows.filter((row) => row.status === 'corrupt').length;
  if (corrupt > 0) process.stderr.write(`baton runs: ${corrupt} run file(s) could not be read; commands on those tasks report ORCHESTRATION_STATE_INVALID\n`);
  return 0;
}
