import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import type { InstallClient } from '../clients/installer.ts';
import type { PlannedFile } from '../clients/installer.ts';
import { CLIENT_ADAPTERS, clientAdapter, clientIdList } from '../clients/registry.ts';
import { lookupRepoRoot } from './common.ts';
import { commandNotice, installedCommand } from '../install/command.ts';
import { GITIGNORE_FILE, ignoredBy, withGitignoreLine } from '../install/gitignore.ts';
import { InstallError, applyInstall, planFile, planInstall, readText } from '../install/plan.ts';
import type { InstallPlan } from '../install/plan.ts';
import { directoriesCreated, readInitRecord, recordInit, writeInitRecord } from '../install/record.ts';
import type { InitFile } from '../install/record.ts';
import { originalOf } from '../install/uninstall.ts';
import { parseCommand } from './options.ts';
import { DEFAULT_PROFILE, PROFILE_NAMES, parseProfileName } from '../core/profile.ts';
import type { ProfileName } from '../core/profile.ts';
import { PROFILE_FILE, profileFile, profileRecordText, readRepositoryProfile, recordFields } from '../core/profiles/file.ts';
import { writeFileAtomic } from '../base/atomicFile.ts';

// `baton init`: sets a project up for baton (docs/adopting.md): for each chosen client what
// `baton install-hooks` writes (hooks, profiles, orchestrator instructions, its own files), baton's
// stage guidance where the client reads skills, and the .gitignore line that keeps the task
// workspace out of git. Every file runs `baton` (or --command), never a path of this machine. It
// computes everything first (--dry-run prints that and stops), writes nothing when a file cannot be
// read, and records what it changed for `baton uninstall` (install/record.ts).

/** `--client all` (the default), one id, or several (repeated or comma-separated). */
export function chosenClients(values: readonly string[] | undefined): { clients: InstallClient[] } | { error: string } {
  const ids = (values ?? ['all'])
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter(Boolean);
  if (ids.length === 0 || ids.includes('all')) return { clients: [...CLIENT_ADAPTERS] };
  const unknown = ids.find((id) => !clientAdapter(id));
  if (unknown !== undefined)
    return { error: `unknown client '${unknown}'; expected ${clientIdList([...CLIENT_ADAPTERS.map((client) => client.id), 'all'])}` };
  return { clients: CLIENT_ADAPTERS.filter((client) => ids.includes(client.id)) };
}

function addClientOptions(program: Command): Command {
  for (const client of CLIENT_ADAPTERS) {
    for (const option of client.install.options ?? []) program.option(option.flags, `${client.id}: ${option.description}`);
  }
  return program;
}

const VERB = { created: 'create', updated: 'update', unchanged: 'keep', kept: 'keep' } as const;

function fileLine(file: PlannedFile, dryRun: boolean): string {
  const outcome = dryRun ? VERB[file.outcome] : file.outcome;
  const where = path.isAbsolute(file.path) ? `${file.path}  (per-user state of the client, outside the project)` : file.path;
  const why = file.outcome === 'kept' ? '  (baton wrote it, you edited it: kept as it is)' : '';
  return `  ${outcome.padEnd(9)} ${where}${why}`;
}

