import fs from 'node:fs';
import { describe, expect, it } from 'vitest';

import {
  HUMAN_DECISION_STATUSES,
  LEDGER_HEADINGS,
  LEDGER_STATUSES,
  LEDGER_TERMINAL_STATUSES,
  nextHdId,
  parseLedger,
  summarizeLedgerStage,
  validateLedgerRows,
} from '../../src/core/ledger.ts';
import type { LedgerRow } from '../../src/core/ledger.ts';
import { EXAMPLE_TASK_DIR } from '../support/fixturePaths.ts';

const EXAMPLE_TASK = `${EXAMPLE_TASK_DIR}/task.md`;

const HEADER = '| id | stage | round | severity | status | evidence |\n|----|-------|-------|----------|--------|----------|';

function row(id: string, stage: string, round: string, severity: string, status: string, evidence = `x.md#${id}`): LedgerRow {
  return { id, stage, round, severity, status, evidence };
}

describe('parseLedger', () => {
  it('35: two rows under the Chinese heading with exact fields', () => {
    const content = [
      '# 任务',
      '',
      '## 审查分歧账本',
      '',
      HEADER,
      '| AN-1 | analysis | 1 | major | closed | review-analysis.md#AN-1 |',
      '| HD-1 | plan | - | decision | human-decided | plan.md#HD-1 |',
      '',
    ].join('\n');
    expect(parseLedger(content)).toEqual([
      { id: 'AN-1', stage: 'analysis', round: '1', severity: 'major', status: 'closed', evidence: 'review-analysis.md#AN-1' },
      { id: 'HD-1', stage: 'plan', round: '-', severity: 'decision', status: 'human-decided', evidence: 'plan.md#HD-1' },
    ]);
  });

  it('36: the English heading is located', () => {
    expect(parseLedger(fs.readFileSync(EXAMPLE_TASK, 'utf8'))).toEqual([
      { id: 'AN-1', stage: 'analysis', round: '1', severity: 'major', status: 'confirmed', evidence: 'review-analysis.md#AN-1' },
    ]);
  });

  it('37: no ledger section → []', () => {
    expect(parseLedger('# Task\n\n## Description\n\n| CD-1 | code | 1 | blocker | open | x |\n')).toEqual([]);
    expect(parseLedger('')).toEqual([]);
  });

  it('38: parsing stops at the next H2 and ignores rows with fewer than 6 cells', () => {
    const content = [
      '## Review Disagreement Ledger',
      HEADER,
      '| CD-1 | code | 1 | blocker | open | review-code.md#CD-1 |',
      '| CD-2 | code | 1 | minor | open |',
      'text between rows',
      '| CD-3 | code | 1 | minor | closed | review-code.md#CD-3 |',
      '### Sub-heading does not end the section',
      '| CD-4 | code | 2 | major | accepted | code-r2.md#CD-4 |',
      '## Activity Log',
      '| CD-5 | code | 1 | blocker | open | after the section |',
    ].join('\n');
    expect(parseLedger(content).map((entry) => entry.id)).toEqual(['CD-1', 'CD-3', 'CD-4']);
  });

  it('finds the heading as upstream does (^##\\s+<alias>\\s*$) and uses the first one', () => {
    const body = `${HEADER}\n| CD-1 | code | 1 | blocker | open | e |\n`;
    for (const heading of [
      '##  Review Disagreement Ledger',
      '## Review Disagreement Ledger ',
      '##\tReview Disagreement Ledger\t',
      '##   审查分歧账本  ',
    ]) {
      expect(parseLedger(`${heading}\n${body}`).map((entry) => entry.id)).toEqual(['CD-1']);
    }
    for (const heading of [
      '### Review Disagreement Ledger',
      '##Review Disagreement Ledger',
      ' ## Review Disagreement Ledger',
      '## Review Disagreement Ledger (old)',
    ]) {
      expect(parseLedger(`${heading}\n${body}`)).toEqual([]);
    }
    const twice = `## 审查分歧账本\n| CD-1 | code | 1 | blocker | open | e |\n## Review Disagreement Ledger\n| CD-2 | code | 1 | blocker | open | e |\n`;
    expect(parseLedger(twice).map((entry) => entry.id)).toEqual(['CD-1']);
  });

  it('is CRLF tolerant and trims cells', () => {
    const content = `## Review Disagreement Ledger\r\n${HEADER.replace('\n', '\r\n')}\r\n|CD-1|code|1|blocker|open|  e  |\r\n`;
    expect(parseLedger(content)).toEqual([row('CD-1', 'code', '1', 'blocker', 'open', 'e')]);
  });

  it('skips header and separator rows, including aligned separators', () => {
    const content = `## Review Disagreement Ledger\n| id | stage | round | severity | status | evidence |\n|:---|:-----:|------:|---|---|---|\n| PL-1 | plan | 1 | minor | open | p |\n`;
    expect(parseLedger(content)).toEqual([row('PL-1', 'plan', '1', 'minor', 'open', 'p')]);
  });

  it('exposes the headings and status sets', () => {
    expect(LEDGER_HEADINGS).toEqual(['Review Disagreement Ledger', '审查分歧账本']);
    expect(LEDGER_STATUSES).toEqual([
      'open',
      'accepted',
      'adjusted',
      'refuted',
      'cannot-judge',
      'confirmed',
      'needs-human-decision',
      'closed',
      'human-decided',
    ]);
    expect(LEDGER_TERMINAL_STATUSES).toEqual(['confirmed', 'closed', 'human-decided']);
    expect(HUMAN_DECISION_STATUSES).toEqual(['needs-human-decision', 'human-decided']);
  });
});

