// Review summaries (docs/lifecycle.md §4): the verdict and finding-count lines of a review artifact, in their
// English and Chinese forms, and the gates that compare them with the ledger.
import type { ErrorCode } from './errorCodes.ts';
import fs from 'node:fs';
import path from 'node:path';

import { looseArtifactName, looseHighestRound } from './artifacts.ts';
import type { ReviewFamily } from './artifacts.ts';
import { summarizeLedgerStage, validateLedgerRows } from './ledger.ts';
import type { LedgerRow, LedgerStage } from './ledger.ts';

export type ReviewVerdict = 'Approved' | 'Changes Requested' | 'Rejected';
export type FindingCounts = { blocker: number; major: number; minor: number };
export type ReviewSummary = {
  verdict: ReviewVerdict;
  counts: FindingCounts | null;
  manualValidation: number | null;
  countState: 'numeric' | 'placeholders';
};

export type ReviewSummaryFailure = { ok: false; code: ErrorCode; message: string };
export type ReviewSummaryParse = { ok: true; summary: ReviewSummary; findingsStart: number; findingsEnd: number } | ReviewSummaryFailure;

const SUMMARY_HEADINGS = new Set(['Review Summary', '审查摘要']);
const H2 = /^##\s+(.+?)\s*$/;
const VERDICT_LINE = /^[-*]?\s*\*\*(?:总体结论|Overall Verdict)\*\*[:：]\s*(.+?)\s*$/i;
const FINDINGS_LINE = /^[-*]?\s*\*\*(?:发现（AI 可处理）|Findings \(AI-actionable\))\*\*[:：]\s*(.+?)\s*$/i;
const EN_COUNTS = /^(\d+)\s*blockers?,\s*(\d+)\s*majors?,\s*(\d+)\s*minors?(\s*\/.*)?$/i;
const ZH_COUNTS = /^(\d+)\s*阻塞项，\s*(\d+)\s*主要，\s*(\d+)\s*次要(\s*\/.*)?$/;
const PLACEHOLDERS = ['{unresolved-blockers}', '{unresolved-major}', '{unresolved-minor}'] as const;
const EN_PLACEHOLDER_SENTENCE = '{unresolved-blockers} blockers, {unresolved-major} majors, {unresolved-minor} minors';
const ZH_PLACEHOLDER_SENTENCE = '{unresolved-blockers} 阻塞项，{unresolved-major} 主要，{unresolved-minor} 次要';
const MANUAL_VALIDATION = /\*\*(?:人工校验|Manual[- ]validation)\*\*[:：]\s*(\d+)/i;

const NOT_FOUND_SECTION = 'review artifact must contain one review summary section';
const NOT_FOUND_LINES = 'review summary verdict or finding count line is missing or repeated';
const PLACEHOLDER_INVALID = 'review summary finding counts must be three canonical placeholders or non-negative integers';

type SourceLine = { text: string; start: number };

/** Lines with their offsets in `content`; the text excludes `\n` and a trailing `\r`. */
function sourceLines(content: string): SourceLine[] {
  const lines: SourceLine[] = [];
  let start = 0;
  for (const raw of content.split('\n')) {
    lines.push({ text: raw.replace(/\r$/, ''), start });
    start += raw.length + 1;
  }
  return lines;
}

function normalizeVerdict(raw: string): ReviewVerdict | null {
  const value = raw.trim().toLowerCase();
  if (value === 'approved' || value === '通过') return 'Approved';
  if (value === 'changes requested' || value === '需要修改') return 'Changes Requested';
  if (value === 'rejected' || value === '拒绝') return 'Rejected';
  return null;
}

function parseCounts(value: string): FindingCounts | null {
  const match = ZH_COUNTS.exec(value) ?? EN_COUNTS.exec(value);
  if (!match) return null;
  const [blocker, major, minor] = [match[1], match[2], match[3]].map(Number);
  if (blocker === undefined || major === undefined || minor === undefined) return null;
  return [blocker, major, minor].every(Number.isSafeInteger) ? { blocker, major, minor } : null;
}

