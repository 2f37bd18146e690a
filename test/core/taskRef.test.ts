import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { REPO_ROOT_NOT_FOUND_MESSAGE, TASK_ID_PATTERN, readShortIdLength, resolveTaskRef } from '../../src/core/taskRef.ts';
import { EXAMPLE_AGENTS_DIR } from '../support/fixturePaths.ts';

const EXAMPLE_AGENTS = EXAMPLE_AGENTS_DIR;
const TASK = 'TASK-20260101-000001';
const OTHER = 'TASK-20260202-000002';

let repo: string;
let outside: string;

/** Copy of the example `.agents` tree, made writable (the shared examples are read-only). */
function copyExample(root: string): void {
  fs.cpSync(EXAMPLE_AGENTS, path.join(root, '.agents'), { recursive: true });
  const makeWritable = (dir: string) => {
    fs.chmodSync(dir, 0o755);
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) makeWritable(full);
      else fs.chmodSync(full, 0o644);
    }
  };
  makeWritable(path.join(root, '.agents'));
}

function ws(...parts: string[]): string {
  return path.join(repo, '.agents', 'workspace', ...parts);
}

function writeTask(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'task.md'), '---\nid: x\n---\n');
}

function writeRegistry(value: unknown): void {
  fs.writeFileSync(ws('active', '.short-ids.json'), typeof value === 'string' ? value : JSON.stringify(value));
}

function writeConfig(text: string): void {
  fs.writeFileSync(path.join(repo, '.agents', '.airc.json'), text);
}

/** What resolveTaskRef returns for `taskId` found in `repo` below `state` (then any archive levels). */
function resolved(taskId: string, state: string, ...levels: string[]) {
  return {
    ok: true,
    repoRoot: repo,
    taskId,
    taskDir: ws(state, ...levels, taskId),
    taskMdPath: ws(state, ...levels, taskId, 'task.md'),
    state,
  };
}

/** What resolveTaskRef returns when it refuses a ref in `repo`. */
function refusal(code: string, message: string, taskId: string | null = null) {
  return { ok: false, code, message, repoRoot: repo, taskId };
}

/** Every entry under `root` (without following links): type, size, mtime, content hash or link target. */
function snapshot(root: string): Record<string, string> {
  const result: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const full = path.join(dir, name);
      const stat = fs.lstatSync(full);
      const rel = path.relative(root, full);
      if (stat.isSymbolicLink()) result[rel] = `link ${fs.readlinkSync(full)} ${stat.mtimeMs}`;
      else if (stat.isDirectory()) {
        result[rel] = `dir ${stat.mtimeMs}`;
        walk(full);
      } else result[rel] = `file ${stat.size} ${stat.mtimeMs} ${crypto.createHash('sha256').update(fs.readFileSync(full)).digest('hex')}`;
    }
  };
  walk(root);
  return result;
}

beforeEach(() => {
  repo = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-taskref-'));
  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-outside-'));
  copyExample(repo);
});