describe('nextHdId', () => {
  it('39: HD-1 for none, max + 1 otherwise, ignoring other ids and order', () => {
    const highest = [
      row('HD-1', 'plan', '-', 'decision', 'human-decided'),
      row('HD-2', 'code', '-', 'decision', 'human-decided'),
      row('PL-1', 'plan', '1', 'minor', 'open'),
    ];
    const unordered = [
      row('HD-5', 'code', '-', 'decision', 'human-decided'),
      row('HD-2', 'plan', '-', 'decision', 'human-decided'),
      row('AN-9', 'analysis', '1', 'major', 'open'),
    ];
    const notHd = [row('HD-x', 'plan', '-', 'decision', 'open'), row('XHD-7', 'plan', '-', 'decision', 'open')];
    for (const [rows, next] of [
      [[], 'HD-1'],
      [highest, 'HD-3'],
      [unordered, 'HD-6'],
      [notHd, 'HD-1'],
    ] as const) {
      expect(nextHdId(rows), next).toBe(next);
    }
  });
});

describe('validateLedgerRows', () => {
  it('accepts a valid ledger', () => {
    expect(
      validateLedgerRows([
        row('AN-1', 'analysis', '1', 'major', 'confirmed'),
        row('PL-1', 'plan', '2', 'minor', 'accepted'),
        row('CD-1', 'code', '1', 'blocker', 'open'),
        row('HD-1', 'code', '-', 'decision', 'needs-human-decision'),
        row('PRC-1', 'post-review-commit', '-', '-', 'human-decided', 'HDR-1'),
      ]),
    ).toBeNull();
    expect(validateLedgerRows([])).toBeNull();
  });

  it.each<[string, LedgerRow[], { code: string; message: string }]>([
    [
      'a repeated id',
      [row('CD-1', 'code', '1', 'blocker', 'open'), row('CD-1', 'code', '2', 'minor', 'open')],
      { code: 'LEDGER_DUPLICATE_ID', message: "duplicate ledger id 'CD-1'" },
    ],
    [
      'a PRC row with a wrong stage',
      [row('PRC-1', 'code', '-', '-', 'human-decided')],
      { code: 'LEDGER_DOCUMENT_INVALID', message: "post-review exemption row 'PRC-1' is invalid" },
    ],
    [
      'a PRC row with a round',
      [row('PRC-1', 'post-review-commit', '1', '-', 'human-decided')],
      { code: 'LEDGER_DOCUMENT_INVALID', message: "post-review exemption row 'PRC-1' is invalid" },
    ],
    [
      'a PRC row that is not human-decided',
      [row('PRC-2', 'post-review-commit', '-', '-', 'open')],
      { code: 'LEDGER_DOCUMENT_INVALID', message: "post-review exemption row 'PRC-2' is invalid" },
    ],
    [
      'a PRC row without evidence',
      [row('PRC-1', 'post-review-commit', '-', '-', 'human-decided', '')],
      { code: 'LEDGER_DOCUMENT_INVALID', message: "post-review exemption row 'PRC-1' is invalid" },
    ],
    [
      'a PRC row with multi-line evidence',
      [row('PRC-1', 'post-review-commit', '-', '-', 'human-decided', 'a\nb')],
      { code: 'LEDGER_DOCUMENT_INVALID', message: "post-review exemption row 'PRC-1' is invalid" },
    ],
    [
      'a non-PRC post-review-commit row',
      [row('CD-1', 'post-review-commit', '-', '-', 'human-decided')],
      { code: 'LEDGER_DOCUMENT_INVALID', message: "post-review exemption row 'CD-1' must use a PRC id" },
    ],
    ['an XX id', [row('XX-1', 'code', '1', 'blocker', 'open')], { code: 'LEDGER_ID_INVALID', message: "ledger id 'XX-1' is invalid" }],
    [
      'an id with a leading zero',
      [row('CD-01', 'code', '1', 'blocker', 'open')],
      { code: 'LEDGER_ID_INVALID', message: "ledger id 'CD-01' is invalid" },
    ],
    ['id zero', [row('CD-0', 'code', '1', 'blocker', 'open')], { code: 'LEDGER_ID_INVALID', message: "ledger id 'CD-0' is invalid" }],
    [
      'an unknown stage',
      [row('CD-1', 'review', '1', 'blocker', 'open')],
      { code: 'LEDGER_STAGE_INVALID', message: "ledger stage 'review' is invalid" },
    ],
    [
      'an unknown status',
      [row('CD-1', 'code', '1', 'blocker', 'fixed')],
      { code: 'LEDGER_STATUS_INVALID', message: "ledger status 'fixed' is invalid" },
    ],
    [
      'an AN id in the plan stage',
      [row('AN-1', 'plan', '1', 'minor', 'open')],
      { code: 'LEDGER_STAGE_INVALID', message: "ledger id 'AN-1' conflicts with stage 'plan'" },
    ],
    [
      'a PL id in the code stage',
      [row('PL-1', 'code', '1', 'minor', 'open')],
      { code: 'LEDGER_STAGE_INVALID', message: "ledger id 'PL-1' conflicts with stage 'code'" },
    ],
    [
      'a CD id in the analysis stage',
      [row('CD-1', 'analysis', '1', 'minor', 'open')],
      { code: 'LEDGER_STAGE_INVALID', message: "ledger id 'CD-1' conflicts with stage 'analysis'" },
    ],
    [
      'an HD row with a round',
      [row('HD-1', 'plan', '1', 'decision', 'needs-human-decision')],
      { code: 'LEDGER_DOCUMENT_INVALID', message: "decision row 'HD-1' is invalid" },
    ],
    [
      'an HD row with a severity',
      [row('HD-1', 'plan', '-', 'major', 'needs-human-decision')],
      { code: 'LEDGER_DOCUMENT_INVALID', message: "decision row 'HD-1' is invalid" },
    ],
    [
      'an HD row with a finding status',
      [row('HD-1', 'plan', '-', 'decision', 'open')],
      { code: 'LEDGER_DOCUMENT_INVALID', message: "decision row 'HD-1' is invalid" },
    ],
    [
      'a finding with round -',
      [row('CD-1', 'code', '-', 'blocker', 'open')],
      { code: 'LEDGER_DOCUMENT_INVALID', message: "finding row 'CD-1' is invalid" },
    ],
    [
      'a finding with round 0',
      [row('CD-1', 'code', '0', 'blocker', 'open')],
      { code: 'LEDGER_DOCUMENT_INVALID', message: "finding row 'CD-1' is invalid" },
    ],
    [
      'a finding with severity decision',
      [row('CD-1', 'code', '1', 'decision', 'open')],
      { code: 'LEDGER_DOCUMENT_INVALID', message: "finding row 'CD-1' is invalid" },
    ],
  ])('40: %s', (_label, rows, error) => {
    expect(validateLedgerRows(rows)).toEqual(error);
  });

  it('reports the first problem in row order', () => {
    expect(validateLedgerRows([row('CD-1', 'code', '1', 'blocker', 'fixed'), row('XX-1', 'code', '1', 'blocker', 'open')])).toEqual({
      code: 'LEDGER_STATUS_INVALID',
      message: "ledger status 'fixed' is invalid",
    });
    // Within one row, the id is checked before the stage and the stage before the status.
    expect(validateLedgerRows([row('XX-1', 'nowhere', '1', 'blocker', 'fixed')])?.code).toBe('LEDGER_ID_INVALID');
    expect(validateLedgerRows([row('CD-1', 'nowhere', '1', 'blocker', 'fixed')])?.code).toBe('LEDGER_STAGE_INVALID');
  });
});

