// Task reference resolution (docs/lifecycle.md §1): full TASK ids and short ids (`7`, `#07`) to a task directory
// under `<repoRoot>/.agents/workspace`. Read-only: nothing here writes, not even the short-id registry.
import fs from 'node:fs';
import path from 'node:path';
import * as z from 'zod/mini';
import './zodEnglish.ts';

import { REPO_ROOT_NOT_FOUND_MESSAGE } from '../base/repoRoot.ts';
import {
  ARCHIVE_STATE,
  archiveDayDirs,
  CONFIG_PATH,
  configPath,
  FLAT_TASK_STATES,
  nodeRunFiles,
  shortIdRegistryPath,
  stateDir,
  taskFilePath,
  workspaceDir,
} from './taskLayout.ts';
import type { RunFiles } from './taskLayout.ts';
import type { ErrorCode } from './errorCodes.ts';
import type { ResolvedTaskRef, TaskState } from './types.ts';

export const TASK_ID_PATTERN = /^TASK-\d{8}-\d{6}$/;

export { REPO_ROOT_NOT_FOUND_MESSAGE } from '../base/repoRoot.ts';

const DEFAULT_SHORT_ID_LENGTH = 2;
// Longer keys would make the registry capacity (10^L − 1) lose integer precision and the
// reserved-id message absurdly long; no real configuration comes near this.
const MAX_SHORT_ID_LENGTH = 15;

type Failure = Extract<ResolvedTaskRef, { ok: false }>;

function failure(code: ErrorCode, message: string, repoRoot: string | null, taskId: string | null): Failure {
  return Object.freeze({ ok: false, code, message, repoRoot, taskId });
}

/**
 * `task.shortIdLength` from `.agents/.airc.json` when it is a finite number ≥ 1, else 2 (any read or parse
 * error also gives 2). Fractions are floored and the value is capped at 15, since a digit count is whole.
 */
export function readShortIdLength(repoRoot: string, files: RunFiles = nodeRunFiles): number {
  try {
    const text = files.readText(configPath(repoRoot));
    if (text === null) return DEFAULT_SHORT_ID_LENGTH;
    const config: unknown = JSON.parse(text);
    const value = (config as { task?: { shortIdLength?: unknown } } | null)?.task?.shortIdLength;
    if (typeof value === 'number' && Number.isFinite(value) && value >= 1) {
      return Math.min(Math.floor(value), MAX_SHORT_ID_LENGTH);
    }
  } catch {
    // Unreadable or malformed config falls back to the default, as agent-infra does.
  }
  return DEFAULT_SHORT_ID_LENGTH;
}

type ShortIdKey = { ok: true; key: string } | { ok: false; code: ErrorCode; message: string };

/** `^#?(\d+)$` → the registry key, zero-padded to `length` digits; null when the input is not a short id. */
function normalizeShortId(input: string, length: number): ShortIdKey | null {
  const match = /^#?(\d+)$/.exec(input);
  if (!match?.[1]) return null;
  // BigInt keeps arbitrarily long digit strings exact (Number would round them).
  const value = BigInt(match[1]);
  if (value === 0n) {
    return { ok: false, code: 'SHORT_ID_RESERVED', message: `short id '${input}' is invalid (#${'0'.repeat(length)} is reserved)` };
  }
  const max = 10n ** BigInt(length) - 1n;
  if (value > max) {
    return {
      ok: false,
      code: 'SHORT_ID_CAPACITY_EXCEEDED',
      message:
        `short id ${value} exceeds shortIdLength=${length} capacity (max=${max}); ` +
        `archive tasks or raise task.shortIdLength in ${CONFIG_PATH}`,
    };
  }
  return { ok: true, key: value.toString().padStart(length, '0') };
}

// Only the outer shape is checked by zod; entries are checked one by one, in file order, so that the
// first offending entry decides between INVALID_SCHEMA and DUPLICATE_TASK as in agent-infra.
const registryShape = z.object({ version: z.literal(1), ids: z.record(z.string(), z.unknown()) });

function registryEntrySchema(length: number) {
  const max = 10 ** length - 1;
  return z.tuple([
    z.string().check(
      z.regex(new RegExp(`^\\d{${length}}$`)),
      z.refine((key) => Number(key) >= 1 && Number(key) <= max),
    ),
    z.string().check(z.regex(TASK_ID_PATTERN)),
  ]);
}

