import { Command } from 'commander';
import { CLIENT_ADAPTERS, clientAdapter, clientIdList } from '../clients/registry.ts';
import { lookupRepoRoot } from './common.ts';
import { parseCommand } from './options.ts';
import { commandNotice, installedCommand } from '../install/command.ts';
import { InstallError, applyInstall, planInstall } from '../install/plan.ts';
import { HOOK_TIMEOUT_SECONDS } from '../install/settings.ts';
import type { InstallPlan } from '../install/plan.ts';

// `baton install-hooks <client>`: wires one client to baton in one repository (docs/wiring.md), the
// lower-level command under `baton init` (which also writes the stage guidance and the .gitignore
// line, records what it changed for `baton uninstall`, and handles every client at once). The plan is
// install/plan.ts; what differs per client comes from its adapter (src/clients/<id>/).

export async function run(argv: string[]): Promise<number> {
  const extras = CLIENT_ADAPTERS.filter((client) => client.install.also).map(
    (client) => `for ${client.displayName} ${client.install.also}`,
  );
  const program = new Command('baton install-hooks')
    .description(
      `Wire an agent client to baton in this repository: hook entries in its settings (merged, never clobbered), the lifecycle subagent profiles, the orchestrator instructions${extras.length > 0 ? `, and ${extras.join(', ')}` : ''}.`,
    )
    .argument('<client>', clientIdList())
    .option('--repo <dir>', 'repository (default: the nearest ancestor of the working directory holding .git)')
    .option('--command <cmd>', "how the installed hooks and agents run baton (default: 'baton', found on PATH)")
    .option(
      '--no-instructions',
      `do not write the orchestrator instructions block (${clientIdList(CLIENT_ADAPTERS.map((client) => client.install.instructions.file))})`,
    );
  for (const client of CLIENT_ADAPTERS) {
    for (const option of client.install.options ?? []) program.option(option.flags, `${client.id}: ${option.description}`);
  }
  program
    .option(
      '--trust',
      `trust the workspace as the client's own trust prompt does: ${CLIENT_ADAPTERS.map((client) => `${client.id}, ${client.install.trust}`).join('; ')}`,
    )
    .option('--agent-infra-shim', "place an 'agent-infra-internal' that sends agent-infra's task-orchestration calls to 'baton task'");
  const exit = parseCommand(program, argv, {
    redis:
      'baton install-hooks only writes settings files; it does not use Redis (hooks find it through REDIS_URL, or the private redis-server of baton start)',
  });
  if (exit !== null) return exit;
  const client = clientAdapter(program.args[0] ?? '');
  if (!client) {
    process.stderr.write(`baton install-hooks: unknown client '${program.args[0]}'; expected ${clientIdList()}\n`);
    return 2;
  }
  const options = program.opts<{ repo?: string; command?: string; instructions: boolean; trust?: boolean; agentInfraShim?: boolean }>();
  const command = installedCommand(options.command);
  if ('error' in command) {
    process.stderr.write(`baton install-hooks: ${command.error}\n`);
    return 2;
  }
  const root = lookupRepoRoot(options.repo);
  if (!root.ok) {
    process.stderr.write(`baton install-hooks: ${root.message}\n`);
    return 1;
  }
  let plan: InstallPlan;
  try {
    plan = await planInstall(root.root, client, command.commandFor, {
      instructions: options.instructions,
      trust: options.trust === true,
      agentInfraShim: options.agentInfraShim === true,
      clientOptions: program.opts(),
    });
    applyInstall(root.root, plan);
  } catch (error) {
    if (!(error instanceof InstallError)) throw error;
    process.stderr.write(`baton install-hooks: ${error.message}\n`);
    return 1;
  }
  const events = client.install.hooks.map((spec) => spec.event).join(', ');
  process.stdout.write(`baton install-hooks ${client.id} in ${root.root}\n`);
  for (const file of plan.files) process.stdout.write(`  ${file.outcome.padEnd(9)} ${file.path}\n`);
  process.stdout.write(`hooks (${events}) run: ${plan.command}  [timeout ${HOOK_TIMEOUT_SECONDS} s]\n`);
  const notices = [commandNotice(command.command), ...plan.notices].filter((notice) => notice !== null);
  for (const notice of notices) process.stdout.write(`note: ${notice}\n`);
  for (const warning of plan.warnings) process.stderr.write(`baton install-hooks: warning: ${warning}\n`);
  return 0;
}
