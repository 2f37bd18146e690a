import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { LedgerRow } from '../../src/core/ledger.ts';
import {
  checkReviewSummaryGate,
  finalizeReviewSummaryContent,
  latestReviewVerdict,
  parseReviewSummary,
} from '../../src/core/reviewSummary.ts';
import { EXAMPLE_TASK_DIR } from '../support/fixturePaths.ts';

const NOT_FOUND_SECTION = {
  ok: false,
  code: 'REVIEW_SUMMARY_NOT_FOUND',
  message: 'review artifact must contain one review summary section',
};
const NOT_FOUND_LINES = {
  ok: false,
  code: 'REVIEW_SUMMARY_NOT_FOUND',
  message: 'review summary verdict or finding count line is missing or repeated',
};
const PLACEHOLDER_INVALID = {
  ok: false,
  code: 'REVIEW_SUMMARY_PLACEHOLDER_INVALID',
  message: 'review summary finding counts must be three canonical placeholders or non-negative integers',
};

function en(verdict: string, findings: string): string {
  return `# Review\n\n- **Review Input**: \`code.md\`\n\n## Review Summary\n\n- **Reviewer**: codex\n- **Overall Verdict**: ${verdict}\n- **Findings (AI-actionable)**: ${findings}\n\n## Findings\n\nNone.\n`;
}

function zh(verdict: string, findings: string): string {
  return `# 审查报告\n\n- **审查输入**：\`code.md\`\n\n## 审查摘要\n\n- **总体结论**：${verdict}\n- **发现（AI 可处理）**：${findings}\n\n## 发现\n\n无。\n`;
}

function row(id: string, severity: string, status: string, stage = 'code'): LedgerRow {
  return { id, stage, round: '1', severity, status, evidence: `review-code.md#${id}` };
}

