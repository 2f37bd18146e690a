import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import {
  ARTIFACT_FAMILIES,
  artifactName,
  hasReviewAfterArtifact,
  inspectArtifactDirectory,
  looseArtifactName,
  looseHighestRound,
  parseArtifactName,
  resolveReviewedInput,
} from '../../src/core/artifacts.ts';
import { EXAMPLE_TASK_DIR } from '../support/fixturePaths.ts';

let dir: string;

/** Write `name` with `content` and pin its mtime to `seconds` after the epoch of this test. */
function write(name: string, content = `# ${name}\n`, seconds = 1_000): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  fs.utimesSync(file, seconds, seconds);
  return file;
}

function review(inputLine: string): string {
  return `# Review\n\n${inputLine}\n\n## Review Summary\n\n- **Overall Verdict**: Approved\n- **Findings (AI-actionable)**: 0 blockers, 0 majors, 0 minors / **Manual validation**: 0\n`;
}

/** Copy of the example task (the shared examples are read-only, which would block cleanup). */
function copyExampleTask(target: string): void {
  fs.cpSync(EXAMPLE_TASK_DIR, target, { recursive: true });
  fs.chmodSync(target, 0o755);
  for (const name of fs.readdirSync(target)) fs.chmodSync(path.join(target, name), 0o644);
}

function snapshot(root: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const name of fs.readdirSync(root).sort()) {
    const full = path.join(root, name);
    const stat = fs.lstatSync(full);
    result[name] = stat.isFile()
      ? `file ${stat.size} ${stat.mtimeMs} ${crypto.createHash('sha256').update(fs.readFileSync(full)).digest('hex')}`
      : `${stat.isSymbolicLink() ? `link ${fs.readlinkSync(full)}` : 'other'} ${stat.mtimeMs}`;
  }
  result['.'] = `dir ${fs.statSync(root).mtimeMs}`;
  return result;
}

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-artifacts-'));
});