describe('summarizeLedgerStage', () => {
  const open = [row('CD-1', 'code', '1', 'blocker', 'open'), row('PL-1', 'plan', '1', 'major', 'open')];
  const confirmed = [row('CD-1', 'code', '1', 'blocker', 'confirmed')];
  const decision = [row('HD-1', 'code', '-', 'decision', 'needs-human-decision'), row('CD-2', 'code', '2', 'minor', 'closed')];
  const counts = (blocker: number, major: number, minor: number) => ({ blocker, major, minor });
  for (const { name, rows, expected, unresolved, terminal } of [
    {
      name: '40: CD-1 open blocks code and is counted as unresolved',
      rows: open,
      expected: { canAdvance: false, findingCounts: counts(1, 0, 0), unresolvedFindingCounts: counts(1, 0, 0), pendingHumanDecisions: 0 },
      unresolved: [open[0]],
      terminal: [],
    },
    {
      name: '40: CD-1 confirmed lets code advance',
      rows: confirmed,
      expected: { canAdvance: true, findingCounts: counts(1, 0, 0), unresolvedFindingCounts: counts(0, 0, 0), pendingHumanDecisions: 0 },
      unresolved: [],
      terminal: confirmed,
    },
    {
      name: '40: an HD row needing a decision blocks without counting as a finding',
      rows: decision,
      expected: { canAdvance: false, findingCounts: counts(0, 0, 1), unresolvedFindingCounts: counts(0, 0, 0), pendingHumanDecisions: 1 },
      unresolved: [decision[0]],
      terminal: [decision[1]],
    },
  ]) {
    it(name, () => {
      expect(summarizeLedgerStage(rows, 'code')).toEqual({ stage: 'code', ...expected, unresolved, terminal });
    });
  }

  it('counts every non-terminal status as unresolved', () => {
    const statuses = ['open', 'accepted', 'adjusted', 'refuted', 'cannot-judge'];
    const rows = statuses.map((status, index) => row(`PL-${index + 1}`, 'plan', '2', index % 2 ? 'major' : 'minor', status));
    const summary = summarizeLedgerStage(rows, 'plan');
    expect(summary.canAdvance).toBe(false);
    expect(summary.unresolvedFindingCounts).toEqual({ blocker: 0, major: 2, minor: 3 });
    expect(summarizeLedgerStage(rows, 'analysis').canAdvance).toBe(true);
  });
});