export async function run(argv: string[]): Promise<number> {
  const program = addClientOptions(
    new Command('baton init')
      .description(
        "Set this repository up for baton: the hooks, subagent profiles and orchestrator instructions of each agent client, baton's stage guidance (where agent-infra's own skills are not installed), and `.agents/workspace/` in .gitignore. Prints what it changed and what to commit; baton uninstall takes it out again.",
      )
      .option('--repo <dir>', 'repository (default: the nearest ancestor of the working directory holding .git)')
      .option(
        '--client <id>',
        `${clientIdList([...CLIENT_ADAPTERS.map((client) => client.id), 'all'])} (default: all; repeat or separate with commas)`,
        (value: string, previous: string[] = []) => [...previous, value],
      )
      .option('--command <cmd>', "how the installed hooks and agents run baton (default: 'baton', found on PATH)"),
  )
    .option(
      '--trust',
      `also record the trust each client's own prompt would (per-user state: ${CLIENT_ADAPTERS.map((client) => `${client.id}, ${client.install.trust}`).join('; ')})`,
    )
    .option(
      '--profile <name>',
      `the lifecycle profile of this repository, ${PROFILE_NAMES.join(' or ')}, recorded in ${PROFILE_FILE} (docs/adopting.md "Choosing a profile") (default: ${DEFAULT_PROFILE})`,
    )
    .option('--dry-run', 'print what it would change, and write nothing');
  const exit = parseCommand(program, argv, { redis: 'baton init only writes files; it does not use Redis' });
  if (exit !== null) return exit;
  const options = program.opts<{
    repo?: string;
    client?: string[];
    command?: string;
    trust?: boolean;
    dryRun?: boolean;
    profile?: string;
  }>();
  let profile: ProfileName | null = null;
  if (options.profile !== undefined) {
    const parsed = parseProfileName(options.profile, '--profile');
    if (!parsed.ok) return usage(`${parsed.code}: ${parsed.message}`);
    profile = parsed.name;
  }
  const chosen = chosenClients(options.client);
  if ('error' in chosen) return usage(chosen.error);
  const command = installedCommand(options.command);
  if ('error' in command) return usage(command.error);
  const root = lookupRepoRoot(options.repo);
  if (!root.ok) {
    process.stderr.write(
      `baton init: ${root.message}: run it inside your project's git repository (git init first), or pass --repo DIR. Nothing was written\n`,
    );
    return 1;
  }
  const trustCommand = `baton init${options.client ? ` --client ${chosen.clients.map((client) => client.id).join(',')}` : ''} --trust`;
  const plans: Array<{ client: InstallClient; plan: InstallPlan }> = [];
  const files: InitFile[] = [];
  let gitignore: PlannedFile;
  let record: ReturnType<typeof readInitRecord>;
  try {
    record = readInitRecord(root.root);
    for (const client of chosen.clients) {
      const plan = await planInstall(root.root, client, command.commandFor, {
        guidance: true,
        trust: options.trust === true,
        trustCommand,
        writtenBy: 'baton init',
        clientOptions: program.opts(),
      });
      plans.push({ client, plan });
    }
    gitignore = planFile(
      root.root,
      GITIGNORE_FILE,
      withGitignoreLine(readText(path.join(root.root, GITIGNORE_FILE), GITIGNORE_FILE)),
      'gitignore',
    );
    for (const { client, plan } of plans)
      for (const file of plan.files) files.push({ file, client: client.id, original: await originalOf(root.root, file, client) });
    files.push({ file: gitignore, client: null, original: await originalOf(root.root, gitignore, null) });
  } catch (error) {
    if (!(error instanceof InstallError)) throw error;
    process.stderr.write(`baton init: ${(error as Error).message}\n`);
    return 1;
  }
  const clash = files.find(({ file }, index) => files.findIndex((other) => other.file.path === file.path) !== index);
  if (clash) {
    process.stderr.write(
      `baton init: two clients would write ${clash.file.path}; run it for one client at a time (--client). Nothing was written\n`,
    );
    return 1;
  }
  const dryRun = options.dryRun === true;
  const created = directoriesCreated(
    root.root,
    files.map(({ file }) => file),
  );
  if (!dryRun) {
    // The record first: should a write fail half-way, uninstall still knows what init meant to change.
    writeInitRecord(root.root, recordInit(record, command.command, files, created));
    for (const { plan } of plans) applyInstall(root.root, plan);
    applyInstall(root.root, { files: [gitignore] });
    if (profile !== null) {
      fs.mkdirSync(path.dirname(profileFile(root.root)), { recursive: true });
      // The repository's policies beside the profile (reviewerVendor) are kept.
      writeFileAtomic(profileFile(root.root), profileRecordText(profile, recordFields(root.root)));
    }
  }
  report(root.root, plans, files, command.command, dryRun);
  reportProfile(root.root, profile, dryRun);
  return 0;
}

/** The profile line: the one chosen (and its file to commit), else the one the repository records. */
function reportProfile(root: string, chosen: ProfileName | null, dryRun: boolean): void {
  if (chosen !== null) {
    process.stdout.write(
      `profile: ${chosen}${dryRun ? ' (would be recorded' : ' (recorded'} in ${PROFILE_FILE}; commit it so that every worker and CLI of the repository uses it)\n`,
    );
    return;
  }
  let recorded: string;
  try {
    recorded = readRepositoryProfile(root);
  } catch (error) {
    recorded = `unreadable: ${(error as Error).message}`;
  }
  process.stdout.write(`profile: ${recorded} (baton init --profile <name> chooses another)\n`);
}

function usage(message: string): number {
  process.stderr.write(`baton init: ${message}\n`);
  return 2;
}

function report(
  root: string,
  plans: ReadonlyArray<{ client: InstallClient; plan: InstallPlan }>,
  files: readonly InitFile[],
  command: string,
  dryRun: boolean,
): void {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(
    `baton init${dryRun ? ' --dry-run' : ''} in ${root} (${plans.map(({ client }) => client.id).join(', ')}; the files run '${command}')${dryRun ? ': nothing written; it would' : ''}`,
  );
  for (const { file } of files) out(fileLine(file, dryRun));
  for (const { client, plan } of plans) {
    if (plan.guidance.state === 'agent-infra') {
      out(
        `${client.displayName}: agent-infra's own skills are installed here (${plan.guidance.foreign.join(', ')}): they stay in charge of the stages, and baton writes no stage guidance for ${client.displayName}`,
      );
    } else if (plan.guidance.state === 'none') {
      out(
        `${client.displayName}: baton has no stage guidance for this client (it reads no project skills); its subagents run the requested skill as they know it`,
      );
    }
  }
  const commit = files.filter(({ file }) => !path.isAbsolute(file.path) && file.part !== 'shim').map(({ file }) => file.path);
  out(`commit: ${commit.join(' ')}`);
  out("  (they name no path of this machine; per-user state such as client trust stays in each user's own client files)");
  const gitignore = files.find(({ file }) => file.part === 'gitignore')!.file.content;
  const ignored = commit.filter((file) => file !== GITIGNORE_FILE && ignoredBy(gitignore, file));
  if (ignored.length > 0)
    out(`note: .gitignore ignores ${ignored.join(' ')}: git add -f them, or stop ignoring them, so that your teammates get them`);
  const notices = [commandNotice(command), ...plans.flatMap(({ plan }) => plan.notices)].filter((notice) => notice !== null);
  for (const notice of notices) out(`note: ${notice}`);
  for (const { plan } of plans) for (const warning of plan.warnings) process.stderr.write(`baton init: warning: ${warning}\n`);
  if (dryRun) return;
  out('next:');
  out('  baton start                  in this repository, and keep it running: a worker and its dashboard');
  out('  baton new "<what to do>"     creates a task and prints the sentence to give your agent');
  out("  baton doctor                 checks Redis, the worker, the hooks and the clients' trust");
}