/** The canonical placeholder sentence (en or zh), an optional `/ …` suffix, each placeholder exactly once. */
function hasCanonicalPlaceholders(value: string): boolean {
  const sentence = [EN_PLACEHOLDER_SENTENCE, ZH_PLACEHOLDER_SENTENCE].find((candidate) => value.startsWith(candidate));
  if (sentence === undefined) return false;
  if (!/^(\s*\/.*)?$/.test(value.slice(sentence.length))) return false;
  return PLACEHOLDERS.every((token) => value.split(token).length === 2);
}

function parseManualValidation(value: string): number | null {
  const match = MANUAL_VALIDATION.exec(value);
  if (!match?.[1]) return null;
  const count = Number(match[1]);
  return Number.isSafeInteger(count) ? count : null;
}

/**
 * Parse the review summary (§4.2). `findingsStart`/`findingsEnd` delimit the findings line in `content`
 * (the text the regex matched), so placeholders can be rewritten in place.
 */
export function parseReviewSummary(content: string): ReviewSummaryParse {
  const lines = sourceLines(content);
  const headings = lines.flatMap((line, index) => {
    const match = H2.exec(line.text);
    return match ? [{ index, text: match[1] ?? '' }] : [];
  });
  const summaries = headings.filter((heading) => SUMMARY_HEADINGS.has(heading.text));
  const summary = summaries.length === 1 ? summaries[0] : undefined;
  if (!summary) return { ok: false, code: 'REVIEW_SUMMARY_NOT_FOUND', message: NOT_FOUND_SECTION };
  const end = headings.find((heading) => heading.index > summary.index)?.index ?? lines.length;
  const section = lines.slice(summary.index + 1, end);

  const matchesOf = (pattern: RegExp) =>
    section.flatMap((line) => {
      const match = pattern.exec(line.text);
      return match ? [{ value: match[1] ?? '', start: line.start + match.index, end: line.start + match.index + match[0].length }] : [];
    });
  const verdicts = matchesOf(VERDICT_LINE);
  const findings = matchesOf(FINDINGS_LINE);
  const verdict = verdicts.length === 1 && verdicts[0] ? normalizeVerdict(verdicts[0].value) : null;
  const findingsLine = findings.length === 1 ? findings[0] : undefined;
  if (!verdict || !findingsLine) return { ok: false, code: 'REVIEW_SUMMARY_NOT_FOUND', message: NOT_FOUND_LINES };

  const manualValidation = parseManualValidation(findingsLine.value);
  const counts = parseCounts(findingsLine.value);
  if (counts) {
    return {
      ok: true,
      summary: { verdict, counts, manualValidation, countState: 'numeric' },
      findingsStart: findingsLine.start,
      findingsEnd: findingsLine.end,
    };
  }
  if (hasCanonicalPlaceholders(findingsLine.value)) {
    return {
      ok: true,
      summary: { verdict, counts: null, manualValidation, countState: 'placeholders' },
      findingsStart: findingsLine.start,
      findingsEnd: findingsLine.end,
    };
  }
  return { ok: false, code: 'REVIEW_SUMMARY_PLACEHOLDER_INVALID', message: PLACEHOLDER_INVALID };
}

function sameCounts(left: FindingCounts, right: FindingCounts): boolean {
  return left.blocker === right.blocker && left.major === right.major && left.minor === right.minor;
}

function describeCounts(counts: FindingCounts): string {
  return `${counts.blocker} blockers, ${counts.major} majors, ${counts.minor} minors`;
}

/**
 * Write the ledger's unresolved counts into a placeholder summary, keeping its language and `/ …` suffix.
 * Numeric counts must already equal `counts` (then nothing changes).
 */
