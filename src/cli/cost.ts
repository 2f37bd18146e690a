import { Command } from 'commander';
import { parseCommand } from './options.ts';
import { lookupRepoRoot } from './common.ts';
import { resolveTaskRef } from '../core/taskRef.ts';
import { nodeRunFiles, readRun, taskDirectories } from '../runs/runList.ts';
import { readPriceTable } from '../runs/prices.ts';
import type { PriceTable } from '../runs/prices.ts';
import { describeRunCost } from '../runs/runCost.ts';
import type { RunCost } from '../runs/runCost.ts';
import { reviewVerdict } from '../runs/runView.ts';
import { formatRunCost, formatRunsCost } from '../runs/costTable.ts';
import { profileRunReadOptions } from '../core/profiles/file.ts';

// `baton cost [<task>] [--json]`: what a run cost, from the figures its receipts hold (read from the
// clients' own records at each seal) and the user's price table (docs/run-view.md "What a stage
// cost"). Read-only, no Redis.

function runCostOf(repoRoot: string, taskDir: string, prices: PriceTable | null): RunCost | string | null {
  const read = readRun(taskDir, nodeRunFiles, profileRunReadOptions(repoRoot));
  if (read.kind === 'missing') return null;
  if (read.kind === 'invalid') return read.message;
  return describeRunCost({ run: read.run, prices, verdictOf: (receipt) => reviewVerdict(receipt, taskDir, nodeRunFiles.readText) });
}

export async function run(argv: string[]): Promise<number> {
  const program = new Command('baton cost')
    .description(
      'What a run cost: tokens, requests, models and wall time per round, stage, role and model, and the review rounds that did not pass (read-only, no Redis). Prices come from .agents/baton.json "prices" only.',
    )
    .argument('[task]', 'task id or short id (default: every run of the repository, one line each)')
    .option('--json', 'print JSON')
    .option('--repo <dir>', 'repository (default: the nearest ancestor of the working directory holding .git)');
  const exit = parseCommand(program, argv, { redis: 'baton cost reads the run files directly; it does not use Redis' });
  if (exit !== null) return exit;
  const options = program.opts<{ json?: boolean; repo?: string }>();
  const [taskRef] = program.args;
  const root = lookupRepoRoot(options.repo);
  if (!root.ok) {
    process.stderr.write(`baton cost: ${root.message}\n`);
    return 1;
  }
  const priceRead = readPriceTable(root.root);
  if (!priceRead.ok) {
    process.stderr.write(`baton cost: ${priceRead.message}\n`);
    return 1;
  }
  const { prices } = priceRead;
  if (taskRef !== undefined) {
    const task = resolveTaskRef(taskRef, { repoRoot: root.root });
    if (!task.ok) {
      process.stderr.write(`baton cost: ${task.code}: ${task.message}\n`);
      return 1;
    }
    const cost = runCostOf(root.root, task.taskDir, prices);
    if (cost === null || typeof cost === 'string') {
      process.stderr.write(`baton cost: ${task.taskId}: ${cost ?? 'no orchestration run exists'}\n`);
      return 1;
    }
    process.stdout.write(options.json ? `${JSON.stringify(cost, null, 2)}\n` : formatRunCost(cost));
    return 0;
  }
  const costs: RunCost[] = [];
  for (const { dir } of taskDirectories(root.root, nodeRunFiles)) {
    const cost = runCostOf(root.root, dir, prices);
    if (cost !== null && typeof cost !== 'string') costs.push(cost);
  }
  if (options.json)
    process.stdout.write(`${JSON.stringify({ repo: root.root, currency: prices?.currency ?? null, runs: costs }, null, 2)}\n`);
  else process.stdout.write(costs.length > 0 ? formatRunsCost(costs) : `no orchestration runs in ${root.root} yet\n`);
  return 0;
}
