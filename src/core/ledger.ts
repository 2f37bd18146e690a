// The Review Disagreement Ledger (docs/lifecycle.md §5): the six-column table in task.md where reviewers and
// executors record findings and human decisions, and the gates that read it.
import type { ErrorCode } from './errorCodes.ts';

export type LedgerRow = { id: string; stage: string; round: string; severity: string; status: string; evidence: string };

export type LedgerStage = 'analysis' | 'plan' | 'code';
export type FindingSeverity = 'blocker' | 'major' | 'minor';
export type SeverityCounts = Record<FindingSeverity, number>;

export type LedgerStageSummary = {
  stage: LedgerStage;
  canAdvance: boolean;
  findingCounts: SeverityCounts;
  unresolvedFindingCounts: SeverityCounts;
  pendingHumanDecisions: number;
  unresolved: LedgerRow[];
  terminal: LedgerRow[];
};

export const LEDGER_HEADINGS = ['Review Disagreement Ledger', '审查分歧账本'] as const;

export const LEDGER_STATUSES = [
  'open',
  'accepted',
  'adjusted',
  'refuted',
  'cannot-judge',
  'confirmed',
  'needs-human-decision',
  'closed',
  'human-decided',
] as const;
/** Resolved statuses: every other status blocks its stage. */
export const LEDGER_TERMINAL_STATUSES = ['confirmed', 'closed', 'human-decided'] as const;
export const HUMAN_DECISION_STATUSES = ['needs-human-decision', 'human-decided'] as const;
/** `post-review-commit` is reserved for PRC exemption rows. */
export const LEDGER_STAGES = ['analysis', 'plan', 'code', 'post-review-commit'] as const;
export const FINDING_SEVERITIES = ['blocker', 'major', 'minor'] as const;

const TERMINAL = new Set<string>(LEDGER_TERMINAL_STATUSES);
const HUMAN_DECISION = new Set<string>(HUMAN_DECISION_STATUSES);
const LEGAL_STATUS = new Set<string>(LEDGER_STATUSES);
const STAGES = new Set<string>(LEDGER_STAGES);
const SEVERITIES = new Set<string>(FINDING_SEVERITIES);
const STAGE_OF_PREFIX: Readonly<Record<string, string>> = { AN: 'analysis', PL: 'plan', CD: 'code' };

function tableCells(line: string): string[] {
  const cells = line
    .trim()
    .split('|')
    .map((cell) => cell.trim());
  // A row `| a | b |` splits into ['', 'a', 'b', '']: drop the empty outer cells.
  if (cells[0] === '') cells.shift();
  if (cells.at(-1) === '') cells.pop();
  return cells;
}

// Upstream's heading match: `^##\s+<heading>\s*$`, so extra spaces after `##` and trailing spaces
// still find the ledger (a commit gate must not be bypassed by whitespace).
const LEDGER_HEADING_PATTERN = new RegExp(`^##\\s+(?:${LEDGER_HEADINGS.join('|')})\\s*$`);

/**
 * Rows of the ledger table: the section starts at the first line matching `^##\s+<heading>\s*$` (en or
 * zh) and ends at the next `## ` line. Header, separator and short (< 6 cells) rows are skipped. No
 * section → [].
 */
export function parseLedger(content: string): LedgerRow[] {
  const lines = content.split('\n').map((line) => line.replace(/\r$/, ''));
  const start = lines.findIndex((line) => LEDGER_HEADING_PATTERN.test(line));
  if (start === -1) return [];
  const rows: LedgerRow[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('## ')) break;
    if (!line.trim().startsWith('|')) continue;
    const cells = tableCells(line);
    if (cells.length < 6) continue;
    const [id = '', stage = '', round = '', severity = '', status = '', evidence = ''] = cells;
    if (id === 'id' || /^:?-+:?$/.test(id)) continue;
    rows.push({ id, stage, round, severity, status, evidence });
  }
  return rows;
}

