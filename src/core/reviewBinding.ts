import fs from 'node:fs';
import path from 'node:path';
import { inspectArtifactDirectory, namedReviewInput, reviewedFamilyOf } from './artifacts.ts';
import type { ReviewFamily } from './artifacts.ts';

// Why a review does not count (docs/lifecycle.md §3.4). A review binds the latest artifact of its
// family only by naming it on its `**Review Input**:` line; a review without that line, or naming
// another round, is accepted as 0.9.2 accepts it, and routing then asks for another review round
// without a word. baton says why: complete-stage warns when the review is handed over, and route,
// `baton runs` and the run page show the reason next to the new round.

/** A review that does not count as the review of `input` (the latest artifact), and why. */
export type UnboundReview = Readonly<{ review: string; input: string; reason: string }>;

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
  return { review: review.name, input: latest.name, reason };
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

/** The warning of a complete-stage that hands over such a review. */
export function unboundReviewWarning(unbound: UnboundReview, nextReview: string): string {
  return (
    `${unbound.review} will not count as the review of ${unbound.input}: ${unbound.reason}; ` +
    `route will ask for another review (${nextReview}). A review counts when it names what it reviewed: "- **Review Input**: \`${unbound.input}\`"`
  );
}
