import { parseArtifactName } from './artifacts.ts';
import { parseReviewSummary } from './reviewSummary.ts';
import type { DelegationReceipt } from './types.ts';

// `complete-stage --content -` (baton): the subagent hands the stage artifact's text to baton, and
// the worker writes it together with the run update. Claude Code refuses a subagent's Write of a
// report-like name (analysis.md, analysis-r2.md), and Codex's workspace-write sandbox keeps
// `.agents/` read-only, so a child cannot always write the file itself. The text is checked before
// anything is written: a refused artifact changes nothing, and the child can fix it and try again.

export const ARTIFACT_INVALID_CODE = 'ORCHESTRATION_ARTIFACT_INVALID';
/** The most a handed-over artifact may hold (the CLI refuses more before it reaches the queue). */
export const MAX_ARTIFACT_BYTES = 1024 * 1024;

/** Why `content` cannot become `receipt.artifact`, or null when it can. */
export function stageArtifactProblem(receipt: Pick<DelegationReceipt, 'artifact' | 'role' | 'stage'>, content: string): string | null {
  const parsed = parseArtifactName(receipt.artifact);
  if (!parsed || receipt.artifact.includes('/') || receipt.artifact.includes('\\')) {
    return `'${receipt.artifact}' is not a canonical artifact name`;
  }
  if (content.trim() === '') return `the content for ${receipt.artifact} is empty`;
  if (Buffer.byteLength(content, 'utf8') > MAX_ARTIFACT_BYTES)
    return `the content for ${receipt.artifact} is larger than ${MAX_ARTIFACT_BYTES} bytes`;
  if (receipt.role === 'reviewer') {
    const review = parseReviewSummary(content);
    if (!review.ok) {
      const hint = review.code === 'REVIEW_SUMMARY_PLACEHOLDER_INVALID' ? `; ${WRITE_NUMBERS}` : '';
      return `${receipt.artifact} has no valid Review Summary (${review.code}: ${review.message})${hint}; nothing was written`;
    }
    if (review.summary.countState === 'placeholders') {
      return `${receipt.artifact}: its finding counts are the placeholders {unresolved-blockers}, {unresolved-major}, {unresolved-minor}, which no step of baton's fills in, so the review would not count as approved; ${WRITE_NUMBERS}; nothing was written`;
    }
  }
  return null;
}

/**
 * What the review skill says about the counts too (src/install/guidance.ts): numbers. 0.9.2's parser
 * also accepts the canonical placeholder sentence, which its ledger step finalizes later; baton has
 * no such step, so placeholders handed over are refused rather than left to cost a round.
 */
export const WRITE_NUMBERS = 'write the counts as numbers: "**Findings (AI-actionable)**: 0 blockers, 1 major, 2 minors"';
