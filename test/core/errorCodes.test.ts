import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  ARTIFACT_DIAGNOSTIC_CODES,
  BATON_ERROR_CODES,
  ERROR_CODES,
  LIFECYCLE_ERROR_CODES,
  isErrorCode,
} from '../../src/core/errorCodes.ts';
import { failed, payloadInvalid } from '../../src/core/results.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// Names in SCREAMING_SNAKE_CASE that are not codes: environment variables, and the heredoc marker
// of the installed instructions.
const NOT_CODES = new Set([
  'REDIS_URL',
  'DENO_DIR',
  'BATON_PREFIX',
  'BATON_DASHBOARD_TOKEN',
  'BATON_DEFAULT_REDIS_URL',
  'BATON_HOOK_TRANSPORT',
  'BATON_HOOK_BUDGET_MS',
  'BATON_HOOK_VERBOSE',
  'BATON_FAILPOINT',
  'BATON_REDIS_CA',
  'BATON_REDIS_CERT',
  'BATON_REDIS_KEY',
  'BATON_ARTIFACT',
  'BATON_AGENT_INFRA_SHIM',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
]);

const CODE_FAMILIES = /^(BATON|ORCHESTRATION|DELEGATION|SHORT_ID|TASK|REPO_ROOT|INVALID|LEDGER|REVIEW|ARTIFACT)_/;

function codeNames(text: string, pattern: RegExp): string[] {
  return [...new Set([...text.matchAll(pattern)].map((match) => match[1]!))].filter((name) => !NOT_CODES.has(name)).sort();
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const known = new Set<string>([...ERROR_CODES, ...ARTIFACT_DIAGNOSTIC_CODES]);

describe('the error code vocabulary', () => {
  it('names every code that README.md and docs/differences.md tell users about', () => {
    const documented = ['README.md', 'docs/differences.md'].flatMap((file) =>
      codeNames(fs.readFileSync(path.join(ROOT, file), 'utf8'), /`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`/g),
    );
    // The documents do name codes (a broken pattern would make this test pass vacuously).
    expect(documented).toEqual(
      expect.arrayContaining(['BATON_WORKER_UNAVAILABLE', 'ORCHESTRATION_PAYLOAD_INVALID', 'DELEGATION_ISOLATION_FORBIDDEN']),
    );
    expect(documented.filter((code) => !known.has(code))).toEqual([]);
  });

  it('names every code literal in src/', () => {
    const literals = sourceFiles(path.join(ROOT, 'src')).flatMap((file) =>
      codeNames(fs.readFileSync(file, 'utf8'), /['`]([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)['`:]/g).filter((name) => CODE_FAMILIES.test(name)),
    );
    expect(literals.length).toBeGreaterThan(50);
    expect([...new Set(literals.filter((code) => !known.has(code)))]).toEqual([]);
  });

  it("keeps upstream's codes and baton's own apart, each listed once", () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    expect(BATON_ERROR_CODES.every((code) => code.startsWith('BATON_'))).toBe(true);
    expect(LIFECYCLE_ERROR_CODES.some((code) => code.startsWith('BATON_'))).toBe(false);
    expect(ARTIFACT_DIAGNOSTIC_CODES.filter((code) => isErrorCode(code))).toEqual([]);
    expect(isErrorCode('ORCHESTRATION_RUN_MISSING')).toBe(true);
    expect(isErrorCode('ORCHESTRATION_RUN_MISSED')).toBe(false);
  });

  it('builds every failed result the same way', () => {
    expect(failed('ORCHESTRATION_RUN_MISSING', 'no orchestration run exists', 'TASK-20260101-000001')).toEqual({
      status: 'failed',
      changed: false,
      taskId: 'TASK-20260101-000001',
      run: null,
      next: null,
      error: { code: 'ORCHESTRATION_RUN_MISSING', message: 'no orchestration run exists' },
    });
    expect(failed('BATON_TIMEOUT', 'no result in time')).toMatchObject({ taskId: null, error: { code: 'BATON_TIMEOUT' } });
    // A usage error keeps upstream's shorter shape: no task was reached.
    expect(payloadInvalid("unknown client 'x'")).toEqual({
      status: 'failed',
      changed: false,
      error: { code: 'ORCHESTRATION_PAYLOAD_INVALID', message: "unknown client 'x'" },
    });
  });
});
