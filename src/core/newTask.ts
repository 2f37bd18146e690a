// A new task in agent-infra's layout (docs/lifecycle.md §1–2), for `baton new`: its id, its task.md
// with the frontmatter the lifecycle reads (checked with the parser that reads it), and the short-id
// registry with the task added under the lowest free short id. Computed from what is on disk; the
// caller writes the two files (and nothing when this says no).
import path from 'node:path';
import { parseTypedTaskFrontmatter } from './frontmatter.ts';
import { activeTaskDir, shortIdRegistryPath, taskFilePath } from './taskLayout.ts';
import { TASK_ID_PATTERN, readShortIdLength, readShortIdRegistry, resolveTaskRef } from './taskRef.ts';

export const TASK_TYPES = ['feature', 'bugfix', 'refactor', 'docs', 'chore'] as const;
export type TaskType = (typeof TASK_TYPES)[number];

const WORKFLOW: Record<TaskType, string> = {
  feature: 'feature-development',
  bugfix: 'bug-fix',
  refactor: 'refactoring',
  docs: 'feature-development',
  chore: 'feature-development',
};

export const MAX_TITLE_LENGTH = 200;

export type NewTaskRequest = Readonly<{ title: string; id?: string; type?: TaskType; description?: string; now: Date }>;

export type NewTask = Readonly<{
  taskId: string;
  shortId: string;
  taskDir: string;
  taskFile: string;
  taskText: string;
  registryFile: string;
  registryText: string;
}>;

/** `usage`: the request itself is wrong (exit 2); `conflict`: the repository says no (exit 1). */
export type NewTaskOutcome = { ok: true; task: NewTask } | { ok: false; kind: 'usage' | 'conflict'; message: string };

const pad = (value: number) => String(value).padStart(2, '0');

/** `TASK-YYYYMMDD-HHMMSS` in local time. */
export function taskIdAt(date: Date): string {
  return `TASK-${date.getFullYear()}${pad(date.getMonth() + 1)}${pad(date.getDate())}-${pad(date.getHours())}${pad(date.getMinutes())}${pad(date.getSeconds())}`;
}

/** `YYYY-MM-DD HH:mm:ss±HH:MM` in local time (§2.1). */
export function frontmatterTime(date: Date): string {
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const zone = `${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}${zone}`;
}

function taskDocument(taskId: string, title: string, type: TaskType, description: string | undefined, now: Date): string {
  const time = frontmatterTime(now);
  const describe =
    description?.trim() ||
    'What is asked, why, and how to tell it is done: the analysis stage starts from this file. Write it here before an agent runs the task.';
  return `---
id: ${taskId}
title: ${JSON.stringify(title)}
type: ${type}
workflow: ${WORKFLOW[type]}
status: active
created_at: ${time}
updated_at: ${time}
current_step: requirement-analysis
---

# ${title}

## Description

${describe}

## Activity Log

- ${time} — **Created** with \`baton new\`
`;
}

function taskExists(repoRoot: string, taskId: string): string | null {
  const found = resolveTaskRef(taskId, { repoRoot });
  return found.ok ? found.state : null;
}

/** The task `request` asks for in the repository at `repoRoot`, or why there is none. */
export function planNewTask(repoRoot: string, request: NewTaskRequest): NewTaskOutcome {
  const title = request.title.trim();
  if (title === '')
    return {
      ok: false,
      kind: 'usage',
      message: 'the title is empty: say in a few words what the task is, e.g. baton new "Bound the retry budget"',
    };
  if (/[\r\n\u2028\u2029]/.test(title))
    return { ok: false, kind: 'usage', message: 'the title must be one line (put the details in --description)' };
  if (title.length > MAX_TITLE_LENGTH)
    return {
      ok: false,
      kind: 'usage',
      message: `the title is longer than ${MAX_TITLE_LENGTH} characters (put the details in --description)`,
    };
  if (request.id !== undefined && !TASK_ID_PATTERN.test(request.id)) {
    return { ok: false, kind: 'usage', message: `--id '${request.id}' is not a task id; expected TASK-YYYYMMDD-HHMMSS` };
  }
  let taskId = request.id ?? taskIdAt(request.now);
  const existing = taskExists(repoRoot, taskId);
  if (existing !== null) {
    if (request.id !== undefined)
      return { ok: false, kind: 'conflict', message: `task ${taskId} exists already (in ${existing}); choose another --id` };
    // Two tasks made in the same second: the next free second.
    let at = request.now.getTime();
    while (taskExists(repoRoot, taskId) !== null) {
      at += 1000;
      taskId = taskIdAt(new Date(at));
    }
  }
  const length = readShortIdLength(repoRoot);
  const registry = readShortIdRegistry(repoRoot, length);
  if (!registry.ok && registry.code !== 'SHORT_ID_REGISTRY_NOT_FOUND') {
    return { ok: false, kind: 'conflict', message: `${registry.message} (${registry.code}); fix or remove it first` };
  }
  const ids: Record<string, unknown> = registry.ok ? registry.ids : {};
  const max = 10 ** length - 1;
  let value = 1;
  while (value <= max && Object.hasOwn(ids, String(value).padStart(length, '0'))) value += 1;
  if (value > max) {
    return {
      ok: false,
      kind: 'conflict',
      message: `every short id of ${length} digits is taken (max=${max}); archive tasks or raise task.shortIdLength in .agents/.airc.json`,
    };
  }
  const shortId = String(value).padStart(length, '0');
  const taskDir = activeTaskDir(repoRoot, taskId);
  const taskText = taskDocument(taskId, title, request.type ?? 'feature', request.description, request.now);
  // What the lifecycle will read: it must parse, and say what was asked.
  const frontmatter = parseTypedTaskFrontmatter(taskText);
  if (frontmatter.id !== taskId || frontmatter.title !== title) throw new Error(`task.md of ${taskId} does not read back as written`);
  // Registry entries as they are, in their order, the new one last (JSON keeps a `__proto__` key as data).
  const entries = [...Object.entries(ids), [shortId, taskId]].map(([key, id]) => `    ${JSON.stringify(key)}: ${JSON.stringify(id)}`);
  const registryText = `{\n  "version": 1,\n  "ids": {\n${entries.join(',\n')}\n  }\n}\n`;
  return {
    ok: true,
    task: {
      taskId,
      shortId,
      taskDir,
      taskFile: taskFilePath(taskDir),
      taskText,
      registryFile: shortIdRegistryPath(repoRoot),
      registryText,
    },
  };
}

/** The task file, repo-relative in POSIX form (for messages). */
export function relativeTaskFile(repoRoot: string, task: NewTask): string {
  return path.relative(repoRoot, task.taskFile).split(path.sep).join('/');
}
