// `baton fingerprint`: the workspace fingerprint a receipt would record, or the paths changed
// between two fingerprints. For users checking receipts, and for benchmarks.
import fs from 'node:fs';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { findRepoRoot } from '../core/repoRoot.ts';
import { createFingerprinter } from '../fingerprint/index.ts';
import { acceptUnusedOptions, warnUnusedOptions } from './options.ts';
import type { UnusedOptions } from './options.ts';

// One line per paragraph: commander wraps them to the terminal.
const DESCRIPTION = [
  "Print the workspace fingerprint: the git tree id of the work tree with .gitignore applied and .agents/workspace/active force-included (what 'git read-tree HEAD && git add -A && git add -f .agents/workspace/active && git write-tree' gives on a temporary index), computed without git.",
  "With --diff A B, print the repo-relative paths that differ between two fingerprints, one per line (what 'git diff --name-only --no-renames A B' lists).",
].join('\n\n');

type Options = { repo?: string; json?: boolean; diff?: boolean; stats?: boolean };

const UNUSED: UnusedOptions = { redis: 'baton fingerprint reads the work tree and .git only; it does not use Redis' };

export async function run(argv: string[]): Promise<number> {
  let stdout = '';
  let stderr = '';
  const program = new Command('baton fingerprint')
    .description(DESCRIPTION)
    .argument('[fingerprints...]', 'with --diff: the two fingerprints to compare (before, after)')
    .option('--repo <dir>', 'repository (default: the nearest ancestor of the working directory holding .git)')
    .option('--diff', 'list the paths changed between two fingerprints')
    .option('--json', 'print JSON for machines')
    .option('--stats', 'with --json: include capture counters (files hashed, taken from the index, …)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => {
        stdout += s;
      },
      writeErr: (s) => {
        stderr += s;
      },
    });

  acceptUnusedOptions(program, UNUSED);
  let parsed: { options: Options; args: string[] };
  try {
    program.parse(argv, { from: 'user' });
    parsed = { options: program.opts<Options>(), args: program.args };
  } catch (error) {
    process.stdout.write(stdout);
    process.stderr.write(stderr);
    if (error instanceof CommanderError) return error.code === 'commander.helpDisplayed' || error.exitCode === 0 ? 0 : 1;
    throw error;
  }

  warnUnusedOptions(program, UNUSED);
  const { options, args } = parsed;
  const fail = (message: string): number => {
    process.stderr.write(`baton fingerprint: ${message}\n`);
    return 1;
  };

  if (options.diff) {
    if (args.length !== 2) return fail(`--diff needs exactly two fingerprints (before, after), got ${args.length}`);
  } else if (args.length > 0) {
    return fail(`unexpected argument '${args[0]}' (did you mean --diff A B?)`);
  }

  const start = options.repo !== undefined ? path.resolve(options.repo) : process.cwd();
  if (options.repo !== undefined && !fs.existsSync(start)) return fail(`--repo ${start}: no such directory`);
  const root = findRepoRoot(start);
  if (root === null) return fail(`not a git repository (or any parent up to /): ${start}`);

  // One capture per process: nothing to remember for a next one.
  const fingerprinter = createFingerprinter({ remember: false });
  try {
    if (options.diff) {
      const [before, after] = args as [string, string];
      const paths = await fingerprinter.diff(root, before, after);
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ repo: root, before, after, changedPaths: paths })}\n`);
      } else if (paths.length > 0) {
        process.stdout.write(`${paths.join('\n')}\n`);
      }
      return 0;
    }
    const { fingerprint, stats } = await fingerprinter.captureWithStats(root);
    if (options.json) {
      process.stdout.write(`${JSON.stringify(options.stats ? { repo: root, fingerprint, stats } : { repo: root, fingerprint })}\n`);
    } else {
      process.stdout.write(`${fingerprint}\n`);
    }
    return 0;
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
}
