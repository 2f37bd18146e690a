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
    if (!review.ok) return `${receipt.artifact} has no valid Review Summary (${review.code}: ${review.message}); nothing was written`;
  }
  return null;
}