type ShortIdLookup = { ok: true; taskId: string } | { ok: false; code: ErrorCode; message: string; taskId: string | null };

/** The registry's entries (key → TASK id, in file order) and the key of each task. */
export type ShortIdRegistry = { ok: true; ids: Record<string, unknown>; keyOfTask: Map<string, string> };
export type RegistryFailure = { ok: false; code: ErrorCode; message: string | null; taskId: string | null };

/**
 * Reads and checks `.short-ids.json`. A missing registry fails with SHORT_ID_REGISTRY_NOT_FOUND and no
 * message (the caller words it); every other failure carries its message.
 */
export function readShortIdRegistry(repoRoot: string, length: number, files: RunFiles = nodeRunFiles): ShortIdRegistry | RegistryFailure {
  const registryPath = shortIdRegistryPath(repoRoot);
  let raw: string | null;
  try {
    raw = files.readText(registryPath);
  } catch (error) {
    const message = `cannot read registry ${registryPath}: ${errorText(error)}`;
    return { ok: false, code: 'SHORT_ID_REGISTRY_READ_FAILED', message, taskId: null };
  }
  if (raw === null) return { ok: false, code: 'SHORT_ID_REGISTRY_NOT_FOUND', message: null, taskId: null };
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch (error) {
    const message = `registry ${registryPath} is not valid JSON: ${errorText(error)}`;
    return { ok: false, code: 'SHORT_ID_REGISTRY_INVALID_JSON', message, taskId: null };
  }
  const invalidSchema = {
    ok: false,
    code: 'SHORT_ID_REGISTRY_INVALID_SCHEMA',
    message: `registry ${registryPath} has invalid schema`,
    taskId: null,
  } as const;
  if (!registryShape.safeParse(data).success) return invalidSchema;

  // Iterate the parsed JSON itself: zod's output object would silently drop a `__proto__` key.
  const ids = (data as { ids: Record<string, unknown> }).ids;
  const entrySchema = registryEntrySchema(length);
  const keyOfTask = new Map<string, string>();
  for (const entry of Object.entries(ids)) {
    const parsed = entrySchema.safeParse(entry);
    if (!parsed.success) return invalidSchema;
    const [registryKey, taskId] = parsed.data;
    const earlier = keyOfTask.get(taskId);
    if (earlier !== undefined) {
      return {
        ok: false,
        code: 'SHORT_ID_REGISTRY_DUPLICATE_TASK',
        message: `duplicate registry entries for taskId ${taskId} at keys [#${earlier}, #${registryKey}]; manual resolution required`,
        taskId,
      };
    }
    keyOfTask.set(taskId, registryKey);
  }
  return { ok: true, ids, keyOfTask };
}

/**
 * TASK id → short id (registry key) for every registered task; empty when the registry is missing
 * or fails the checks that resolving a short id makes (so a listing never shows a short id that
 * resolution refuses). The run listing reads it through its `RunFiles`.
 */
export function shortIdsByTask(repoRoot: string, files: RunFiles = nodeRunFiles): Map<string, string> {
  const registry = readShortIdRegistry(repoRoot, readShortIdLength(repoRoot, files), files);
  return registry.ok ? registry.keyOfTask : new Map();
}

/**
 * Where to look for the task instead. 0.9.2 says "check 'task-short-id.js list'", a script of its own
 * that baton does not have; baton keeps those words under the agent-infra shim only
 * (src/cli/agentInfraWords.ts).
 */
export const SHORT_ID_CLEANED_HINT =
  "'baton runs' lists the tasks with a run by short id; .agents/workspace/active/.short-ids.json is the registry";

