import { describe, expect, it } from 'vitest';
import { WRITE_NUMBERS, stageArtifactProblem } from '../../src/core/stageArtifact.ts';

// What `complete-stage --content -` says about a review's finding counts: numbers, as the review
// skill says (test/ops/installInstructions.test.ts checks the skill's side). Words are refused with
// upstream's REVIEW_SUMMARY_PLACEHOLDER_INVALID and what to write instead; the canonical placeholders,
// which 0.9.2's parser accepts and which nothing in baton fills in, are refused too.

const receipt = { artifact: 'review-analysis.md', role: 'reviewer', stage: 'review-analysis' } as const;
const review = (findings: string) =>
  `# Review\n\n- **Review Input**: \`analysis.md\`\n\n## Review Summary\n\n- **Overall Verdict**: Approved\n- **Findings (AI-actionable)**: ${findings}\n`;

describe('stageArtifactProblem: the finding counts of a review', () => {
  it('numbers are fine', () => {
    expect(stageArtifactProblem(receipt, review('0 blockers, 1 major, 2 minors / **Manual validation**: 0'))).toBeNull();
  });

  it('words: REVIEW_SUMMARY_PLACEHOLDER_INVALID, then what to write', () => {
    expect(stageArtifactProblem(receipt, review('none at all'))).toBe(
      'review-analysis.md has no valid Review Summary (REVIEW_SUMMARY_PLACEHOLDER_INVALID: review summary finding counts must be ' +
        'three canonical placeholders or non-negative integers); write the counts as numbers: ' +
        '"**Findings (AI-actionable)**: 0 blockers, 1 major, 2 minors"; nothing was written',
    );
  });

  it('the canonical placeholders: refused, since nothing fills them in and the review would not count as approved', () => {
    const problem = stageArtifactProblem(
      receipt,
      review('{unresolved-blockers} blockers, {unresolved-major} majors, {unresolved-minor} minors'),
    );
    expect(problem).toBe(
      'review-analysis.md: its finding counts are the placeholders {unresolved-blockers}, {unresolved-major}, {unresolved-minor}, ' +
        "which no step of baton's fills in, so the review would not count as approved; " +
        `${WRITE_NUMBERS}; nothing was written`,
    );
    // The Chinese form too.
    expect(
      stageArtifactProblem(
        receipt,
        '# 审查\n\n## 审查摘要\n\n- **总体结论**：通过\n- **发现（AI 可处理）**：{unresolved-blockers} 阻塞项，{unresolved-major} 主要，{unresolved-minor} 次要\n',
      ),
    ).toMatch(/^review-analysis\.md: its finding counts are the placeholders /);
  });

  it('an executor artifact has no summary to check', () => {
    expect(stageArtifactProblem({ artifact: 'analysis.md', role: 'executor', stage: 'analysis' }, '# Analysis\n')).toBeNull();
  });
});