describe('parseReviewSummary', () => {
  for (const { form, content, summary, findingsLine } of [
    {
      form: 'English',
      content: en('Approved', '0 blockers, 0 majors, 0 minors / **Manual validation**: 0'),
      summary: { verdict: 'Approved', counts: { blocker: 0, major: 0, minor: 0 }, manualValidation: 0, countState: 'numeric' },
      findingsLine: '- **Findings',
    },
    {
      form: 'Chinese',
      content: zh('需要修改', '0 阻塞项，1 主要，2 次要 / **人工校验**：3'),
      summary: { verdict: 'Changes Requested', counts: { blocker: 0, major: 1, minor: 2 }, manualValidation: 3, countState: 'numeric' },
      findingsLine: '- **发现',
    },
  ]) {
    it(`parses the ${form} form`, () => {
      const parsed = parseReviewSummary(content);
      expect(parsed).toEqual({
        ok: true,
        summary,
        findingsStart: content.indexOf(findingsLine),
        findingsEnd: content.indexOf('\n', content.indexOf(findingsLine)),
      });
    });
  }

  it('parses both example reviews', () => {
    for (const [file, verdict, major] of [
      ['review-analysis.md', 'Changes Requested', 1],
      ['review-analysis-r2.md', 'Approved', 0],
    ] as const) {
      expect(parseReviewSummary(fs.readFileSync(path.join(EXAMPLE_TASK_DIR, file), 'utf8')), file).toMatchObject({
        ok: true,
        summary: { verdict, counts: { blocker: 0, major, minor: 0 }, manualValidation: 0 },
      });
    }
  });

  it.each([
    ['approved', 'Approved'],
    ['  APPROVED  ', 'Approved'],
    ['通过', 'Approved'],
    ['Changes requested', 'Changes Requested'],
    ['需要修改', 'Changes Requested'],
    ['rejected', 'Rejected'],
    ['拒绝', 'Rejected'],
  ])('normalises the verdict %j', (raw, verdict) => {
    expect(parseReviewSummary(en(raw, '0 blockers, 0 majors, 0 minors'))).toMatchObject({ ok: true, summary: { verdict } });
  });

  it('accepts singular forms, no spaces, and the bullet-less and * bullet lines', () => {
    const content = '## Review Summary\n**Overall Verdict**: approved\n* **findings (ai-actionable)**:1 blocker,1 major,1 minor\n';
    expect(parseReviewSummary(content)).toMatchObject({
      ok: true,
      summary: { verdict: 'Approved', counts: { blocker: 1, major: 1, minor: 1 }, manualValidation: null, countState: 'numeric' },
    });
  });

  it.each([
    ['**Manual validation**: 2', 2],
    ['**Manual-validation**: 4', 4],
    ['**manual validation**：5', 5],
    ['**人工校验**: 6', 6],
    ['nothing here', null],
    [`**Manual validation**: ${'9'.repeat(20)}`, null],
  ])('reads the manual-validation count from %j', (suffix, expected) => {
    expect(parseReviewSummary(en('Approved', `0 blockers, 0 majors, 0 minors / ${suffix}`))).toMatchObject({
      ok: true,
      summary: { manualValidation: expected },
    });
  });

  it('only looks for the manual-validation count inside the findings value', () => {
    const content = en('Approved', '0 blockers, 0 majors, 0 minors').replace('- **Reviewer**: codex', '- **Manual validation**: 3');
    expect(parseReviewSummary(content)).toMatchObject({ ok: true, summary: { manualValidation: null } });
  });

  it('is CRLF tolerant and the findings offsets exclude the CR', () => {
    const content = en('Approved', '0 blockers, 0 majors, 0 minors / **Manual validation**: 0').replace(/\n/g, '\r\n');
    const parsed = parseReviewSummary(content);
    expect(parsed).toMatchObject({ ok: true, summary: { verdict: 'Approved', manualValidation: 0 } });
    if (!parsed.ok) return;
    expect(content.slice(parsed.findingsStart, parsed.findingsEnd)).toBe(
      '- **Findings (AI-actionable)**: 0 blockers, 0 majors, 0 minors / **Manual validation**: 0',
    );
  });

  it('recognises English and Chinese placeholder sentences', () => {
    expect(
      parseReviewSummary(
        en('Approved', '{unresolved-blockers} blockers, {unresolved-major} majors, {unresolved-minor} minors / **Manual validation**: 1'),
      ),
    ).toMatchObject({
      ok: true,
      summary: { verdict: 'Approved', counts: null, manualValidation: 1, countState: 'placeholders' },
    });
    expect(parseReviewSummary(zh('通过', '{unresolved-blockers} 阻塞项，{unresolved-major} 主要，{unresolved-minor} 次要'))).toMatchObject({
      ok: true,
      summary: { verdict: 'Approved', counts: null, manualValidation: null, countState: 'placeholders' },
    });
  });

  it('REVIEW_SUMMARY_NOT_FOUND without exactly one summary section', () => {
    expect(parseReviewSummary('# Review\n\n- **Overall Verdict**: Approved\n')).toEqual(NOT_FOUND_SECTION);
    const twice = `${en('Approved', '0 blockers, 0 majors, 0 minors')}\n## 审查摘要\n\n- **总体结论**：通过\n`;
    expect(parseReviewSummary(twice)).toEqual(NOT_FOUND_SECTION);
    expect(parseReviewSummary(en('Approved', '0 blockers, 0 majors, 0 minors').replace('## Review Summary', '### Review Summary'))).toEqual(
      NOT_FOUND_SECTION,
    );
    expect(parseReviewSummary(en('Approved', '0 blockers, 0 majors, 0 minors').replace('## Review Summary', '## review summary'))).toEqual(
      NOT_FOUND_SECTION,
    );
    expect(parseReviewSummary('##\nReview Summary\n- **Overall Verdict**: Approved\n')).toEqual(NOT_FOUND_SECTION);
  });

  it('the section ends at the next H2 (### stays inside)', () => {
    const after =
      '## Review Summary\n\n## Details\n\n- **Overall Verdict**: Approved\n- **Findings (AI-actionable)**: 0 blockers, 0 majors, 0 minors\n';
    expect(parseReviewSummary(after)).toEqual(NOT_FOUND_LINES);
    const nested =
      '## Review Summary\n\n### Verdict\n\n- **Overall Verdict**: Approved\n- **Findings (AI-actionable)**: 0 blockers, 0 majors, 0 minors\n';
    expect(parseReviewSummary(nested)).toMatchObject({ ok: true });
  });

  it.each([
    ['a missing verdict', en('Approved', '0 blockers, 0 majors, 0 minors').replace('- **Overall Verdict**: Approved\n', '')],
    ['an unknown verdict', en('LGTM', '0 blockers, 0 majors, 0 minors')],
    ['an empty verdict', en('', '0 blockers, 0 majors, 0 minors')],
    [
      'a repeated verdict',
      en('Approved', '0 blockers, 0 majors, 0 minors').replace('- **Reviewer**: codex', '- **Overall Verdict**: Approved'),
    ],
    ['an indented verdict', en('Approved', '0 blockers, 0 majors, 0 minors').replace('- **Overall Verdict**', '  - **Overall Verdict**')],
    ['a missing findings line', en('Approved', '0 blockers, 0 majors, 0 minors').replace(/- \*\*Findings.*\n/, '')],
    [
      'a repeated findings line',
      en('Approved', '0 blockers, 0 majors, 0 minors').replace(
        '- **Reviewer**: codex',
        '- **Findings (AI-actionable)**: 0 blockers, 0 majors, 0 minors',
      ),
    ],
    ['an indented findings line', en('Approved', '0 blockers, 0 majors, 0 minors').replace('- **Findings', '   - **Findings')],
  ])('REVIEW_SUMMARY_NOT_FOUND for %s', (_label, content) => {
    expect(parseReviewSummary(content)).toEqual(NOT_FOUND_LINES);
  });

  it.each([
    ['prose', 'none'],
    ['two counts', '0 blockers, 0 majors'],
    ['negative counts', '-1 blockers, 0 majors, 0 minors'],
    ['unsafe integers', `${'9'.repeat(20)} blockers, 0 majors, 0 minors`],
    ['a half-way placeholder', '{unresolved-blockers} blockers, 0 majors, 0 minors'],
    [
      'a placeholder repeated in the suffix',
      '{unresolved-blockers} blockers, {unresolved-major} majors, {unresolved-minor} minors / {unresolved-major}',
    ],
    ['a misspelt placeholder', '{unresolved-blocker} blockers, {unresolved-major} majors, {unresolved-minor} minors'],
    ['a suffix without a slash', '{unresolved-blockers} blockers, {unresolved-major} majors, {unresolved-minor} minors and more'],
    ['mixed languages', '{unresolved-blockers} 阻塞项，{unresolved-major} majors, {unresolved-minor} minors'],
    ['ASCII commas in the Chinese form', '0 阻塞项, 1 主要, 0 次要'],
  ])('REVIEW_SUMMARY_PLACEHOLDER_INVALID for %s', (_label, findings) => {
    expect(parseReviewSummary(en('Approved', findings))).toEqual(PLACEHOLDER_INVALID);
  });
});

