import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTaskCommand } from '../../src/cli/taskArgs.ts';
import { lifecycleEventSchema } from '../../src/core/events.ts';
import { FrontmatterError, parseTaskFrontmatter, parseTypedTaskFrontmatter } from '../../src/core/frontmatter.ts';
import {
  FINDING_SEVERITIES,
  LEDGER_STAGES,
  LEDGER_STATUSES,
  parseLedger,
  summarizeLedgerStage,
  validateLedgerRows,
} from '../../src/core/ledger.ts';
import { parseReviewSummary } from '../../src/core/reviewSummary.ts';
import { TASK_ID_PATTERN, resolveTaskRef } from '../../src/core/taskRef.ts';
import { changedPaths, documentText, expectNoCrash, params, snapshotTree, FUZZ_TIMEOUT } from './support.ts';
import { EXAMPLE_TASK_DIR } from '../support/fixturePaths.ts';

// Bad input gets a clear error (docs/architecture.md "Reliability"): CLI flags, task references,
// frontmatter, review summaries and ledgers, fuzzed around valid documents and with arbitrary text.
// "Clear error" means: a usage-error / failure result with a message, or (for the parsers that
// throw by contract) a FrontmatterError; never any other exception.

const EXAMPLE = EXAMPLE_TASK_DIR;
const read = (name: string) => fs.readFileSync(path.join(EXAMPLE, name), 'utf8');

describe('baton task flags (parseTaskCommand)', () => {
  const INTENTS = [
    'begin-or-resume',
    'route',
    'status',
    'prepare',
    'hook-start',
    'hook-stop',
    'stage-completed',
    'complete-stage',
    'validate-stage',
    'advance',
    'pause',
    'abort',
    'dance',
    '',
  ];
  const FLAGS = [
    '--max-steps',
    '--client',
    '--requested-model',
    '--native-agent',
    '--child-id',
    '--parent-id',
    '--spawn-mode',
    '--actual-model',
    '--fallback-reason',
    '--exit-code',
    '--agent',
    '--code',
    '--message',
    '--recoverable',
    '--stage',
    '--round',
    '--artifact',
    '--role',
    '--reason',
    '--repo',
    '--redis',
    '--timeout',
    '--worker',
    '--idempotency-key',
    '--after-fingerprint',
    '--changed-paths',
    '--help',
    '-h',
    '--',
    '--colour',
  ];
  const VALUES = [
    'claude-code',
    'codex',
    'gemini',
    'true',
    'false',
    '0',
    '1',
    '-1',
    '07',
    '1e3',
    '9007199254740993',
    'analysis',
    'review-code',
    'commit',
    'executor',
    'reviewer',
    'inline',
    'queue',
    'analysis.md',
    '',
    ' ',
    '--',
    'auto',
    '#01',
    '../../etc/passwd',
    'TASK-20260101-000001',
  ];
  const token = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...FLAGS) },
    { weight: 4, arbitrary: fc.constantFrom(...VALUES) },
    { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
  );
  const argv = fc
    .tuple(
      fc.oneof(fc.constantFrom('01', 'auto', '#7', 'TASK-20260101-000001', '--help', ''), fc.string({ maxLength: 8 })),
      fc.constantFrom(...INTENTS),
      fc.array(token, { maxLength: 14 }),
    )
    .map(([ref, intent, rest]) => [ref, intent, ...rest]);

  it(
    'is always help, a usage error with a message, or an event the engine accepts',
    () => {
      fc.assert(
        fc.property(fc.oneof(argv, fc.array(fc.string({ maxLength: 10 }), { maxLength: 6 })), (args) => {
          const parsed = parseTaskCommand(args);
          if (parsed.kind === 'usage-error') expect(parsed.message.length).toBeGreaterThan(0);
          else if (parsed.kind === 'ok') {
            expect(lifecycleEventSchema.safeParse(parsed.event).success).toBe(true);
            if (parsed.options.timeoutMs !== undefined)
              expect(Number.isSafeInteger(parsed.options.timeoutMs) && parsed.options.timeoutMs > 0).toBe(true);
            // A caller-supplied fingerprint or path list is never accepted (reviewer write gate).
            expect(args).not.toContain('--after-fingerprint');
            expect(args).not.toContain('--changed-paths');
          } else expect(parsed.kind).toBe('help');
        }),
        params(4000),
      );
    },
    FUZZ_TIMEOUT,
  );
});

