import { totalTokens } from '../core/stageCost.ts';
import { compact, formatFigures, formatPrice } from './runCost.ts';
import type { CostFigures, RunCost } from './runCost.ts';

// `baton cost` in a terminal: one run's rounds with their figures, then the sums per stage, role
// and model, the review rounds that did not pass, and the run's total; or one line per run.

function table(header: readonly string[], lines: readonly (readonly string[])[], right: ReadonlySet<number>): string {
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column]!.length)));
  const render = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        column === cells.length - 1 ? cell : right.has(column) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!),
      )
      .join('  ')
      .trimEnd();
  return `${[header, ...lines].map(render).join('\n')}\n`;
}

function seconds(ms: number | null): string {
  if (ms === null) return '-';
  return ms < 60_000
    ? `${(ms / 1000).toFixed(1)}s`
    : `${Math.floor(ms / 60_000)}m${String(Math.round((ms % 60_000) / 1000)).padStart(2, '0')}s`;
}

function priceCell(figures: CostFigures, currency: string | null): string {
  if (currency === null || figures.receipts === figures.unrecorded) return '-';
  return figures.price === null ? `no price: ${figures.unpriced.join(', ')}` : formatPrice(figures.price, currency);
}

function sums(title: string, rows: ReadonlyArray<{ name: string; figures: CostFigures }>, currency: string | null): string {
  if (rows.length === 0) return '';
  return `${title}\n${rows.map(({ name, figures }) => `  ${name.padEnd(22)} ${formatFigures(figures, currency)}${figures.requests ? ` · ${figures.requests} requests` : ''}`).join('\n')}\n`;
}

/** One run's cost, as `baton cost <task>` prints it. */
export function formatRunCost(cost: RunCost): string {
  const { currency } = cost;
  const header = ['ROUND', 'ROLE', 'STATUS', 'MODELS', 'REQ', 'INPUT', 'OUTPUT', 'CACHE-READ', 'CACHE-WRITE', 'WALL', 'PRICE', 'NOTE'];
  const lines = cost.rounds.map((round) => {
    const { figures } = round;
    const recorded = figures.unrecorded === 0;
    const n = (value: number) => (recorded ? value.toLocaleString('en-US') : '-');
    return [
      `${round.stage} r${round.round}`,
      round.role,
      round.status,
      round.models.join(', ') || '-',
      n(figures.requests),
      n(figures.tokens.input),
      n(figures.tokens.output),
      n(figures.tokens.cacheRead),
      n(figures.tokens.cacheCreation),
      seconds(figures.wallMs),
      priceCell(figures, currency),
      [round.verdict, round.note].filter(Boolean).join('; '),
    ];
  });
  const failed = cost.rounds.filter((round) => round.passed === false).length;
  return [
    `${cost.taskId}: ${formatFigures(cost.total, currency)}${currency === null ? ' (no prices: add them to .agents/baton.json, docs/run-view.md "Prices")' : ''}\n\n`,
    lines.length > 0 ? table(header, lines, new Set([4, 5, 6, 7, 8, 9])) : 'no delegation has started yet\n',
    '\n',
    sums(
      'by stage',
      cost.byStage.map(({ stage, figures }) => ({ name: stage, figures })),
      currency,
    ),
    sums(
      'by role',
      cost.byRole.map(({ role, figures }) => ({ name: role, figures })),
      currency,
    ),
    sums(
      'by model',
      cost.byModel.map(({ model, figures }) => ({ name: model, figures })),
      currency,
    ),
    `review rounds that did not pass: ${failed} · ${formatFigures(cost.failedReviews, currency)}\n`,
    cost.total.unrecorded > 0 ? `not recorded: ${cost.total.unrecorded} of ${cost.total.receipts} rounds (see NOTE)\n` : '',
  ].join('');
}

/** Every run's cost in one line each, as `baton cost` prints it without a task. */
export function formatRunsCost(costs: readonly RunCost[]): string {
  const header = ['TASK', 'ROUNDS', 'REQ', 'TOKENS', 'FAILED-REVIEWS', 'PRICE'];
  const lines = costs.map((cost) => [
    cost.taskId,
    String(cost.total.receipts),
    String(cost.total.requests),
    compact(totalTokens(cost.total.tokens)),
    compact(totalTokens(cost.failedReviews.tokens)),
    priceCell(cost.total, cost.currency),
  ]);
  return table(header, lines, new Set([1, 2, 3, 4]));
}
