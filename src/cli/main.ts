// Entry point of the `baton` command. Each command lives in its own module and is imported only
// when it runs, so hooks (which start for every agent event) load nothing they do not use.
import { CLIENT_IDS } from '../clients/registry.ts';
import { exitWith } from './exit.ts';

type CommandModule = { run(argv: string[]): Promise<number> };

const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  task: () => import('./taskCommand.ts'),
  hook: () => import('./hook.ts'),
  worker: () => import('./worker.ts'),
  fingerprint: () => import('./fingerprint.ts'),
  dashboard: () => import('./dashboard.ts'),
  runs: () => import('./runs.ts'),
  cost: () => import('./cost.ts'),
  'install-hooks': () => import('./installHooks.ts'),
  init: () => import('./init.ts'),
  uninstall: () => import('./uninstall.ts'),
  new: () => import('./newTask.ts'),
  doctor: () => import('./doctor.ts'),
  demo: () => import('./demo.ts'),
  start: () => import('./start.ts'),
};

/** A usage line: the command and its arguments, then what it does from column 52. */
const line = (synopsis: string, what: string) => `  ${synopsis.padEnd(49)} ${what}`;
const clients = `<${CLIENT_IDS.join('|')}>`;

const USAGE = `Usage: baton <command> [options]

Commands:
${line(`init [--client ${CLIENT_IDS.join('|')}|all] [--dry-run]`, 'set this repository up: hooks, profiles, stage guidance')}
${line('new "<title>" [--id TASK-…]', 'create a task; prints what to tell your agent')}
${line('doctor [--json]', 'check Redis, the worker, hooks, trust and the spool')}
${line('uninstall [--client …] [--dry-run] [--force]', 'take out what init put in')}
  task <task-ref|auto> <intent> [--flag value]...   apply a lifecycle intent
${line(`hook ${clients} [--event NAME]`, 'native hook: payload on stdin')}
  worker [--repo DIR]... [--discover --allow-root DIR]... [--dashboard]   serve repository queues
  fingerprint [--diff A B]                          workspace fingerprint, or paths changed between two
  start [--repo DIR] [--port N] [--host H]          worker + dashboard for this repository;
                                                    starts a private redis-server when none answers
  dashboard [--port N] [--host H] [--token T]       queue dashboard over every repository in Redis
  runs [--json] [--watch]                           every run of the repository, one line each
  cost [<task>] [--json]                            what a run cost: tokens, models, time per stage and role
${line(`install-hooks ${clients}`, 'wire one client (the part of init that writes its hooks)')}
  demo [--keep-open]                                a complete lifecycle in a temporary repository

Options: --repo DIR, --redis URL and -h, --help work with every command; a command that has no
use for --repo or --redis accepts it and warns that it ignores it. -V, --version prints the version.

Run 'baton <command> --help' for a command's options.
`;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-V') {
    const { batonVersion } = await import('../base/batonPackage.ts');
    process.stdout.write(`baton ${batonVersion()}\n`);
    return 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    const { unknownCommandMessage } = await import('./options.ts');
    process.stderr.write(`baton: ${unknownCommandMessage(name, Object.keys(COMMANDS))}\n\n${USAGE}`);
    return 2;
  }
  const command = await load();
  return command.run(rest);
}

exitWith(main(process.argv.slice(2)));
