import fs from 'node:fs';
import path from 'node:path';
import { inspectArtifactDirectory, namedReviewInput, reviewedFamilyOf } from './artifacts.ts';
import type { ReviewFamily } from './artifacts.ts';

// Why a review does not count (docs/lifecycle.md §3.4). A review binds the latest artifact of its
// family only by naming it on its `**Review Input**:` line; a review without that line, or naming
// another file, is accepted by 0.9.2, and routing then asks for another review round without a
// word. baton refuses it at complete-stage (ORCHESTRATION_REVIEW_INPUT_MISMATCH), while the
// reviewer is still running and can fix it; route, `baton runs` and the run page still show the
// reason next to a new round when such a review reached the task another way.

export const REVIEW_INPUT_MISMATCH_CODE = 'ORCHESTRATION_REVIEW_INPUT_MISMATCH';

/**
 * A review that does not count as the review of `input` (the latest artifact), and why; `given` is
 * what its Review Input line names (the first back-ticked `.md` name), null when it names nothing.
 */
export type UnboundReview = Readonly<{ review: string; input: string; given: string | null; reason: string }>;

export type ReviewText = Readonly<{
  name: string;
  content: string;
  /**
   * When the review was written. A latest artifact newer than the review is a rework round that
   * came after it — the normal way to a new review round, not a fault of the review. Absent while
   * the review is being completed (nothing reworks the artifact during a review delegation).
   */
  mtimeMs?: number;
}>;

/** Why `review` does not bind the latest artifact of the family it reviews; null when it does (or when a rework came after it). */
export function unboundReview(taskDir: string, reviewFamily: ReviewFamily, review: ReviewText): UnboundReview | null {
  const family = reviewedFamilyOf(reviewFamily);
  const latest = inspectArtifactDirectory(taskDir, family).latest;
  if (!latest) return null;
  if (review.mtimeMs !== undefined && latest.mtimeMs > review.mtimeMs) return null;
  const named = namedReviewInput(review.content, reviewFamily);
  if (named.kind === 'named' && named.input.name === latest.name) return null;
  const line = '"**Review Input**:" line';
  const reason =
    named.kind === 'no-marker'
      ? `it has no ${line}`
      : named.kind === 'no-canonical-name'
        ? `its ${line} names no ${family} artifact`
        : `its ${line} names ${named.input.name} instead`;
  const given = named.kind === 'named' ? named.input.name : named.kind === 'no-canonical-name' ? (named.names[0] ?? null) : null;
  return { review: review.name, input: latest.name, given, reason };
}

/** The latest review of `reviewFamily` (the inventory's, as §3.4 reads it), checked with unboundReview. */
export function latestReviewUnbound(taskDir: string, reviewFamily: ReviewFamily): UnboundReview | null {
  const latest = inspectArtifactDirectory(taskDir, reviewFamily).latest;
  if (!latest) return null;
  let content: string;
  try {
    content = fs.readFileSync(path.join(taskDir, latest.name), 'utf8');
  } catch {
    // The inventory's BROKEN_REFERENCE covers an unreadable review; there is nothing more to say here.
    return null;
  }
  return unboundReview(taskDir, reviewFamily, { name: latest.name, content, mtimeMs: latest.mtimeMs });
}

/** One sentence for route, `baton runs` and the run page. */
export function describeUnboundReview(unbound: UnboundReview): string {
  return `${unbound.review} does not count as the review of ${unbound.input}: ${unbound.reason}`;
}

/** Why complete-stage refuses such a review: what was expected, what was given, and how to fix it. */
export function reviewInputMismatchMessage(unbound: UnboundReview): string {
  return (
    `${unbound.review}: expected Review Input ${unbound.input} (the latest artifact under review), given ${unbound.given ?? 'none'} ` +
    `(${unbound.reason}). Put "- **Review Input**: \`${unbound.input}\`" in the review and run complete-stage again; ` +
    'baton wrote nothing, and the run and its delegation are unchanged'
  );
}