afterEach(() => {
  fs.rmSync(repo, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

describe('TASK_ID_PATTERN', () => {
  it('accepts only TASK-<8 digits>-<6 digits>', () => {
    expect(TASK_ID_PATTERN.test(TASK)).toBe(true);
    for (const bad of ['TASK-2026010-000001', 'TASK-20260101-0000011', 'task-20260101-000001', `${TASK}\n`, ` ${TASK}`, `${TASK}/x`]) {
      expect(TASK_ID_PATTERN.test(bad)).toBe(false);
    }
  });
});

describe('readShortIdLength', () => {
  it('defaults to 2 without a config', () => {
    expect(readShortIdLength(repo)).toBe(2);
  });

  it('reads task.shortIdLength', () => {
    writeConfig('{"task":{"shortIdLength":3}}');
    expect(readShortIdLength(repo)).toBe(3);
  });

  it.each([
    ['not json', '{'],
    ['zero', '{"task":{"shortIdLength":0}}'],
    ['negative', '{"task":{"shortIdLength":-1}}'],
    ['string', '{"task":{"shortIdLength":"3"}}'],
    ['infinite (1e999 parses to Infinity)', '{"task":{"shortIdLength":1e999}}'],
    ['null config', 'null'],
    ['missing task', '{}'],
  ])('falls back to 2 for %s', (_label, text) => {
    writeConfig(text);
    expect(readShortIdLength(repo)).toBe(2);
  });

  it('floors fractions and caps absurd lengths at 15', () => {
    writeConfig('{"task":{"shortIdLength":2.7}}');
    expect(readShortIdLength(repo)).toBe(2);
    writeConfig('{"task":{"shortIdLength":1000000000}}');
    expect(readShortIdLength(repo)).toBe(15);
  });
});

describe('resolveTaskRef: full ids and states', () => {
  it('52: a full TASK id resolves in active', () => {
    const result = resolveTaskRef(TASK, { repoRoot: repo });
    expect(result).toEqual(resolved(TASK, 'active'));
    expect(Object.isFrozen(result)).toBe(true);
  });

  it.each(['blocked', 'completed'] as const)('52: a full TASK id resolves in %s', (state) => {
    writeTask(ws(state, OTHER));
    expect(resolveTaskRef(OTHER, { repoRoot: repo })).toEqual(resolved(OTHER, state));
  });

  it('52: a full TASK id resolves in archive/2026/07/15', () => {
    writeTask(ws('archive', '2026', '07', '15', OTHER));
    expect(resolveTaskRef(OTHER, { repoRoot: repo })).toEqual(resolved(OTHER, 'archive', '2026', '07', '15'));
  });

  it('prefers active, then blocked, then completed, then archive', () => {
    writeTask(ws('archive', '2026', '07', '15', OTHER));
    writeTask(ws('completed', OTHER));
    expect(resolveTaskRef(OTHER, { repoRoot: repo })).toMatchObject({ ok: true, state: 'completed' });
    writeTask(ws('blocked', OTHER));
    expect(resolveTaskRef(OTHER, { repoRoot: repo })).toMatchObject({ ok: true, state: 'blocked' });
    writeTask(ws('active', OTHER));
    expect(resolveTaskRef(OTHER, { repoRoot: repo })).toMatchObject({ ok: true, state: 'active' });
  });

  it('walks the archive newest first and only through 4/2/2-digit names', () => {
    writeTask(ws('archive', '2025', '12', '31', OTHER));
    writeTask(ws('archive', '2026', '01', '02', OTHER));
    writeTask(ws('archive', '2026', '01', '01', OTHER));
    writeTask(ws('archive', '99999', '01', '01', OTHER));
    writeTask(ws('archive', '2027', '1', '01', OTHER));
    writeTask(ws('archive', '2027', '01', '1x', OTHER));
    expect(resolveTaskRef(OTHER, { repoRoot: repo })).toMatchObject({
      ok: true,
      state: 'archive',
      taskDir: ws('archive', '2026', '01', '02', OTHER),
    });
  });

  it('tolerates archive levels that are files, not directories', () => {
    fs.mkdirSync(ws('archive'), { recursive: true });
    fs.writeFileSync(ws('archive', '2026'), 'not a directory');
    expect(resolveTaskRef(OTHER, { repoRoot: repo })).toMatchObject({ ok: false, code: 'TASK_NOT_FOUND' });
  });

  it('TASK_NOT_FOUND names the id and keeps it', () => {
    expect(resolveTaskRef(OTHER, { repoRoot: repo })).toEqual(
      refusal('TASK_NOT_FOUND', `task ${OTHER} not found in active / blocked / completed / archive`, OTHER),
    );
  });

  it('a task exists when something named task.md is there (upstream: fs.existsSync)', () => {
    fs.mkdirSync(ws('blocked', OTHER), { recursive: true });
    expect(resolveTaskRef(OTHER, { repoRoot: repo })).toMatchObject({ ok: false, code: 'TASK_NOT_FOUND', taskId: OTHER });
    // A directory named task.md is found; reading it fails later (ORCHESTRATION_TASK_READ_FAILED).
    fs.mkdirSync(ws('active', OTHER, 'task.md'), { recursive: true });
    expect(resolveTaskRef(OTHER, { repoRoot: repo })).toMatchObject({
      ok: true,
      state: 'active',
      taskMdPath: ws('active', OTHER, 'task.md'),
    });
  });

  it('a workspace without .agents/workspace finds nothing', () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-empty-'));
    try {
      expect(resolveTaskRef(TASK, { repoRoot: empty })).toMatchObject({ ok: false, code: 'TASK_NOT_FOUND', taskId: TASK });
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });

  it('REPO_ROOT_NOT_FOUND when no repository root is given', () => {
    expect(REPO_ROOT_NOT_FOUND_MESSAGE).toBe('current directory is not inside a git repository');
    expect(resolveTaskRef(TASK, { repoRoot: '' })).toEqual({
      ok: false,
      code: 'REPO_ROOT_NOT_FOUND',
      message: REPO_ROOT_NOT_FOUND_MESSAGE,
      repoRoot: null,
      taskId: null,
    });
  });

  it('normalises the repository root path', () => {
    expect(resolveTaskRef(TASK, { repoRoot: `${repo}/./.agents/..` })).toMatchObject({ ok: true, repoRoot: repo });
  });
});

describe('resolveTaskRef: short ids', () => {
  it('49: "1" resolves to the active task without modifying the registry', () => {
    const registry = ws('active', '.short-ids.json');
    const bytes = fs.readFileSync(registry);
    const mtime = fs.statSync(registry).mtimeMs;
    const before = snapshot(repo);
    expect(resolveTaskRef('1', { repoRoot: repo })).toEqual(resolved(TASK, 'active'));
    expect(fs.readFileSync(registry).equals(bytes)).toBe(true);
    expect(fs.statSync(registry).mtimeMs).toBe(mtime);
    expect(snapshot(repo)).toEqual(before);
  });

  it.each(['1', '01', '#1', '#01', '001', '#0001'])('"%s" normalises to key 01', (ref) => {
    expect(resolveTaskRef(ref, { repoRoot: repo })).toMatchObject({ ok: true, taskId: TASK });
  });

  it('50: "bad" → INVALID_TASK_REF', () => {
    expect(resolveTaskRef('bad', { repoRoot: repo })).toEqual(
      refusal('INVALID_TASK_REF', "'bad' is not a valid short id or TASK-id; expected bare digits, '#N', or 'TASK-YYYYMMDD-HHMMSS'"),
    );
  });

  it('50: "0" → SHORT_ID_RESERVED', () => {
    expect(resolveTaskRef('0', { repoRoot: repo })).toEqual(refusal('SHORT_ID_RESERVED', "short id '0' is invalid (#00 is reserved)"));
    expect(resolveTaskRef('#000', { repoRoot: repo })).toMatchObject({
      code: 'SHORT_ID_RESERVED',
      message: "short id '#000' is invalid (#00 is reserved)",
    });
  });

  it('50: "2" → SHORT_ID_NOT_FOUND (registry has other ids)', () => {
    expect(resolveTaskRef('2', { repoRoot: repo })).toEqual(
      refusal(
        'SHORT_ID_NOT_FOUND',
        "short id '#02' not found in active task registry (it may have been cleaned up after archival; " +
          "'baton runs' lists the tasks with a run by short id; .agents/workspace/active/.short-ids.json is the registry).",
      ),
    );
  });

  it('SHORT_ID_NOT_FOUND says "empty" when the registry has no ids', () => {
    writeRegistry({ version: 1, ids: {} });
    expect(resolveTaskRef('#7', { repoRoot: repo })).toMatchObject({
      code: 'SHORT_ID_NOT_FOUND',
      message: "short id '#07' not found; active task registry is empty.",
      taskId: null,
    });
  });

  it('50: a task under two keys → SHORT_ID_REGISTRY_DUPLICATE_TASK with that taskId', () => {
    writeRegistry({ version: 1, ids: { '01': TASK, '02': OTHER, '03': TASK } });
    expect(resolveTaskRef('2', { repoRoot: repo })).toEqual(
      refusal(
        'SHORT_ID_REGISTRY_DUPLICATE_TASK',
        `duplicate registry entries for taskId ${TASK} at keys [#01, #03]; manual resolution required`,
        TASK,
      ),
    );
  });

  it('50: a key pointing to a missing active task → SHORT_ID_STALE with that taskId', () => {
    writeRegistry({ version: 1, ids: { '01': TASK, '02': OTHER } });
    expect(resolveTaskRef('2', { repoRoot: repo })).toEqual(
      refusal(
        'SHORT_ID_STALE',
        "short id '#02' not found in active task registry (it may have been cleaned up after archival; " +
          "'baton runs' lists the tasks with a run by short id; .agents/workspace/active/.short-ids.json is the registry).",
        OTHER,
      ),
    );
  });

  it('SHORT_ID_STALE says "empty" when no registered task is still active', () => {
    writeRegistry({ version: 1, ids: { '02': OTHER } });
    writeTask(ws('completed', OTHER));
    expect(resolveTaskRef('2', { repoRoot: repo })).toMatchObject({
      code: 'SHORT_ID_STALE',
      message: "short id '#02' not found; active task registry is empty.",
      taskId: OTHER,
    });
  });

  it('SHORT_ID_CAPACITY_EXCEEDED above 10^L − 1', () => {
    expect(resolveTaskRef('100', { repoRoot: repo })).toEqual(
      refusal(
        'SHORT_ID_CAPACITY_EXCEEDED',
        'short id 100 exceeds shortIdLength=2 capacity (max=99); archive tasks or raise task.shortIdLength in .agents/.airc.json',
      ),
    );
  });

  it('huge numbers are reported exactly, not rounded', () => {
    expect(resolveTaskRef('#000123456789012345678901234567890', { repoRoot: repo })).toMatchObject({
      code: 'SHORT_ID_CAPACITY_EXCEEDED',
      message:
        'short id 123456789012345678901234567890 exceeds shortIdLength=2 capacity (max=99); archive tasks or raise task.shortIdLength in .agents/.airc.json',
    });
    expect(resolveTaskRef('9'.repeat(5000), { repoRoot: repo })).toMatchObject({ ok: false, code: 'SHORT_ID_CAPACITY_EXCEEDED' });
  });

  it('honours task.shortIdLength for padding, capacity and registry keys', () => {
    writeConfig('{"task":{"shortIdLength":3}}');
    writeRegistry({ version: 1, ids: { '007': TASK } });
    expect(resolveTaskRef('7', { repoRoot: repo })).toMatchObject({ ok: true, taskId: TASK });
    expect(resolveTaskRef('0', { repoRoot: repo })).toMatchObject({ message: "short id '0' is invalid (#000 is reserved)" });
    expect(resolveTaskRef('1000', { repoRoot: repo })).toMatchObject({
      message: 'short id 1000 exceeds shortIdLength=3 capacity (max=999); archive tasks or raise task.shortIdLength in .agents/.airc.json',
    });
    // A two-digit key is invalid once the length is 3.
    writeRegistry({ version: 1, ids: { '01': TASK } });
    expect(resolveTaskRef('1', { repoRoot: repo })).toMatchObject({ code: 'SHORT_ID_REGISTRY_INVALID_SCHEMA' });
  });

  it('SHORT_ID_REGISTRY_NOT_FOUND when the registry file is absent', () => {
    fs.rmSync(ws('active', '.short-ids.json'));
    expect(resolveTaskRef('1', { repoRoot: repo })).toEqual(
      refusal('SHORT_ID_REGISTRY_NOT_FOUND', "short id '#01' not found; active task registry is empty."),
    );
  });

  it('SHORT_ID_REGISTRY_READ_FAILED when the registry is a directory', () => {
    const registry = ws('active', '.short-ids.json');
    fs.rmSync(registry);
    fs.mkdirSync(registry);
    const result = resolveTaskRef('1', { repoRoot: repo });
    expect(result).toMatchObject({ ok: false, code: 'SHORT_ID_REGISTRY_READ_FAILED', repoRoot: repo, taskId: null });
    expect(result.ok ? '' : result.message).toMatch(
      new RegExp(`^cannot read registry ${registry.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*EISDIR`),
    );
  });

  it('SHORT_ID_REGISTRY_INVALID_JSON for malformed JSON', () => {
    writeRegistry('{"version": 1,');
    const result = resolveTaskRef('1', { repoRoot: repo });
    expect(result).toMatchObject({ ok: false, code: 'SHORT_ID_REGISTRY_INVALID_JSON', taskId: null });
    expect(result.ok ? '' : result.message.startsWith(`registry ${ws('active', '.short-ids.json')} is not valid JSON: `)).toBe(true);
  });

  it.each([
    ['a wrong version', { version: 2, ids: { '01': TASK } }],
    ['a string version', { version: '1', ids: { '01': TASK } }],
    ['ids as an array', { version: 1, ids: [TASK] }],
    ['null ids', { version: 1, ids: null }],
    ['missing ids', { version: 1 }],
    ['an array document', [1]],
    ['a null document', null],
    ['a short key', { version: 1, ids: { '1': TASK } }],
    ['a long key', { version: 1, ids: { '001': TASK } }],
    ['the reserved key', { version: 1, ids: { '00': TASK, '01': TASK } }],
    ['a non-digit key', { version: 1, ids: { ab: TASK, '01': TASK } }],
    ['a non-TASK value', { version: 1, ids: { '01': 'not-a-task' } }],
    ['a number value', { version: 1, ids: { '01': 1 } }],
    ['a path-traversal value', { version: 1, ids: { '01': '../../../etc' } }],
    ['a TASK id with a traversal suffix', { version: 1, ids: { '01': `${TASK}/../../x` } }],
    ['an absolute-path value', { version: 1, ids: { '01': '/etc/passwd' } }],
    ['a value with a trailing newline', { version: 1, ids: { '01': `${TASK}\n` } }],
  ])('SHORT_ID_REGISTRY_INVALID_SCHEMA for %s', (_label, registry) => {
    writeRegistry(registry);
    expect(resolveTaskRef('1', { repoRoot: repo })).toEqual(
      refusal('SHORT_ID_REGISTRY_INVALID_SCHEMA', `registry ${ws('active', '.short-ids.json')} has invalid schema`),
    );
  });

  it('SHORT_ID_REGISTRY_INVALID_SCHEMA for a __proto__ key', () => {
    writeRegistry(`{"version":1,"ids":{"01":"${TASK}","__proto__":"${OTHER}"}}`);
    expect(resolveTaskRef('1', { repoRoot: repo })).toMatchObject({ code: 'SHORT_ID_REGISTRY_INVALID_SCHEMA' });
  });

  it('validates every entry, not only the requested one, in file order', () => {
    // The duplicate comes first, so it wins over the later invalid entry.
    writeRegistry(`{"version":1,"ids":{"01":"${TASK}","02":"${TASK}","03":"../x"}}`);
    expect(resolveTaskRef('1', { repoRoot: repo })).toMatchObject({ code: 'SHORT_ID_REGISTRY_DUPLICATE_TASK' });
    writeRegistry(`{"version":1,"ids":{"03":"../x","01":"${TASK}","02":"${TASK}"}}`);
    expect(resolveTaskRef('1', { repoRoot: repo })).toMatchObject({ code: 'SHORT_ID_REGISTRY_INVALID_SCHEMA' });
  });

  it('a short id whose active task moved to completed is stale, not resolved elsewhere', () => {
    fs.mkdirSync(ws('completed'), { recursive: true });
    fs.renameSync(ws('active', TASK), ws('completed', TASK));
    expect(resolveTaskRef('1', { repoRoot: repo })).toMatchObject({ code: 'SHORT_ID_STALE', taskId: TASK });
  });
});

describe('resolveTaskRef: hostile references', () => {
  const invalidRefs: [string, string][] = [
    ['parent traversal', '../..'],
    ['traversal after a task id', `${TASK}/../../x`],
    ['task id with a trailing slash', `${TASK}/`],
    ['an absolute path', '/etc/passwd'],
    ['the absolute task directory', `/srv/app/.agents/workspace/active/${TASK}`],
    ['a NUL byte', `${TASK}\0`],
    ['a NUL byte in a short id', '1\0'],
    ['a lone #', '#'],
    ['the empty string', ''],
    ['a leading space', ' 1'],
    ['a trailing newline', `${TASK}\n`],
    ['a short id with a trailing newline', '1\n'],
    ['a negative number', '-1'],
    ['a fraction', '1.5'],
    ['exponent notation', '1e3'],
    ['hex', '0x1'],
    ['full-width digits', '１'],
    ['double hash', '##1'],
    ['a lower-case task id', TASK.toLowerCase()],
    ['a Windows path', `..\\..\\${TASK}`],
  ];

  it.each(invalidRefs)('%s → INVALID_TASK_REF', (_label, ref) => {
    expect(resolveTaskRef(ref, { repoRoot: repo })).toEqual(
      refusal('INVALID_TASK_REF', `'${ref}' is not a valid short id or TASK-id; expected bare digits, '#N', or 'TASK-YYYYMMDD-HHMMSS'`),
    );
  });

  it('a task directory symlinked outside the workspace is not found', () => {
    writeTask(path.join(outside, OTHER));
    fs.symlinkSync(path.join(outside, OTHER), ws('active', OTHER));
    expect(resolveTaskRef(OTHER, { repoRoot: repo })).toMatchObject({ ok: false, code: 'TASK_NOT_FOUND', taskId: OTHER });
  });

  it('a task.md symlinked outside the workspace is not found', () => {
    fs.writeFileSync(path.join(outside, 'secret.md'), 'secret');
    fs.mkdirSync(ws('active', OTHER));
    fs.symlinkSync(path.join(outside, 'secret.md'), ws('active', OTHER, 'task.md'));
    expect(resolveTaskRef(OTHER, { repoRoot: repo })).toMatchObject({ ok: false, code: 'TASK_NOT_FOUND', taskId: OTHER });
  });

  it('an outside task directory whose task.md links back into the workspace is not found', () => {
    fs.mkdirSync(path.join(outside, OTHER));
    fs.symlinkSync(ws('active', TASK, 'task.md'), path.join(outside, OTHER, 'task.md'));
    fs.symlinkSync(path.join(outside, OTHER), ws('active', OTHER));
    expect(resolveTaskRef(OTHER, { repoRoot: repo })).toMatchObject({ ok: false, code: 'TASK_NOT_FOUND' });
  });

  it('an archive level symlinked outside the workspace is not followed out', () => {
    writeTask(path.join(outside, '07', '15', OTHER));
    fs.mkdirSync(ws('archive', '2026'), { recursive: true });
    fs.symlinkSync(path.join(outside, '07'), ws('archive', '2026', '07'));
    expect(resolveTaskRef(OTHER, { repoRoot: repo })).toMatchObject({ ok: false, code: 'TASK_NOT_FOUND' });
  });

  it('a short id whose active task directory links outside is not found', () => {
    writeRegistry({ version: 1, ids: { '01': TASK, '02': OTHER } });
    writeTask(path.join(outside, OTHER));
    fs.symlinkSync(path.join(outside, OTHER), ws('active', OTHER));
    expect(resolveTaskRef('2', { repoRoot: repo })).toMatchObject({ ok: false, code: 'TASK_NOT_FOUND', taskId: OTHER });
  });

  it('a symlink that stays inside the workspace is followed', () => {
    writeTask(ws('completed', 'real-dir'));
    fs.mkdirSync(ws('blocked'), { recursive: true });
    fs.symlinkSync(ws('completed', 'real-dir'), ws('blocked', OTHER), 'dir');
    expect(resolveTaskRef(OTHER, { repoRoot: repo })).toMatchObject({ ok: true, state: 'blocked', taskDir: ws('blocked', OTHER) });
  });

  it('a dangling task.md symlink is not a task', () => {
    fs.mkdirSync(ws('active', OTHER));
    fs.symlinkSync(path.join(outside, 'nothing.md'), ws('active', OTHER, 'task.md'));
    expect(resolveTaskRef(OTHER, { repoRoot: repo })).toMatchObject({ ok: false, code: 'TASK_NOT_FOUND' });
  });
});

describe('resolveTaskRef never writes', () => {
  it('leaves bytes, mtimes and entries unchanged for successes and every failure', () => {
    writeTask(ws('archive', '2026', '07', '15', OTHER));
    const refs = [TASK, OTHER, '1', '#01', '2', '0', '100', 'bad', '../..', `${TASK}/../../x`, '/etc/passwd', '#', 'TASK-20990101-000000'];
    const before = snapshot(repo);
    for (const ref of refs) resolveTaskRef(ref, { repoRoot: repo });
    expect(snapshot(repo)).toEqual(before);
    writeRegistry('{broken');
    const broken = snapshot(repo);
    resolveTaskRef('1', { repoRoot: repo });
    expect(snapshot(repo)).toEqual(broken);
  });
});
