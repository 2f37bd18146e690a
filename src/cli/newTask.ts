import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { CLIENT_ADAPTERS } from '../clients/registry.ts';
import { writeFileAtomic } from '../base/atomicFile.ts';
import { TASK_TYPES, planNewTask, relativeTaskFile } from '../core/newTask.ts';
import type { TaskType } from '../core/newTask.ts';
import { WORKSPACE_PATH } from '../core/taskLayout.ts';
import { lookupRepoRoot, printJson } from './common.ts';
import { GITIGNORE_FILE, ignoresWorkspace } from '../install/gitignore.ts';
import { readText } from '../install/plan.ts';
import { installedBatonCommand } from '../install/uninstall.ts';
import { parseCommand } from './options.ts';
import { prepareWorktreeFiles } from '../install/worktree.ts';

// `baton new "<title>"` (docs/adopting.md "baton new"): a task in agent-infra's layout, ready for an
// agent to run through its lifecycle: `.agents/workspace/active/<TASK-id>/task.md` and its short id
// in the registry (the plan is core/newTask.ts). Prints the id, the short id and the sentence to
// give the agent. Bad input writes nothing. `--worktree [BRANCH]` first adds a linked worktree on a
// new branch beside the repository (`git worktree add -b`, the command a user would type: git's
// own worktree creation, which isomorphic-git does not implement, so this one option needs git on
// PATH) and makes the task there, in that worktree's own workspace (docs/architecture.md "Worktrees").

function taskType(value: string): TaskType {
  if (!(TASK_TYPES as readonly string[]).includes(value)) throw new InvalidArgumentError(`must be one of ${TASK_TYPES.join(', ')}`);
  return value as TaskType;
}

/** The sentence to give the agent (the orchestrator instructions take it from there). */
export function agentSentence(shortId: string): string {
  return `Run task ${shortId} through its lifecycle.`;
}

