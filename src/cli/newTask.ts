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

// `baton new "<title>"` (docs/adopting.md "baton new"): a task in agent-infra's layout, ready for an
// agent to run through its lifecycle: `.agents/workspace/active/<TASK-id>/task.md` and its short id
// in the registry (the plan is core/newTask.ts). Prints the id, the short id and the sentence to
// give the agent. Bad input writes nothing.

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
    .option('--json', 'print the result as one line of JSON');
  const exit = parseCommand(program, argv, { redis: 'baton new only writes the task files; it does not use Redis' });
  if (exit !== null) return exit;
  const options = program.opts<{ id?: string; type?: TaskType; description?: string; repo?: string; json?: boolean }>();
  const root = lookupRepoRoot(options.repo);
  if (!root.ok) {
    process.stderr.write(
      `baton new: ${root.message}: run it inside your project's git repository, or pass --repo DIR. Nothing was written\n`,
    );
    return 1;
  }
  const planned = planNewTask(root.root, {
    title: program.args[0] ?? '',
    id: options.id,
    type: options.type,
    description: options.description,
    now: new Date(),
  });
  if (!planned.ok) {
    process.stderr.write(`baton new: ${planned.message}. Nothing was written\n`);
    return planned.kind === 'usage' ? 2 : 1;
  }
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
  const notes = notesFor(root.root);
  if (options.json) {
    printJson({
      taskId: task.taskId,
      shortId: task.shortId,
      taskFile: relativeTaskFile(root.root, task),
      tellTheAgent: agentSentence(task.shortId),
      notes,
    });
    return 0;
  }
  process.stdout.write(`created ${task.taskId} (short id ${task.shortId}): ${relativeTaskFile(root.root, task)}\n`);
  if (options.description === undefined)
    process.stdout.write('  describe the task in it (what, why, how to tell it is done) before the agent starts\n');
  process.stdout.write(`tell your agent:\n  ${agentSentence(task.shortId)}\n`);
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
