import { Command } from 'commander';
import { CLIENT_ADAPTERS, clientIdList } from '../clients/registry.ts';
import { WORKSPACE_PATH } from '../core/taskLayout.ts';
import { lookupRepoRoot } from './common.ts';
import { chosenClients } from './init.ts';
import { InstallError } from '../install/plan.ts';
import { readInitRecord, writeInitRecord } from '../install/record.ts';
import { applyUninstall, planUninstall } from '../install/uninstall.ts';
import type { UninstallChange } from '../install/uninstall.ts';
import { parseCommand } from './options.ts';

// `baton uninstall`: takes out of the project exactly what `baton init` put in (docs/adopting.md
// "Uninstall"; the plan is install/uninstall.ts). Files still as init left them get their text from
// before init back byte for byte; the task workspace (.agents/workspace/) is kept. A file of baton's
// that the user edited is refused unless --force, and then nothing at all is changed.

const VERB: Record<UninstallChange['outcome'], string> = { restored: 'restore', removed: 'remove', updated: 'update', refused: 'refuse' };

export async function run(argv: string[]): Promise<number> {
  const program = new Command('baton uninstall')
    .description(
      `Take out of this repository what baton init put in, for every client or the ones named: files still as init left them get their text from before init back, byte for byte; in files changed since, only baton's part goes. ${WORKSPACE_PATH}/ (your tasks) is kept.`,
    )
    .option('--repo <dir>', 'repository (default: the nearest ancestor of the working directory holding .git)')
    .option(
      '--client <id>',
      `${clientIdList([...CLIENT_ADAPTERS.map((client) => client.id), 'all'])} (default: all; repeat or separate with commas)`,
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--force', "also remove baton's files (profiles, stage guidance) that were edited since baton wrote them")
    .option('--dry-run', 'print what it would change, and change nothing');
  const exit = parseCommand(program, argv, { redis: 'baton uninstall only changes files; it does not use Redis' });
  if (exit !== null) return exit;
  const options = program.opts<{ repo?: string; client?: string[]; force?: boolean; dryRun?: boolean }>();
  const chosen = chosenClients(options.client);
  if ('error' in chosen) {
    process.stderr.write(`baton uninstall: ${chosen.error}\n`);
    return 2;
  }
  const root = lookupRepoRoot(options.repo);
  if (!root.ok) {
    process.stderr.write(`baton uninstall: ${root.message}; run it inside the project, or pass --repo DIR. Nothing was changed\n`);
    return 1;
  }
  let plan: Awaited<ReturnType<typeof planUninstall>>;
  let record: ReturnType<typeof readInitRecord>;
  try {
    record = readInitRecord(root.root);
    plan = await planUninstall(root.root, chosen.clients, record, { force: options.force === true });
  } catch (error) {
    if (!(error instanceof InstallError)) throw error;
    process.stderr.write(`baton uninstall: ${error.message}\n`);
    return 1;
  }
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const refused = plan.changes.filter((change) => change.outcome === 'refused');
  if (refused.length > 0 && options.dryRun !== true) {
    for (const change of refused) process.stderr.write(`baton uninstall: ${change.path}: ${change.reason}\n`);
    process.stderr.write('baton uninstall: nothing was changed\n');
    return 1;
  }
  const dryRun = options.dryRun === true;
  if (plan.changes.length === 0) {
    out(`baton uninstall: nothing of baton's init found in ${root.root}${record ? '' : ' (and no record of an init in this checkout)'}`);
    return 0;
  }
  out(
    `baton uninstall${dryRun ? ' --dry-run' : ''} in ${root.root} (${chosen.clients.map((client) => client.id).join(', ')})${dryRun ? ': nothing changed; it would' : ''}`,
  );
  for (const change of plan.changes)
    out(`  ${(dryRun ? VERB[change.outcome] : change.outcome).padEnd(9)} ${change.path}${change.reason ? `  (${change.reason})` : ''}`);
  if (!dryRun) {
    const dirs = applyUninstall(root.root, plan);
    // The outermost of the directories that went (their subdirectories went with them).
    const outermost = dirs.filter((dir) => !dirs.some((other) => other !== dir && dir.startsWith(`${other}/`)));
    if (outermost.length > 0) out(`  removed   the directories left empty: ${outermost.map((dir) => `${dir}/`).join(' ')}`);
    if (plan.remaining) writeInitRecord(root.root, plan.remaining);
  }
  if (!record)
    out(
      "note: this checkout has no record of baton init (a clone of a committed setup?): only baton's parts were taken out; formatting baton cannot know may differ from before init",
    );
  out(`kept: ${WORKSPACE_PATH}/ (your tasks and their runs)`);
  out(
    `left as it is, per-user state of the clients: ${chosen.clients.map((client) => `${client.displayName}: ${client.install.trust}`).join('; ')} (remove it in the client if you want)`,
  );
  return 0;
}