export async function run(argv: string[]): Promise<number> {
  const program = new Command('baton new')
    .description('Create a task (.agents/workspace/active/<TASK-id>/task.md and its short id) and print what to tell your agent.')
    .argument('<title>', 'what the task is, in a few words (quote it)')
    .option('--id <TASK-id>', 'the task id (default: TASK-<date>-<time> of now)')
    .option('--type <type>', `${TASK_TYPES.join(', ')} (default: feature)`, taskType)
    .option('--description <text>', 'what is asked, why, and how to tell it is done (else task.md says to write it)')
    .option('--repo <dir>', 'repository (default: the nearest ancestor of the working directory holding .git)')
    .option(
      '--worktree [branch]',
      'create the task in a new linked worktree <repo>-<branch> beside the repository, on a new branch (default: the task id); needs git',
    )
    .option('--json', 'print the result as one line of JSON');
  const exit = parseCommand(program, argv, { redis: 'baton new only writes the task files; it does not use Redis' });
  if (exit !== null) return exit;
  const options = program.opts<{
    id?: string;
    type?: TaskType;
    description?: string;
    repo?: string;
    worktree?: string | true;
    json?: boolean;
  }>();
  const found = lookupRepoRoot(options.repo);
  if (!found.ok) {
    process.stderr.write(
      `baton new: ${found.message}: run it inside your project's git repository, or pass --repo DIR. Nothing was written\n`,
    );
    return 1;
  }
  const request = { title: program.args[0] ?? '', id: options.id, type: options.type, description: options.description, now: new Date() };
  let planned = planNewTask(found.root, request);
  if (!planned.ok) {
    process.stderr.write(`baton new: ${planned.message}. Nothing was written\n`);
    return planned.kind === 'usage' ? 2 : 1;
  }
  let worktree: { dir: string; branch: string } | null = null;
  if (options.worktree !== undefined) {
    const branch = options.worktree === true ? planned.task.taskId : options.worktree;
    const added = addWorktree(found.root, branch);
    if (!added.ok) {
      process.stderr.write(`baton new: ${added.message}. Nothing was written\n`);
      return 1;
    }
    worktree = { dir: added.dir, branch };
    // The same task (id and time), planned in the new worktree's own workspace.
    planned = planNewTask(added.dir, { ...request, id: planned.task.taskId });
    if (!planned.ok) {
      process.stderr.write(`baton new: ${planned.message}; worktree ${added.dir} was added without a task\n`);
      return 1;
    }
  }
  const root = { root: worktree?.dir ?? found.root };
  const { task } = planned;
  fs.mkdirSync(path.dirname(task.taskDir), { recursive: true });
  try {
    fs.mkdirSync(task.taskDir); // not recursive: a directory made meanwhile is refused, not reused
    fs.writeFileSync(task.taskFile, task.taskText, { flag: 'wx' });
    writeFileAtomic(task.registryFile, task.registryText);
  } catch (error) {
    fs.rmSync(task.taskDir, { recursive: true, force: true });
    process.stderr.write(`baton new: cannot write ${task.taskId} (${(error as Error).message}). Nothing was written\n`);
    return 1;
  }
  // A new worktree checked out the committed files; Codex's sandbox roots need its own git directories.
  const prepared = worktree ? prepareWorktreeFiles(worktree.dir) : null;
  const notes = [...(prepared ? [prepared] : []), ...notesFor(root.root)];
  if (options.json) {
    printJson({
      taskId: task.taskId,
      shortId: task.shortId,
      taskFile: relativeTaskFile(root.root, task),
      tellTheAgent: agentSentence(task.shortId),
      ...(worktree ? { worktree: worktree.dir, branch: worktree.branch } : {}),
      notes,
    });
    return 0;
  }
  if (worktree) process.stdout.write(`created worktree ${worktree.dir} on a new branch ${worktree.branch}\n`);
  process.stdout.write(`created ${task.taskId} (short id ${task.shortId}): ${relativeTaskFile(root.root, task)}\n`);
  if (options.description === undefined)
    process.stdout.write('  describe the task in it (what, why, how to tell it is done) before the agent starts\n');
  const where = worktree ? ` (start it in ${worktree.dir})` : '';
  process.stdout.write(`tell your agent${where}:\n  ${agentSentence(task.shortId)}\n`);
  for (const note of notes) process.stdout.write(`note: ${note}\n`);
  return 0;
}

/** What still stands between this task and an agent running it. */
function notesFor(repoRoot: string): string[] {
  const notes: string[] = [];
  if (!ignoresWorkspace(readText(path.join(repoRoot, GITIGNORE_FILE), GITIGNORE_FILE))) {
    notes.push(`${WORKSPACE_PATH}/ is not in .gitignore, so the task files would be committed: 'baton init' adds it`);
  }
  if (!CLIENT_ADAPTERS.some((client) => installedBatonCommand(repoRoot, client) !== null)) {
    notes.push("no agent client is wired to baton here yet: run 'baton init' first");
  }
  return notes;
}

/** `git worktree add -b BRANCH <repo>-<branch>` beside the repository at `root`; the directory it made, or why not. */
function addWorktree(root: string, branch: string): { ok: true; dir: string } | { ok: false; message: string } {
  const dir = path.join(path.dirname(root), `${path.basename(root)}-${branch.replace(/[^A-Za-z0-9._-]+/g, '-')}`);
  if (fs.existsSync(dir)) return { ok: false, message: `${dir} exists already: pass another branch name (--worktree BRANCH)` };
  const run = spawnSync('git', ['worktree', 'add', '-q', '-b', branch, dir], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  if (run.error) return { ok: false, message: `--worktree runs 'git worktree add', and git could not be run (${run.error.message})` };
  if (run.status !== 0) return { ok: false, message: `git worktree add -b ${branch} ${dir} failed: ${run.stderr.trim()}` };
  return { ok: true, dir: fs.realpathSync(dir) };
}