afterEach(() => {
  vi.restoreAllMocks();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('names', () => {
  it('41: the catalog families are exactly the nine lifecycle families', () => {
    expect(ARTIFACT_FAMILIES).toEqual([
      'analysis',
      'review-analysis',
      'plan',
      'review-plan',
      'code',
      'review-code',
      'manual-validation',
      'validation-run',
      'pr-review',
    ]);
  });

  it('42: names round-trip for rounds 1, 2 and 3 of every family', () => {
    for (const family of ARTIFACT_FAMILIES) {
      expect(artifactName(family, 1)).toBe(`${family}.md`);
      expect(artifactName(family, 2)).toBe(`${family}-r2.md`);
      expect(artifactName(family, 3)).toBe(`${family}-r3.md`);
      for (const round of [1, 2, 3]) {
        const name = artifactName(family, round);
        expect(parseArtifactName(name)).toEqual({ family, round, name });
      }
    }
  });

  it('42: -r1 is not canonical', () => {
    expect(parseArtifactName('plan-r1.md')).toBeNull();
    expect(parseArtifactName('review-code-r1.md')).toBeNull();
  });

  it('42: round 0, MAX_SAFE_INTEGER + 1 and other non-rounds throw "safe positive integer"', () => {
    for (const round of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 1]) {
      expect(() => artifactName('plan', round)).toThrow(/safe positive integer/);
    }
    expect(artifactName('plan', Number.MAX_SAFE_INTEGER)).toBe(`plan-r${Number.MAX_SAFE_INTEGER}.md`);
  });

  it('artifactName throws for an unknown family', () => {
    expect(() => artifactName('design', 1)).toThrow("unknown artifact family 'design'");
  });

  it.each([
    'plan-r02.md',
    'plan-r0.md',
    'Plan.md',
    'plan.MD',
    'plan.md.bak',
    'plan-r2.md ',
    'plan-rx.md',
    'plan-r.md',
    'plans.md',
    'dir/plan.md',
    '../plan.md',
    './plan.md',
    'a\\plan.md',
    'plan.md\0',
    `plan-r${Number.MAX_SAFE_INTEGER + 2}.md`,
    'review.md',
    '',
  ])('parseArtifactName(%j) is null', (name) => {
    expect(parseArtifactName(name)).toBeNull();
  });

  it('parseArtifactName attributes each name to its own family', () => {
    expect(parseArtifactName('review-plan-r2.md')).toEqual({ family: 'review-plan', round: 2, name: 'review-plan-r2.md' });
    expect(parseArtifactName('code-r12.md')).toEqual({ family: 'code', round: 12, name: 'code-r12.md' });
    expect(parseArtifactName('pr-review.md')).toEqual({ family: 'pr-review', round: 1, name: 'pr-review.md' });
  });

  it('looseArtifactName applies the naming rule without validation', () => {
    expect(looseArtifactName('anything', 1)).toBe('anything.md');
    expect(looseArtifactName('review-code', 4)).toBe('review-code-r4.md');
  });
});

describe('looseHighestRound', () => {
  it('is 0 without matching files', () => {
    write('analysisx.md');
    expect(looseHighestRound(dir, 'analysis')).toBe(0);
  });

  it('counts plain as 1, -r1 and -r01 as 1, and takes the maximum', () => {
    write('analysis-r1.md');
    expect(looseHighestRound(dir, 'analysis')).toBe(1);
    write('analysis-r01.md');
    write('analysis.md');
    expect(looseHighestRound(dir, 'analysis')).toBe(1);
    write('analysis-r3.md');
    write('analysis-r2.md');
    write('review-analysis-r9.md');
    write('analysis-rx.md');
    expect(looseHighestRound(dir, 'analysis')).toBe(3);
    expect(looseHighestRound(dir, 'review-analysis')).toBe(9);
  });

  it('throws when the directory cannot be read', () => {
    expect(() => looseHighestRound(path.join(dir, 'missing'), 'analysis')).toThrow(/ENOENT/);
  });
});

describe('inspectArtifactDirectory', () => {
  it('returns the full inventory shape', () => {
    const analysis = write('analysis.md', 'one\n', 1_000);
    const analysis2 = write('analysis-r2.md', 'two!\n', 2_000);
    write('review-analysis.md');
    expect(inspectArtifactDirectory(dir, 'analysis', { requestRef: '#01', taskId: 'TASK-20260101-000001', taskState: 'active' })).toEqual({
      status: 'ready',
      changed: false,
      requestRef: '#01',
      taskId: 'TASK-20260101-000001',
      taskDir: dir,
      taskState: 'active',
      family: 'analysis',
      artifacts: [
        { family: 'analysis', round: 1, name: 'analysis.md', path: analysis, size: 4, mtimeMs: 1_000_000 },
        { family: 'analysis', round: 2, name: 'analysis-r2.md', path: analysis2, size: 5, mtimeMs: 2_000_000 },
      ],
      latest: { family: 'analysis', round: 2, name: 'analysis-r2.md', path: analysis2, size: 5, mtimeMs: 2_000_000 },
      next: { round: 3, name: 'analysis-r3.md' },
      reviewedInput: null,
      diagnostics: [],
      error: null,
    });
  });

  it('defaults requestRef to the directory and identity fields to null', () => {
    expect(inspectArtifactDirectory(dir, 'plan')).toEqual({
      status: 'ready',
      changed: false,
      requestRef: dir,
      taskId: null,
      taskDir: dir,
      taskState: null,
      family: 'plan',
      artifacts: [],
      latest: null,
      next: { round: 1, name: 'plan.md' },
      reviewedInput: null,
      diagnostics: [],
      error: null,
    });
  });

  it('43: plan rounds [1,2,3] next plan-r4; review-plan next review-plan-r3', () => {
    write('plan.md', 'p1', 1_000);
    write('plan-r2.md', 'p2', 1_100);
    write('plan-r3.md', 'p3', 1_200);
    write('review-plan.md', review('- **Review Input**: `plan.md`'), 1_050);
    write('review-plan-r2.md', review('- **Review Input**: `plan-r2.md`'), 1_150);
    const plan = inspectArtifactDirectory(dir, 'plan');
    expect(plan.artifacts.map((artifact) => artifact.round)).toEqual([1, 2, 3]);
    expect(plan.next).toEqual({ round: 4, name: 'plan-r4.md' });
    expect(plan.diagnostics).toEqual([]);
    const reviews = inspectArtifactDirectory(dir, 'review-plan');
    expect(reviews.artifacts.map((artifact) => artifact.name)).toEqual(['review-plan.md', 'review-plan-r2.md']);
    expect(reviews.next).toEqual({ round: 3, name: 'review-plan-r3.md' });
    expect(reviews.reviewedInput?.name).toBe('plan-r2.md');
  });

  it('44: inventory leaves bytes, mtimes and directory entries untouched', () => {
    write('plan.md', 'p1', 1_000);
    write('plan-r2.md', 'p2', 1_100);
    write('plan-r1.md', 'noncanonical', 1_100);
    write('review-plan.md', review('- **Review Input**: `plan-r2.md`'), 1_200);
    fs.symlinkSync(path.join(dir, 'plan.md'), path.join(dir, 'plan-r3.md'));
    fs.mkdirSync(path.join(dir, 'plan-r4.md'));
    fs.utimesSync(dir, 5_000, 5_000);
    const before = snapshot(dir);
    for (const family of [...ARTIFACT_FAMILIES, 'unknown']) inspectArtifactDirectory(dir, family);
    hasReviewAfterArtifact(dir, 'plan', 'review-plan');
    expect(snapshot(dir)).toEqual(before);
  });

  it('44: inventory of the example task changes nothing', () => {
    const copy = path.join(dir, 'task');
    copyExampleTask(copy);
    const before = snapshot(copy);
    inspectArtifactDirectory(copy, 'analysis');
    inspectArtifactDirectory(copy, 'review-analysis');
    expect(snapshot(copy)).toEqual(before);
  });

  it('46: an unknown family fails with ARTIFACT_FAMILY_UNKNOWN', () => {
    expect(inspectArtifactDirectory(dir, 'design', { taskId: 'TASK-20260101-000001' })).toEqual({
      status: 'failed',
      changed: false,
      requestRef: dir,
      taskId: 'TASK-20260101-000001',
      taskDir: dir,
      taskState: null,
      family: 'design',
      artifacts: [],
      latest: null,
      next: null,
      reviewedInput: null,
      diagnostics: [],
      error: { code: 'ARTIFACT_FAMILY_UNKNOWN', message: "unknown artifact family 'design'" },
    });
  });

  it('an unreadable directory fails with ARTIFACT_DIRECTORY_READ_FAILED', () => {
    const missing = path.join(dir, 'missing');
    const inventory = inspectArtifactDirectory(missing, 'plan');
    expect(inventory).toMatchObject({ status: 'failed', changed: false, taskDir: missing, family: 'plan', next: null, artifacts: [] });
    expect(inventory.error?.code).toBe('ARTIFACT_DIRECTORY_READ_FAILED');
    expect(inventory.error?.message).toMatch(/ENOENT/);
  });

  it('NONCANONICAL_NAME for reserved-looking names, which are excluded', () => {
    write('analysis.md');
    for (const name of ['analysis-r1.md', 'Analysis.md', 'analysis-r02.md', 'ANALYSIS-R3.md', 'analysis-review.md']) write(name);
    write('unrelated.md');
    write('review-analysis.md', 'no marker');
    const inventory = inspectArtifactDirectory(dir, 'analysis');
    expect(inventory.artifacts.map((artifact) => artifact.name)).toEqual(['analysis.md']);
    const diagnostics = [...inventory.diagnostics].sort((left, right) => (left.name ?? '').localeCompare(right.name ?? ''));
    expect(diagnostics).toEqual(
      ['ANALYSIS-R3.md', 'Analysis.md', 'analysis-r02.md', 'analysis-r1.md', 'analysis-review.md']
        .sort((left, right) => left.localeCompare(right))
        .map((name) => ({
          code: 'NONCANONICAL_NAME',
          name,
          message: `noncanonical analysis artifact candidate '${name}' (verify whether this is an unrelated file with a reserved prefix)`,
        })),
    );
  });

  it('ROUND_OUT_OF_RANGE for digit rounds beyond MAX_SAFE_INTEGER', () => {
    write('code.md');
    write('code-r99999999999999999999.md');
    expect(inspectArtifactDirectory(dir, 'code').diagnostics).toEqual([
      {
        code: 'ROUND_OUT_OF_RANGE',
        name: 'code-r99999999999999999999.md',
        message:
          "noncanonical code artifact candidate 'code-r99999999999999999999.md' (verify whether this is an unrelated file with a reserved prefix)",
      },
    ]);
  });

  it('SYMBOLIC_LINK and NON_REGULAR_FILE entries are excluded', () => {
    write('code.md');
    fs.symlinkSync(path.join(dir, 'code.md'), path.join(dir, 'code-r2.md'));
    fs.mkdirSync(path.join(dir, 'code-r3.md'));
    const inventory = inspectArtifactDirectory(dir, 'code');
    expect(inventory.artifacts.map((artifact) => artifact.name)).toEqual(['code.md']);
    expect(inventory.latest?.name).toBe('code.md');
    expect(inventory.next).toEqual({ round: 2, name: 'code-r2.md' });
    expect(inventory.diagnostics).toEqual(
      expect.arrayContaining([
        { code: 'SYMBOLIC_LINK', name: 'code-r2.md', message: 'symbolic links are not workflow artifacts: code-r2.md' },
        { code: 'NON_REGULAR_FILE', name: 'code-r3.md', message: 'artifact is not a regular file: code-r3.md' },
      ]),
    );
    expect(inventory.diagnostics).toHaveLength(2);
  });

  it('FILESYSTEM_RACE when an entry vanishes between readdir and lstat', () => {
    write('code.md');
    write('code-r2.md');
    const realLstat = fs.lstatSync;
    vi.spyOn(fs, 'lstatSync').mockImplementation(((file: fs.PathLike, options?: fs.StatSyncOptions) => {
      if (String(file).endsWith('code-r2.md')) throw new Error('ENOENT: vanished');
      return realLstat(file, options);
    }) as typeof fs.lstatSync);
    const inventory = inspectArtifactDirectory(dir, 'code');
    expect(inventory.artifacts.map((artifact) => artifact.name)).toEqual(['code.md']);
    expect(inventory.diagnostics).toEqual([{ code: 'FILESYSTEM_RACE', name: 'code-r2.md', message: 'Error: ENOENT: vanished' }]);
  });

  it('FILESYSTEM_RACE when an artifact is not readable', () => {
    write('code.md');
    vi.spyOn(fs, 'accessSync').mockImplementation(() => {
      throw new Error('EACCES');
    });
    const inventory = inspectArtifactDirectory(dir, 'code');
    expect(inventory.artifacts).toEqual([]);
    expect(inventory.diagnostics).toEqual([{ code: 'FILESYSTEM_RACE', name: 'code.md', message: 'artifact is not readable: code.md' }]);
  });

  it('MISSING_BASE and one ROUND_GAP per missing round', () => {
    write('plan-r3.md');
    write('plan-r5.md');
    const inventory = inspectArtifactDirectory(dir, 'plan');
    expect(inventory.status).toBe('ready');
    expect(inventory.latest?.name).toBe('plan-r5.md');
    expect(inventory.next).toEqual({ round: 6, name: 'plan-r6.md' });
    expect(inventory.diagnostics).toEqual([
      { code: 'MISSING_BASE', message: 'plan.md is missing' },
      { code: 'ROUND_GAP', message: 'plan.md is missing' },
      { code: 'ROUND_GAP', message: 'plan-r2.md is missing' },
      { code: 'ROUND_GAP', message: 'plan-r4.md is missing' },
    ]);
  });

  it('reports a huge gap as one ROUND_GAP and the last safe round has no next', () => {
    write('plan.md');
    write(`plan-r${Number.MAX_SAFE_INTEGER}.md`);
    const inventory = inspectArtifactDirectory(dir, 'plan');
    expect(inventory.latest?.round).toBe(Number.MAX_SAFE_INTEGER);
    expect(inventory.next).toBeNull();
    expect(inventory.diagnostics).toEqual([
      {
        code: 'ROUND_GAP',
        message: `plan-r2.md through plan-r${Number.MAX_SAFE_INTEGER - 1}.md are missing (${Number.MAX_SAFE_INTEGER - 2} rounds)`,
      },
      {
        code: 'ROUND_OUT_OF_RANGE',
        name: `plan-r${Number.MAX_SAFE_INTEGER}.md`,
        message: `no round after plan-r${Number.MAX_SAFE_INTEGER}.md can be named`,
      },
    ]);
  });

  it('results are frozen', () => {
    write('plan.md');
    const inventory = inspectArtifactDirectory(dir, 'plan');
    expect(Object.isFrozen(inventory)).toBe(true);
    expect(Object.isFrozen(inventory.artifacts)).toBe(true);
    expect(Object.isFrozen(inventory.artifacts[0])).toBe(true);
  });
});

describe('reviewed input (§3.3)', () => {
  it('47: review-plan.md naming plan-r2.md in Chinese resolves it', () => {
    write('plan.md', 'p1', 1_000);
    const plan2 = write('plan-r2.md', 'p2', 1_100);
    write('review-plan.md', review('- **审查输入**：`plan-r2.md`'), 1_200);
    expect(inspectArtifactDirectory(dir, 'review-plan').reviewedInput).toEqual({
      family: 'plan',
      round: 2,
      name: 'plan-r2.md',
      path: plan2,
      size: 2,
      mtimeMs: 1_100_000,
    });
  });

  it.each([
    ['English, inline', '- **Review Input**: `analysis-r2.md`', 'analysis-r2.md'],
    ['Chinese, full-width colon', '- **审查输入**：`analysis.md`', 'analysis.md'],
    ['Chinese, ASCII colon', '- **审查输入**: `analysis.md`', 'analysis.md'],
    ['English, full-width colon', '- **Review Input**：`analysis.md`', 'analysis.md'],
    [
      'a list under the marker, first canonical token wins',
      '- **Review Input**:\n  - `notes.md` (context)\n  - `analysis-r2.md` (the highest-round artifact actually read)\n  - `analysis.md`',
      'analysis-r2.md',
    ],
  ])('accepts %s', (_label, inputLine, expected) => {
    write('analysis.md', 'a1', 1_000);
    write('analysis-r2.md', 'a2', 1_100);
    write('review-analysis.md', review(inputLine), 1_200);
    const inventory = inspectArtifactDirectory(dir, 'review-analysis');
    expect(inventory.reviewedInput?.name).toBe(expected);
    expect(inventory.diagnostics).toEqual([]);
  });

  it('review-code reviews code artifacts', () => {
    write('code.md', 'c', 1_000);
    write('plan.md', 'p', 1_000);
    write('review-code.md', review('- **Review Input**:\n  - `plan.md`\n  - `code.md`'), 1_200);
    expect(inspectArtifactDirectory(dir, 'review-code').reviewedInput?.name).toBe('code.md');
  });

  it('only reads the marker line and the next 11 lines', () => {
    write('analysis.md', 'a1', 1_000);
    const filler = Array.from({ length: 11 }, (_, index) => `line ${index}`).join('\n');
    write('review-analysis.md', review(`- **Review Input**:\n${filler}\n- \`analysis.md\``), 1_200);
    expect(inspectArtifactDirectory(dir, 'review-analysis')).toMatchObject({
      reviewedInput: null,
      diagnostics: [
        {
          code: 'BROKEN_REFERENCE',
          name: 'review-analysis.md',
          message: 'review-analysis.md does not reference a canonical analysis artifact',
        },
      ],
    });
    const within = Array.from({ length: 10 }, (_, index) => `line ${index}`).join('\n');
    write('review-analysis.md', review(`- **Review Input**:\n${within}\n- \`analysis.md\``), 1_200);
    expect(inspectArtifactDirectory(dir, 'review-analysis').reviewedInput?.name).toBe('analysis.md');
  });

  it.each([
    ['no marker', 'Reviewed `analysis.md` informally'],
    ['only a wrong family', '- **Review Input**: `plan.md`'],
    ['a noncanonical name', '- **Review Input**: `analysis-r1.md`'],
    ['a path, not a bare name', '- **Review Input**: `.agents/workspace/active/TASK-20260101-000001/analysis.md`'],
    ['an unquoted name', '- **Review Input**: analysis.md'],
  ])('BROKEN_REFERENCE for %s', (_label, inputLine) => {
    write('analysis.md', 'a1', 1_000);
    write('review-analysis.md', review(inputLine), 1_200);
    expect(inspectArtifactDirectory(dir, 'review-analysis')).toMatchObject({
      status: 'ready',
      reviewedInput: null,
      diagnostics: [
        {
          code: 'BROKEN_REFERENCE',
          name: 'review-analysis.md',
          message: 'review-analysis.md does not reference a canonical analysis artifact',
        },
      ],
    });
  });

  it('BROKEN_REFERENCE when the referenced input is newer than the review', () => {
    write('analysis.md', 'a1', 2_000);
    write('review-analysis.md', review('- **Review Input**: `analysis.md`'), 1_000);
    expect(inspectArtifactDirectory(dir, 'review-analysis')).toMatchObject({
      reviewedInput: null,
      diagnostics: [{ code: 'BROKEN_REFERENCE', name: 'review-analysis.md', message: 'analysis.md is newer than review-analysis.md' }],
    });
  });

  it('an input with exactly the review mtime is accepted', () => {
    write('analysis.md', 'a1', 1_000);
    write('review-analysis.md', review('- **Review Input**: `analysis.md`'), 1_000);
    expect(inspectArtifactDirectory(dir, 'review-analysis').reviewedInput?.name).toBe('analysis.md');
  });

  it('BROKEN_REFERENCE when the referenced input is missing, a symlink or a directory', () => {
    write('analysis.md', 'a1', 1_000);
    write('review-analysis.md', review('- **Review Input**: `analysis-r2.md`'), 1_200);
    expect(inspectArtifactDirectory(dir, 'review-analysis').diagnostics).toEqual([
      { code: 'BROKEN_REFERENCE', name: 'review-analysis.md', message: 'analysis-r2.md referenced by review-analysis.md does not exist' },
    ]);
    fs.symlinkSync(path.join(dir, 'analysis.md'), path.join(dir, 'analysis-r2.md'));
    expect(inspectArtifactDirectory(dir, 'review-analysis').diagnostics).toEqual([
      {
        code: 'BROKEN_REFERENCE',
        name: 'review-analysis.md',
        message: 'analysis-r2.md referenced by review-analysis.md is not a regular file',
      },
    ]);
    fs.rmSync(path.join(dir, 'analysis-r2.md'));
    fs.mkdirSync(path.join(dir, 'analysis-r2.md'));
    expect(inspectArtifactDirectory(dir, 'review-analysis').reviewedInput).toBeNull();
  });

  it('BROKEN_REFERENCE when the review cannot be read', () => {
    write('analysis.md', 'a1', 1_000);
    const reviewFile = write('review-analysis.md', review('- **Review Input**: `analysis.md`'), 1_200);
    const realRead = fs.readFileSync;
    vi.spyOn(fs, 'readFileSync').mockImplementation(((file: fs.PathOrFileDescriptor, options?: unknown) => {
      if (file === reviewFile) throw new Error('EIO');
      return realRead(file, options as BufferEncoding);
    }) as typeof fs.readFileSync);
    expect(inspectArtifactDirectory(dir, 'review-analysis')).toMatchObject({
      reviewedInput: null,
      diagnostics: [{ code: 'BROKEN_REFERENCE', name: 'review-analysis.md', message: 'Error: EIO' }],
    });
  });

  it('uses the latest review only', () => {
    write('analysis.md', 'a1', 1_000);
    write('analysis-r2.md', 'a2', 1_300);
    write('review-analysis.md', review('- **Review Input**: `analysis.md`'), 1_200);
    write('review-analysis-r2.md', review('- **Review Input**: `analysis.md`'), 1_400);
    expect(inspectArtifactDirectory(dir, 'review-analysis').reviewedInput?.name).toBe('analysis.md');
  });

  it('resolveReviewedInput can be called directly', () => {
    write('code.md', 'c', 1_000);
    write('review-code.md', review('- **Review Input**: `code.md`'), 1_200);
    const latest = inspectArtifactDirectory(dir, 'review-code').latest;
    expect(latest).not.toBeNull();
    if (!latest) return;
    expect(resolveReviewedInput(dir, 'review-code', latest)).toEqual({
      reviewedInput: { family: 'code', round: 1, name: 'code.md', path: path.join(dir, 'code.md'), size: 1, mtimeMs: 1_000_000 },
      diagnostics: [],
    });
  });

  it('non-review families never compute a reviewed input', () => {
    write('manual-validation.md', '- **Review Input**: `code.md`');
    write('code.md', 'c', 1);
    expect(inspectArtifactDirectory(dir, 'manual-validation').reviewedInput).toBeNull();
    write('pr-review.md', '- **Review Input**: `code.md`');
    expect(inspectArtifactDirectory(dir, 'pr-review').reviewedInput).toBeNull();
  });
});

describe('hasReviewAfterArtifact (§3.4)', () => {
  it('is true when the latest review binds the latest artifact', () => {
    write('analysis.md', 'a1', 1_000);
    write('analysis-r2.md', 'a2', 1_100);
    write('review-analysis.md', review('- **Review Input**: `analysis-r2.md`'), 1_200);
    expect(hasReviewAfterArtifact(dir, 'analysis', 'review-analysis')).toBe(true);
  });

  it('is false when the review binds an older round', () => {
    write('analysis.md', 'a1', 1_000);
    write('review-analysis.md', review('- **Review Input**: `analysis.md`'), 1_050);
    write('analysis-r2.md', 'a2', 1_100);
    expect(hasReviewAfterArtifact(dir, 'analysis', 'review-analysis')).toBe(false);
  });

  it('is false without artifacts, without reviews, or with an unreadable directory', () => {
    expect(hasReviewAfterArtifact(dir, 'plan', 'review-plan')).toBe(false);
    write('plan.md', 'p', 1_000);
    expect(hasReviewAfterArtifact(dir, 'plan', 'review-plan')).toBe(false);
    expect(hasReviewAfterArtifact(path.join(dir, 'missing'), 'plan', 'review-plan')).toBe(false);
  });

  it('is false when the bound artifact was edited after the review', () => {
    write('code.md', 'c', 1_000);
    write('review-code.md', review('- **Review Input**: `code.md`'), 1_200);
    expect(hasReviewAfterArtifact(dir, 'code', 'review-code')).toBe(true);
    fs.utimesSync(path.join(dir, 'code.md'), 1_300, 1_300);
    expect(hasReviewAfterArtifact(dir, 'code', 'review-code')).toBe(false);
  });

  it('matches the example task once mtimes follow the activity log', () => {
    const copy = path.join(dir, 'task');
    copyExampleTask(copy);
    const times: [string, number][] = [
      ['analysis.md', 1_000],
      ['review-analysis.md', 1_100],
      ['analysis-r2.md', 1_200],
      ['review-analysis-r2.md', 1_300],
    ];
    for (const [name, seconds] of times) fs.utimesSync(path.join(copy, name), seconds, seconds);
    expect(inspectArtifactDirectory(copy, 'review-analysis').reviewedInput?.name).toBe('analysis-r2.md');
    expect(hasReviewAfterArtifact(copy, 'analysis', 'review-analysis')).toBe(true);
  });
});