function lookupShortId(repoRoot: string, key: string, length: number): ShortIdLookup {
  const activeRoot = stateDir(repoRoot, 'active');
  const emptyMessage = `short id '#${key}' not found; active task registry is empty.`;
  const cleanedMessage = `short id '#${key}' not found in active task registry (it may have been cleaned up after archival; ${SHORT_ID_CLEANED_HINT}).`;

  const registry = readShortIdRegistry(repoRoot, length);
  if (!registry.ok) return { ok: false, code: registry.code, message: registry.message ?? emptyMessage, taskId: registry.taskId };
  const { ids, keyOfTask } = registry;
  const taskId = Object.hasOwn(ids, key) ? (ids[key] as string) : undefined;
  if (taskId === undefined) {
    const message = Object.keys(ids).length === 0 ? emptyMessage : cleanedMessage;
    return { ok: false, code: 'SHORT_ID_NOT_FOUND', message, taskId: null };
  }
  if (!exists(taskFilePath(path.join(activeRoot, taskId)))) {
    // Same wording agent-infra uses: "empty" when no registered task is still active.
    const anyActive = [...keyOfTask.keys()].some((id) => exists(taskFilePath(path.join(activeRoot, id))));
    return { ok: false, code: 'SHORT_ID_STALE', message: anyActive ? cleanedMessage : emptyMessage, taskId };
  }
  return { ok: true, taskId };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Upstream's existence test (`fs.existsSync`): anything at the path, following symbolic links. A
 * directory named task.md "exists", so its task is found and reading task.md fails later with
 * ORCHESTRATION_TASK_READ_FAILED, as in agent-infra.
 */
function exists(file: string): boolean {
  try {
    fs.statSync(file);
    return true;
  } catch {
    return false;
  }
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

/**
 * A task exists at `taskMdPath` iff something is there (upstream's test) and neither it nor its directory resolves (through
 * symbolic links) to a place outside the workspace: a planted link must not let a reference escape it.
 */
function isContainedTask(workspaceReal: string | null, taskMdPath: string): boolean {
  if (workspaceReal === null || !exists(taskMdPath)) return false;
  try {
    // realpathSync.native: one realpath(3) call instead of an lstat per path component (resolving a
    // task ref is on every event's path; the JS version was ~45% of a worker's processing time).
    return (
      isInside(workspaceReal, fs.realpathSync.native(path.dirname(taskMdPath))) &&
      isInside(workspaceReal, fs.realpathSync.native(taskMdPath))
    );
  } catch {
    return false;
  }
}

function locateTask(repoRoot: string, taskId: string): { taskMdPath: string; state: TaskState } | null {
  const workspace = workspaceDir(repoRoot);
  let workspaceReal: string | null;
  try {
    workspaceReal = fs.realpathSync.native(workspace);
  } catch {
    workspaceReal = null;
  }
  for (const state of FLAT_TASK_STATES) {
    const candidate = taskFilePath(path.join(stateDir(repoRoot, state), taskId));
    if (isContainedTask(workspaceReal, candidate)) return { taskMdPath: candidate, state };
  }
  for (const day of archiveDayDirs(repoRoot)) {
    const candidate = taskFilePath(path.join(day, taskId));
    if (isContainedTask(workspaceReal, candidate)) return { taskMdPath: candidate, state: ARCHIVE_STATE };
  }
  return null;
}

/**
 * Resolve a full TASK id, a bare short id or `#N` to the task's directory. Every id that reaches the
 * filesystem has matched TASK_ID_PATTERN, so no reference can name a path outside the workspace.
 */
export function resolveTaskRef(ref: string, options: { repoRoot: string }): ResolvedTaskRef {
  if (typeof options?.repoRoot !== 'string' || options.repoRoot === '') {
    return failure('REPO_ROOT_NOT_FOUND', REPO_ROOT_NOT_FOUND_MESSAGE, null, null);
  }
  const repoRoot = path.resolve(options.repoRoot);
  const text = typeof ref === 'string' ? ref : String(ref);
  let taskId: string;
  if (TASK_ID_PATTERN.test(text)) {
    taskId = text;
  } else {
    const length = readShortIdLength(repoRoot);
    const normalized = normalizeShortId(text, length);
    if (normalized === null) {
      return failure(
        'INVALID_TASK_REF',
        `'${text}' is not a valid short id or TASK-id; expected bare digits, '#N', or 'TASK-YYYYMMDD-HHMMSS'`,
        repoRoot,
        null,
      );
    }
    if (!normalized.ok) return failure(normalized.code, normalized.message, repoRoot, null);
    const lookup = lookupShortId(repoRoot, normalized.key, length);
    if (!lookup.ok) return failure(lookup.code, lookup.message, repoRoot, lookup.taskId);
    taskId = lookup.taskId;
  }
  const located = locateTask(repoRoot, taskId);
  if (!located) {
    return failure('TASK_NOT_FOUND', `task ${taskId} not found in active / blocked / completed / archive`, repoRoot, taskId);
  }
  return Object.freeze({
    ok: true,
    repoRoot,
    taskId,
    taskDir: path.dirname(located.taskMdPath),
    taskMdPath: located.taskMdPath,
    state: located.state,
  });
}