/** The first problem in row order, with the §5.3 codes and messages; null when the ledger is valid. */
export function validateLedgerRows(rows: readonly LedgerRow[]): { code: ErrorCode; message: string } | null {
  const seen = new Set<string>();
  for (const row of rows) {
    if (seen.has(row.id)) return { code: 'LEDGER_DUPLICATE_ID', message: `duplicate ledger id '${row.id}'` };
    seen.add(row.id);
    if (/^PRC-[1-9]\d*$/.test(row.id)) {
      const valid =
        row.stage === 'post-review-commit' &&
        row.round === '-' &&
        row.severity === '-' &&
        row.status === 'human-decided' &&
        row.evidence !== '' &&
        !/[\r\n]/.test(row.evidence);
      if (!valid) return { code: 'LEDGER_DOCUMENT_INVALID', message: `post-review exemption row '${row.id}' is invalid` };
      continue;
    }
    if (row.stage === 'post-review-commit') {
      return { code: 'LEDGER_DOCUMENT_INVALID', message: `post-review exemption row '${row.id}' must use a PRC id` };
    }
    if (!/^(AN|PL|CD|HD)-[1-9]\d*$/.test(row.id)) return { code: 'LEDGER_ID_INVALID', message: `ledger id '${row.id}' is invalid` };
    if (!STAGES.has(row.stage)) return { code: 'LEDGER_STAGE_INVALID', message: `ledger stage '${row.stage}' is invalid` };
    if (!LEGAL_STATUS.has(row.status)) return { code: 'LEDGER_STATUS_INVALID', message: `ledger status '${row.status}' is invalid` };
    const prefixStage = STAGE_OF_PREFIX[row.id.slice(0, 2)];
    if (prefixStage !== undefined && prefixStage !== row.stage) {
      return { code: 'LEDGER_STAGE_INVALID', message: `ledger id '${row.id}' conflicts with stage '${row.stage}'` };
    }
    if (row.id.startsWith('HD-')) {
      if (row.round !== '-' || row.severity !== 'decision' || !HUMAN_DECISION.has(row.status)) {
        return { code: 'LEDGER_DOCUMENT_INVALID', message: `decision row '${row.id}' is invalid` };
      }
    } else if (!/^[1-9]\d*$/.test(row.round) || !SEVERITIES.has(row.severity)) {
      return { code: 'LEDGER_DOCUMENT_INVALID', message: `finding row '${row.id}' is invalid` };
    }
  }
  return null;
}

function countSeverities(rows: readonly LedgerRow[]): SeverityCounts {
  const counts: SeverityCounts = { blocker: 0, major: 0, minor: 0 };
  for (const row of rows) {
    if (SEVERITIES.has(row.severity)) counts[row.severity as FindingSeverity] += 1;
  }
  return counts;
}

/** §5.4. HD rows block `canAdvance` while unresolved but are not findings, so they are not counted. */
export function summarizeLedgerStage(rows: readonly LedgerRow[], stage: LedgerStage): LedgerStageSummary {
  const scoped = rows.filter((row) => row.stage === stage);
  const unresolved = scoped.filter((row) => !TERMINAL.has(row.status));
  const terminal = scoped.filter((row) => TERMINAL.has(row.status));
  return {
    stage,
    canAdvance: unresolved.length === 0,
    findingCounts: countSeverities(scoped),
    unresolvedFindingCounts: countSeverities(unresolved),
    pendingHumanDecisions: unresolved.filter((row) => row.status === 'needs-human-decision').length,
    unresolved,
    terminal,
  };
}

/** HD ids are global across stages: one more than the highest `HD-<n>` present, `HD-1` for none. */
export function nextHdId(rows: readonly LedgerRow[]): string {
  let highest = 0;
  for (const row of rows) {
    const match = /^HD-(\d+)$/.exec(row.id);
    if (match?.[1] !== undefined) highest = Math.max(highest, Number.parseInt(match[1], 10));
  }
  return `HD-${highest + 1}`;
}
