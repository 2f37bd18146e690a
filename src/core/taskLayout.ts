// The task workspace layout of agent-infra (docs/lifecycle.md §1), spelled out once:
//
//   <repo>/.agents/.airc.json                              configuration (task.shortIdLength)
//   <repo>/.agents/workspace/active/.short-ids.json        short id → TASK id registry
//   <repo>/.agents/workspace/{active,blocked,completed}/<TASK-id>/task.md
//   <repo>/.agents/workspace/archive/YYYY/MM/DD/<TASK-id>/task.md   (the completion date)
//
// Paths, the walk of the archive and the `RunFiles` seam that reads the tree: no file is written here.
import fs from 'node:fs';
import path from 'node:path';
import type { TaskState } from './types.ts';

/** agent-infra's directory in a repository, repo-relative. */
export const AGENTS_PATH = '.agents';
/** The workspace, repo-relative in POSIX form (what .gitignore and git pathspecs name). */
export const WORKSPACE_PATH = `${AGENTS_PATH}/workspace`;
/** The active tasks, repo-relative in POSIX form: force-included in fingerprints like `git add -f`. */
export const ACTIVE_TASKS_PATH = `${WORKSPACE_PATH}/active`;
/** The repository's agent-infra configuration, repo-relative. */
export const CONFIG_PATH = `${AGENTS_PATH}/.airc.json`;

/** States whose tasks sit directly in `<workspace>/<state>/<TASK-id>`, in lookup order. */
export const FLAT_TASK_STATES = ['active', 'blocked', 'completed'] as const satisfies readonly TaskState[];
/** Archived tasks sit under `<workspace>/archive/YYYY/MM/DD/<TASK-id>`. */
export const ARCHIVE_STATE = 'archive' satisfies TaskState;

export const TASK_FILE_NAME = 'task.md';
/** The orchestration run of a task, next to its task.md (read and written by runStore.ts). */
export const RUN_FILE_NAME = 'orchestration.json';
export const SHORT_ID_REGISTRY_NAME = '.short-ids.json';

/** Whether a repo-relative POSIX path is the run file of an active task (`.agents/workspace/active/<task>/orchestration.json`). */
export function isActiveRunFilePath(relative: string): boolean {
  const prefix = `${ACTIVE_TASKS_PATH}/`;
  if (!relative.startsWith(prefix)) return false;
  const [taskDir, file, ...rest] = relative.slice(prefix.length).split('/');
  return taskDir !== undefined && taskDir !== '' && file === RUN_FILE_NAME && rest.length === 0;
}

export function workspaceDir(repoRoot: string): string {
  return path.join(repoRoot, ...WORKSPACE_PATH.split('/'));
}

/** `<workspace>/<state>` for a flat state, `<workspace>/archive` for the archive. */
export function stateDir(repoRoot: string, state: TaskState): string {
  return path.join(workspaceDir(repoRoot), state);
}

export function activeTaskDir(repoRoot: string, taskId: string): string {
  return path.join(stateDir(repoRoot, 'active'), taskId);
}

export function taskFilePath(taskDir: string): string {
  return path.join(taskDir, TASK_FILE_NAME);
}

export function runFilePath(taskDir: string): string {
  return path.join(taskDir, RUN_FILE_NAME);
}

export function shortIdRegistryPath(repoRoot: string): string {
  return path.join(stateDir(repoRoot, 'active'), SHORT_ID_REGISTRY_NAME);
}

export function configPath(repoRoot: string): string {
  return path.join(repoRoot, ...CONFIG_PATH.split('/'));
}

/**
 * The file access that reading the task tree needs; `nodeRunFiles` reads the local disk. The run
 * listing and the short-id registry reader take it, so they can be fed from anything that holds the
 * task tree.
 */
export type RunFiles = Readonly<{
  /** Names of the directories directly inside `dir`, sorted (none when it does not exist). */
  subdirs(dir: string): string[];
  /** A file's text, or null when it does not exist. */
  readText(file: string): string | null;
}>;

export const nodeRunFiles: RunFiles = {
  subdirs(dir) {
    try {
      return fs
        .readdirSync(dir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort();
    } catch {
      return [];
    }
  },
  readText(file) {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
      throw error;
    }
  },
};

/**
 * `nodeRunFiles` that stays inside the repository: a file or directory whose real path (after every
 * symbolic link on the way) lies outside `repoRoot` is not read. What the run listing and the run
 * page read, they show to whoever may open the dashboard; a `task.md` linked to a file elsewhere on
 * the machine must not put that file's first heading there. A file that leads outside throws (the
 * listing then shows no title, or the run as unreadable); a directory that does lists nothing.
 */
export function repositoryRunFiles(repoRoot: string): RunFiles {
  let realRoot: string | null = null;
  /** true inside, false outside, null when there is nothing there. */
  const inside = (file: string): boolean | null => {
    let real: string;
    try {
      realRoot ??= fs.realpathSync(repoRoot);
      real = fs.realpathSync(file);
    } catch {
      return null;
    }
    return real === realRoot || real.startsWith(`${realRoot}${path.sep}`);
  };
  return {
    subdirs: (dir) => (inside(dir) ? nodeRunFiles.subdirs(dir) : []),
    readText(file) {
      if (inside(file) === false)
        throw new Error(`${path.relative(repoRoot, file)} leads outside the repository (a symbolic link); not read`);
      return nodeRunFiles.readText(file);
    },
  };
}

/**
 * The active task directories, sorted by task id: the one walk over active runs (the engine's scans
 * of pending delegations and later turns, the hook's look at the pending receipt).
 */
export function activeTaskDirs(repoRoot: string, files: Pick<RunFiles, 'subdirs'> = nodeRunFiles): { taskId: string; dir: string }[] {
  const active = stateDir(repoRoot, 'active');
  return files.subdirs(active).map((taskId) => ({ taskId, dir: path.join(active, taskId) }));
}

/** Every name in `dir` (files too: the lookup follows upstream's `readdirSync`); none when unreadable. */
function entryNames(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * The archive's day directories (`archive/YYYY/MM/DD`), newest first. Archive dates are completion
 * dates, not id dates, so finding a task means walking them. `names` lists a directory (task lookup
 * takes every entry name, the run listing only directories).
 */
export function archiveDayDirs(repoRoot: string, names: (dir: string) => string[] = entryNames): string[] {
  const dated = (dir: string, width: number) => {
    const pattern = new RegExp(`^\\d{${width}}$`);
    return names(dir)
      .filter((name) => pattern.test(name))
      .sort()
      .reverse();
  };
  const archive = stateDir(repoRoot, ARCHIVE_STATE);
  const days: string[] = [];
  for (const year of dated(archive, 4)) {
    for (const month of dated(path.join(archive, year), 2)) {
      for (const day of dated(path.join(archive, year, month), 2)) days.push(path.join(archive, year, month, day));
    }
  }
  return days;
}