describe('finalizeReviewSummaryContent', () => {
  it('58: replaces English placeholders with the ledger counts, keeping the suffix', () => {
    const content = en(
      'Changes Requested',
      '{unresolved-blockers} blockers, {unresolved-major} majors, {unresolved-minor} minors / **Manual validation**: 0',
    );
    const result = finalizeReviewSummaryContent(content, { blocker: 0, major: 1, minor: 0 });
    expect(result).toEqual({
      ok: true,
      changed: true,
      content: en('Changes Requested', '0 blockers, 1 majors, 0 minors / **Manual validation**: 0'),
    });
  });

  it('58: replaces Chinese placeholders, keeping the Chinese form', () => {
    const content = zh('需要修改', '{unresolved-blockers} 阻塞项，{unresolved-major} 主要，{unresolved-minor} 次要 / **人工校验**：0');
    expect(finalizeReviewSummaryContent(content, { blocker: 2, major: 0, minor: 5 })).toEqual({
      ok: true,
      changed: true,
      content: zh('需要修改', '2 阻塞项，0 主要，5 次要 / **人工校验**：0'),
    });
  });

  it('58: keeps CRLF line endings when replacing', () => {
    const content = en('Approved', '{unresolved-blockers} blockers, {unresolved-major} majors, {unresolved-minor} minors').replace(
      /\n/g,
      '\r\n',
    );
    const result = finalizeReviewSummaryContent(content, { blocker: 0, major: 0, minor: 0 });
    expect(result).toEqual({ ok: true, changed: true, content: en('Approved', '0 blockers, 0 majors, 0 minors').replace(/\n/g, '\r\n') });
  });

  it('58: equal numeric counts leave the content unchanged', () => {
    const content = en('Approved', '0 blockers, 1 majors, 0 minors');
    expect(finalizeReviewSummaryContent(content, { blocker: 0, major: 1, minor: 0 })).toEqual({ ok: true, changed: false, content });
  });

  it('58: different numeric counts → REVIEW_SUMMARY_COUNT_MISMATCH and the file bytes stay unchanged', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-finalize-'));
    try {
      const file = path.join(dir, 'review-code.md');
      fs.writeFileSync(file, en('Approved', '1 blockers, 0 majors, 0 minors'));
      const before = fs.readFileSync(file);
      const result = finalizeReviewSummaryContent(fs.readFileSync(file, 'utf8'), { blocker: 0, major: 1, minor: 0 });
      expect(result).toEqual({
        ok: false,
        code: 'REVIEW_SUMMARY_COUNT_MISMATCH',
        message:
          'review summary finding counts do not match the ledger snapshot (summary: 1 blockers, 0 majors, 0 minors; ledger: 0 blockers, 1 majors, 0 minors)',
      });
      if (result.ok) fs.writeFileSync(file, result.content);
      expect(fs.readFileSync(file).equals(before)).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('passes parse failures through', () => {
    expect(finalizeReviewSummaryContent('# nothing', { blocker: 0, major: 0, minor: 0 })).toEqual(NOT_FOUND_SECTION);
  });
});

describe('checkReviewSummaryGate (scenario 57)', () => {
  const ledger = [row('CD-1', 'major', 'open'), row('CD-2', 'minor', 'closed'), row('PL-1', 'blocker', 'open', 'plan')];

  it('57: placeholder summaries fail with REVIEW_FINDING_COUNTS_NOT_FINALIZED (en and zh)', () => {
    const expected = { ok: false, code: 'REVIEW_FINDING_COUNTS_NOT_FINALIZED', message: 'review summary finding counts are not finalized' };
    expect(
      checkReviewSummaryGate(
        en('Approved', '{unresolved-blockers} blockers, {unresolved-major} majors, {unresolved-minor} minors'),
        ledger,
        'code',
      ),
    ).toEqual(expected);
    expect(
      checkReviewSummaryGate(zh('通过', '{unresolved-blockers} 阻塞项，{unresolved-major} 主要，{unresolved-minor} 次要'), ledger, 'code'),
    ).toEqual(expected);
  });

  it('57: numeric counts that differ from the stage ledger fail (en and zh)', () => {
    expect(checkReviewSummaryGate(en('Changes Requested', '0 blockers, 0 majors, 0 minors'), ledger, 'code')).toEqual({
      ok: false,
      code: 'REVIEW_SUMMARY_COUNT_MISMATCH',
      message:
        'review summary finding counts (0 blockers, 0 majors, 0 minors) do not match the unresolved code ledger findings (0 blockers, 1 majors, 0 minors)',
    });
    expect(checkReviewSummaryGate(zh('需要修改', '0 阻塞项，1 主要，1 次要'), ledger, 'code')).toMatchObject({
      ok: false,
      code: 'REVIEW_SUMMARY_COUNT_MISMATCH',
    });
  });

  it('57: counts matching the unresolved stage findings pass (en and zh)', () => {
    expect(checkReviewSummaryGate(en('Changes Requested', '0 blockers, 1 majors, 0 minors'), ledger, 'code')).toEqual({ ok: true });
    expect(checkReviewSummaryGate(zh('需要修改', '0 阻塞项，1 主要，0 次要 / **人工校验**：0'), ledger, 'code')).toEqual({ ok: true });
    expect(checkReviewSummaryGate(zh('需要修改', '1 阻塞项，0 主要，0 次要'), ledger, 'plan')).toEqual({ ok: true });
    expect(checkReviewSummaryGate(en('Approved', '0 blockers, 0 majors, 0 minors'), [], 'analysis')).toEqual({ ok: true });
  });

  it('passes parse failures and ledger errors through', () => {
    expect(checkReviewSummaryGate('# no summary', ledger, 'code')).toEqual(NOT_FOUND_SECTION);
    expect(checkReviewSummaryGate(en('Approved', '0 blockers, 0 majors, 0 minors'), [row('XX-1', 'major', 'open')], 'code')).toEqual({
      ok: false,
      code: 'LEDGER_ID_INVALID',
      message: "ledger id 'XX-1' is invalid",
    });
  });
});

describe('latestReviewVerdict', () => {
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-approved-'));
  });

  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const write = (name: string, content: string) => fs.writeFileSync(path.join(dir, name), content);

  it('is false without a review', () => {
    expect(latestReviewVerdict(dir, 'review-code')).toEqual({ ok: true, approved: false });
  });

  it('follows the highest round only', () => {
    for (const [name, content, approved] of [
      ['review-code.md', en('Approved', '0 blockers, 0 majors, 0 minors'), true],
      ['review-code-r2.md', zh('需要修改', '0 阻塞项，1 主要，0 次要'), false],
      ['review-code-r3.md', zh('通过', '0 阻塞项，0 主要，0 次要'), true],
    ] as const) {
      write(name, content);
      expect(latestReviewVerdict(dir, 'review-code'), name).toEqual({ ok: true, approved });
    }
  });

  it('does not reject non-zero counts (0.9.2 quirk)', () => {
    write('review-plan.md', en('Approved', '1 blockers, 0 majors, 0 minors'));
    expect(latestReviewVerdict(dir, 'review-plan')).toEqual({ ok: true, approved: true });
  });

  it('is false for placeholders, rejections and unparsable summaries', () => {
    for (const content of [
      en('Approved', '{unresolved-blockers} blockers, {unresolved-major} majors, {unresolved-minor} minors'),
      en('Rejected', '0 blockers, 0 majors, 0 minors'),
      '# no summary',
    ]) {
      write('review-plan.md', content);
      expect(latestReviewVerdict(dir, 'review-plan'), content).toEqual({ ok: true, approved: false });
    }
  });

  it('reports a latest round whose file cannot be read, or whose number is out of range (0.9.2 threw)', () => {
    // `-r03` counts as round 3 in the loose scan, whose canonical file review-analysis-r3.md is absent.
    write('review-analysis.md', en('Approved', '0 blockers, 0 majors, 0 minors'));
    write('review-analysis-r03.md', en('Approved', '0 blockers, 0 majors, 0 minors'));
    expect(latestReviewVerdict(dir, 'review-analysis')).toEqual({
      ok: false,
      message: 'latest review-analysis round 3 (review-analysis-r3.md) cannot be read (ENOENT)',
    });
    fs.mkdirSync(path.join(dir, 'review-analysis-r4.md'));
    expect(latestReviewVerdict(dir, 'review-analysis')).toEqual({
      ok: false,
      message: 'latest review-analysis round 4 (review-analysis-r4.md) cannot be read (EISDIR)',
    });
    write('review-analysis-r99999999999999999999.md', en('Approved', '0 blockers, 0 majors, 0 minors'));
    expect(latestReviewVerdict(dir, 'review-analysis')).toEqual({
      ok: false,
      message: 'latest review-analysis round 100000000000000000000 is out of range',
    });
  });

  it('throws when the task directory cannot be read', () => {
    expect(() => latestReviewVerdict(path.join(dir, 'missing'), 'review-code')).toThrow(/ENOENT/);
  });

  it('reads the example task: the round-2 analysis review is approved', () => {
    expect(latestReviewVerdict(EXAMPLE_TASK_DIR, 'review-analysis')).toEqual({ ok: true, approved: true });
    expect(latestReviewVerdict(EXAMPLE_TASK_DIR, 'review-plan')).toEqual({ ok: true, approved: false });
  });
});