export function finalizeReviewSummaryContent(
  content: string,
  counts: FindingCounts,
): { ok: true; content: string; changed: boolean } | ReviewSummaryFailure {
  const parsed = parseReviewSummary(content);
  if (!parsed.ok) return parsed;
  if (parsed.summary.counts !== null) {
    if (sameCounts(parsed.summary.counts, counts)) return { ok: true, content, changed: false };
    return {
      ok: false,
      code: 'REVIEW_SUMMARY_COUNT_MISMATCH',
      message:
        'review summary finding counts do not match the ledger snapshot ' +
        `(summary: ${describeCounts(parsed.summary.counts)}; ledger: ${describeCounts(counts)})`,
    };
  }
  // Each placeholder occurs exactly once in the findings line, so a single replace is exact.
  const line = content
    .slice(parsed.findingsStart, parsed.findingsEnd)
    .replace(PLACEHOLDERS[0], String(counts.blocker))
    .replace(PLACEHOLDERS[1], String(counts.major))
    .replace(PLACEHOLDERS[2], String(counts.minor));
  return { ok: true, content: content.slice(0, parsed.findingsStart) + line + content.slice(parsed.findingsEnd), changed: true };
}

/**
 * The review-summary gate (docs/lifecycle.md §5.5, later upstream): the summary must be finalized and its counts
 * must equal the stage's unresolved ledger findings. An invalid ledger fails with its own code.
 */
export function checkReviewSummaryGate(content: string, ledgerRows: LedgerRow[], stage: LedgerStage): { ok: true } | ReviewSummaryFailure {
  const parsed = parseReviewSummary(content);
  if (!parsed.ok) return parsed;
  if (parsed.summary.counts === null) {
    return { ok: false, code: 'REVIEW_FINDING_COUNTS_NOT_FINALIZED', message: 'review summary finding counts are not finalized' };
  }
  const ledgerError = validateLedgerRows(ledgerRows);
  if (ledgerError) return { ok: false, ...ledgerError };
  const unresolved = summarizeLedgerStage(ledgerRows, stage).unresolvedFindingCounts;
  if (!sameCounts(parsed.summary.counts, unresolved)) {
    return {
      ok: false,
      code: 'REVIEW_SUMMARY_COUNT_MISMATCH',
      message:
        `review summary finding counts (${describeCounts(parsed.summary.counts)}) ` +
        `do not match the unresolved ${stage} ledger findings (${describeCounts(unresolved)})`,
    };
  }
  return { ok: true };
}

/** The verdict of the latest review, or why the latest review round cannot be judged. */
export type LatestReviewVerdict = { ok: true; approved: boolean } | { ok: false; message: string };

/**
 * Orchestration's approval check (§4, 0.9.2): the latest review (by the loose round scan) parses, says
 * Approved and has numeric counts. Non-zero counts are not rejected here. No review → not approved.
 * When the latest round's file cannot be read (a stray `review-code-r03.md` makes round 3 the latest
 * while `review-code-r3.md` does not exist; a directory named like a review) or the round is not a
 * safe integer, 0.9.2 threw from routing; baton reports why instead of routing to a new rework round.
 * A directory read error is thrown to the caller.
 */
export function latestReviewVerdict(taskDir: string, reviewFamily: ReviewFamily): LatestReviewVerdict {
  const round = looseHighestRound(taskDir, reviewFamily);
  if (round === 0) return { ok: true, approved: false };
  if (!Number.isSafeInteger(round)) return { ok: false, message: `latest ${reviewFamily} round ${round} is out of range` };
  const name = looseArtifactName(reviewFamily, round);
  let content: string;
  try {
    content = fs.readFileSync(path.join(taskDir, name), 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
    return { ok: false, message: `latest ${reviewFamily} round ${round} (${name}) cannot be read (${reason})` };
  }
  const parsed = parseReviewSummary(content);
  return { ok: true, approved: parsed.ok && parsed.summary.verdict === 'Approved' && parsed.summary.counts !== null };
}
