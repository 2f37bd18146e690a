import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { activeTaskDir, shortIdRegistryPath, taskFilePath, WORKSPACE_PATH } from '../../src/core/taskLayout.ts';
import { TASK_ID, taskMd } from './fixtures.ts';

// A real git repository for integration tests (git is the tests' tool; baton never runs it).

export const GIT_ENV = {
  GIT_AUTHOR_NAME: 'baton-test',
  GIT_AUTHOR_EMAIL: 'baton@test.invalid',
  GIT_COMMITTER_NAME: 'baton-test',
  GIT_COMMITTER_EMAIL: 'baton@test.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

export function git(cwd: string, args: readonly string[]): string {
  return execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' });
}

export type GitRepo = { root: string; taskDir: string; cleanup(): void };

function committedRepo(gitignore: string): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-git-')));
  git(root, ['init', '-q', '-b', 'main']);
  fs.writeFileSync(path.join(root, '.gitignore'), gitignore);
  fs.mkdirSync(path.join(root, 'src'));
  fs.writeFileSync(path.join(root, 'src', 'retry.ts'), 'export const retries = Infinity;\n');
  fs.writeFileSync(path.join(root, 'README.md'), '# demo\n');
  git(root, ['add', '-A']);
  git(root, ['commit', '-q', '-m', 'initial']);
  return root;
}

/**
 * A committed repository of a user's, as it is before baton: some code, a README, a .gitignore that
 * knows nothing of baton, no task (`taskDir` stays empty until one is made).
 */
export function freshGitRepo(): GitRepo {
  const root = committedRepo('node_modules/\n');
  return { root, taskDir: '', cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/** A committed repository with `.agents/workspace/` ignored and one active task. */
export function gitRepoWithTask(taskId: string = TASK_ID): GitRepo {
  const root = committedRepo(`${WORKSPACE_PATH}/\nnode_modules/\n`);
  return { root, taskDir: writeTask(root, taskId), cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/** Writes an active task into the checkout at `root` (short id `shortId`); returns its directory. */
export function writeTask(root: string, taskId: string = TASK_ID, shortId = '01'): string {
  const taskDir = activeTaskDir(root, taskId);
  fs.mkdirSync(taskDir, { recursive: true });
  fs.writeFileSync(taskFilePath(taskDir), taskMd(taskId));
  const registry = shortIdRegistryPath(root);
  const ids = fs.existsSync(registry) ? (JSON.parse(fs.readFileSync(registry, 'utf8')) as { ids: Record<string, string> }).ids : {};
  fs.writeFileSync(registry, `${JSON.stringify({ version: 1, ids: { ...ids, [shortId]: taskId } }, null, 2)}\n`);
  return taskDir;
}

/**
 * A linked worktree of `repo` (`git worktree add`) beside it, on a new branch `branch` (null: a
 * detached HEAD), with one active task of its own (its `.agents/workspace/` is its own, as upstream's).
 */
export function linkedWorktree(repo: GitRepo, name: string, branch: string | null = name, taskId: string = TASK_ID): GitRepo {
  const root = path.join(path.dirname(repo.root), `${path.basename(repo.root)}-${name}`);
  git(repo.root, ['worktree', 'add', '-q', ...(branch === null ? ['--detach'] : ['-b', branch]), root]);
  return {
    root,
    taskDir: writeTask(root, taskId),
    cleanup: () => {
      fs.rmSync(root, { recursive: true, force: true });
      if (fs.existsSync(repo.root)) git(repo.root, ['worktree', 'prune']);
    },
  };
}