describe('task references (resolveTaskRef)', () => {
  let repo: string;
  let outside: string;
  beforeAll(() => {
    repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-fuzz-ref-')));
    outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-fuzz-outside-')));
    fs.mkdirSync(path.join(repo, '.git'));
    const active = path.join(repo, '.agents', 'workspace', 'active');
    for (const id of ['TASK-20260101-000001', 'TASK-20260101-000002']) {
      fs.mkdirSync(path.join(active, id), { recursive: true });
      fs.writeFileSync(path.join(active, id, 'task.md'), `---\nid: ${id}\n---\n`);
    }
    fs.mkdirSync(path.join(repo, '.agents', 'workspace', 'archive', '2026', '01', '02', 'TASK-20251231-000009'), { recursive: true });
    fs.writeFileSync(
      path.join(repo, '.agents', 'workspace', 'archive', '2026', '01', '02', 'TASK-20251231-000009', 'task.md'),
      '---\nid: x\n---\n',
    );
    // A planted link to a task outside the workspace must never resolve.
    fs.mkdirSync(path.join(outside, 'TASK-20260303-000003'));
    fs.writeFileSync(path.join(outside, 'TASK-20260303-000003', 'task.md'), '---\nid: x\n---\n');
    fs.symlinkSync(path.join(outside, 'TASK-20260303-000003'), path.join(active, 'TASK-20260303-000003'));
    fs.writeFileSync(
      path.join(active, '.short-ids.json'),
      JSON.stringify({
        version: 1,
        ids: { '01': 'TASK-20260101-000001', '02': 'TASK-20260101-000002', '03': 'TASK-20260303-000003', '04': 'TASK-20991231-000004' },
      }),
    );
  });
  afterAll(() => {
    fs.rmSync(repo, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  const ref = fc.oneof(
    fc.constantFrom(
      '1',
      '01',
      '#01',
      '#1',
      '2',
      '3',
      '03',
      '4',
      '0',
      '#0',
      '00',
      '999',
      '#',
      '',
      ' 01',
      '01 ',
      '+1',
      '-1',
      '1.0',
      '0x1',
      '١',
      'auto',
      'TASK-20260101-000001',
      'TASK-20260303-000003',
      'TASK-20251231-000009',
      'TASK-20260101-000001/../TASK-20260101-000002',
      '../TASK-20260101-000001',
      '../../../etc/passwd',
      '/etc/passwd',
      'TASK-20260101-000001\0',
      'TASK-20260101-000001\n',
      '.short-ids.json',
      '__proto__',
      'constructor',
      '9'.repeat(40),
    ),
    fc.string({ maxLength: 30 }),
    fc.stringMatching(/^#?\d{1,20}$/),
    fc.stringMatching(/^TASK-\d{8}-\d{6}$/),
  );

  it(
    'is a task inside the workspace or a failure with a code and message; it never writes',
    () => {
      const before = snapshotTree(repo);
      const workspace = fs.realpathSync(path.join(repo, '.agents', 'workspace'));
      fc.assert(
        fc.property(ref, (text) => {
          const resolved = resolveTaskRef(text, { repoRoot: repo });
          if (!resolved.ok) {
            expect(resolved.code).toMatch(/^[A-Z_]+$/);
            expect(resolved.message.length).toBeGreaterThan(0);
            return;
          }
          expect(TASK_ID_PATTERN.test(resolved.taskId)).toBe(true);
          const real = fs.realpathSync(resolved.taskDir);
          expect(real.startsWith(`${workspace}${path.sep}`), `${text} → ${real}`).toBe(true);
          expect(fs.statSync(resolved.taskMdPath).isFile()).toBe(true);
        }),
        params(3000),
      );
      expect(changedPaths(before, snapshotTree(repo))).toEqual([]);
    },
    FUZZ_TIMEOUT,
  );
});

describe('documents', () => {
  const taskMd = read('task.md');
  const reviews = [read('review-analysis.md'), read('review-analysis-r2.md')];
  const frontmatterSeeds = [
    taskMd,
    '---\nid: TASK-20260101-000001\ncurrent_step: x\n---\n',
    '---\r\nid: 1\r\nflag: true\r\n---\r\n',
    '---\nkey: [1, 2]\n---\n',
  ];
  const ledgerRow = fc
    .record({
      id: fc.oneof(fc.stringMatching(/^(AN|PL|CD|HD|PRC)-\d{1,3}$/), fc.string({ maxLength: 6 })),
      stage: fc.oneof(fc.constantFrom(...LEDGER_STAGES), fc.string({ maxLength: 8 })),
      round: fc.oneof(fc.integer({ min: -1, max: 12 }).map(String), fc.string({ maxLength: 3 })),
      severity: fc.oneof(fc.constantFrom(...FINDING_SEVERITIES, '-'), fc.string({ maxLength: 6 })),
      status: fc.oneof(fc.constantFrom(...LEDGER_STATUSES), fc.string({ maxLength: 10 })),
      evidence: fc.string({ maxLength: 20 }),
    })
    .map((row) => `| ${row.id} | ${row.stage} | ${row.round} | ${row.severity} | ${row.status} | ${row.evidence} |`);
  const ledgerDocument = fc
    .tuple(fc.constantFrom('Review Disagreement Ledger', '审查分歧账本', 'Other'), fc.array(ledgerRow, { maxLength: 8 }))
    .map(
      ([heading, rows]) =>
        `# Task\n\n## ${heading}\n\n| id | stage | round | severity | status | evidence |\n|----|----|----|----|----|----|\n${rows.join('\n')}\n\n## Activity Log\n`,
    );

  it(
    'frontmatter: a typed record, or a FrontmatterError with a message; the lenient parser never throws',
    () => {
      fc.assert(
        fc.property(documentText(frontmatterSeeds), (text) => {
          const typed = expectNoCrash(() => parseTypedTaskFrontmatter(text), [FrontmatterError]);
          if (!(typed instanceof Error)) {
            for (const value of Object.values(typed))
              expect(value === null || ['string', 'number', 'boolean'].includes(typeof value)).toBe(true);
          } else expect((typed as FrontmatterError).code).toBe('TASK_DOCUMENT_INVALID');
          expect(typeof parseTaskFrontmatter(text)).toBe('object');
        }),
        params(3000),
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'review summaries: parsed counts or a failure code, never an exception',
    () => {
      fc.assert(
        fc.property(documentText(reviews), (text) => {
          const parsed = parseReviewSummary(text);
          if (parsed.ok) {
            const { counts, manualValidation, countState } = parsed.summary;
            expect(['Approved', 'Changes Requested', 'Rejected']).toContain(parsed.summary.verdict);
            if (countState === 'numeric') {
              for (const count of [counts!.blocker, counts!.major, counts!.minor])
                expect(Number.isSafeInteger(count) && count >= 0).toBe(true);
            } else expect(counts).toBeNull();
            if (manualValidation !== null) expect(Number.isSafeInteger(manualValidation) && manualValidation >= 0).toBe(true);
          } else {
            expect(parsed.code).toMatch(/^[A-Z_]+$/);
            expect(parsed.message.length).toBeGreaterThan(0);
          }
        }),
        params(3000),
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'ledgers: rows, a first error or null, and a stage summary, never an exception',
    () => {
      fc.assert(
        fc.property(fc.oneof(ledgerDocument, documentText([taskMd])), (text) => {
          const rows = parseLedger(text);
          const error = validateLedgerRows(rows);
          if (error) {
            expect(error.code).toMatch(/^[A-Z_]+$/);
            expect(error.message.length).toBeGreaterThan(0);
          }
          for (const stage of ['analysis', 'plan', 'code'] as const) {
            const summary = summarizeLedgerStage(rows, stage);
            expect(typeof summary.canAdvance).toBe('boolean');
          }
        }),
        params(3000),
      );
    },
    FUZZ_TIMEOUT,
  );
});

describe('frontmatter writes (regression)', () => {
  it('values of line breaks or Unicode spaces only round-trip (they used to be refused as not single-line)', async () => {
    const { updateTaskFrontmatter } = await import('../../src/core/frontmatter.ts');
    for (const value of ['\n', '\n\n', '\r\n', ' \n', '|', '>', '|+', '\u00a0', '\u3000', 'a\u2000', '\ufeff', ' ']) {
      const updated = updateTaskFrontmatter('---\nid: x\n---\nbody\n', { value });
      expect(parseTypedTaskFrontmatter(updated).value, JSON.stringify(value)).toBe(value);
      expect(updated.endsWith('\n---\nbody\n')).toBe(true);
    }
  });
});
