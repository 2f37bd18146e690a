// `baton fingerprint`: the workspace fingerprint a receipt would record, or the paths changed
// between two fingerprints. For users checking receipts, and for benchmarks.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT_NOT_FOUND_MESSAGE, findRepoRoot } from '../base/repoRoot.ts';
import { createFingerprinter } from '../fingerprint/index.ts';
import { unusedOptionWarning } from './common.ts';

// Arguments are parsed with node:util's parseArgs (Node, Bun and Deno have it), not commander like
// the other commands: `baton fingerprint` has its own lean bundle (dist/fingerprint.mjs, see
// scripts/build.mjs) because its cold run is measured against git (bench/fingerprint.mjs,
// docs/architecture.md "Performance"), and loading commander costs ~10 ms of it. The help text is
// written out below in commander's layout.

const REDIS_IGNORED = 'baton fingerprint reads the work tree and .git only; it does not use Redis';

const HELP = `Usage: baton fingerprint [options] [fingerprints...]

Print the workspace fingerprint: the git tree id of the work tree with .gitignore applied and
.agents/workspace/active force-included (what 'git read-tree HEAD && git add -A && git add -f
.agents/workspace/active && git write-tree' gives on a temporary index), computed without git.

With --diff A B, print the repo-relative paths that differ between two fingerprints, one per line
(what 'git diff --name-only --no-renames A B' lists).

Arguments:
  fingerprints   with --diff: the two fingerprints to compare (before, after)

Options:
  --repo <dir>   repository (default: the nearest ancestor of the working directory
                 holding .git)
  --diff         list the paths changed between two fingerprints
  --json         print JSON for machines
  --stats        with --json: include capture counters (files hashed, taken from the index, …)
  --redis <url>  accepted and ignored: ${REDIS_IGNORED}
  -h, --help     display help for command
`;

const OPTIONS = {
  repo: { type: 'string' },
  diff: { type: 'boolean' },
  json: { type: 'boolean' },
  stats: { type: 'boolean' },
  redis: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Options = { repo?: string; json?: boolean; diff?: boolean; stats?: boolean; redis?: string; help?: boolean };

/** What is wrong with the arguments parseArgs refused: "unknown option '--x'", else its own message. */
function argumentError(argv: string[], error: unknown): string {
  const { tokens } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: false, tokens: true });
  const unknown = tokens.find((token) => token.kind === 'option' && !Object.hasOwn(OPTIONS, token.name));
  if (unknown?.kind === 'option') return `unknown option '${unknown.rawName}'`;
  const message = error instanceof Error ? error.message : String(error);
  return `${message.charAt(0).toLowerCase()}${message.slice(1)}`;
}

export async function run(argv: string[]): Promise<number> {
  // Exit 1 when it cannot (no repository, an unknown fingerprint), 2 when the command line is wrong
  // (docs/usage.md "Exit codes").
  const fail = (message: string, code = 1): number => {
    process.stderr.write(`baton fingerprint: ${message}\n`);
    return code;
  };
  const usage = (message: string): number => fail(message, 2);
  let parsed: { options: Options; args: string[] };
  try {
    const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
    parsed = { options: values as Options, args: positionals };
  } catch (error) {
    return usage(`${argumentError(argv, error)} (see baton fingerprint --help)`);
  }
  if (parsed.options.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (parsed.options.redis !== undefined) process.stderr.write(unusedOptionWarning('baton fingerprint', 'redis', REDIS_IGNORED));

  const { options, args } = parsed;

  if (options.diff) {
    if (args.length !== 2) return usage(`--diff needs exactly two fingerprints (before, after), got ${args.length}`);
  } else if (args.length > 0) {
    return usage(`unexpected argument '${args[0]}' (did you mean --diff A B?)`);
  }

  const start = options.repo !== undefined ? path.resolve(options.repo) : process.cwd();
  if (options.repo !== undefined && !fs.existsSync(start)) return fail(`--repo ${start}: no such directory`);
  const root = findRepoRoot(start);
  if (root === null) return fail(`${REPO_ROOT_NOT_FOUND_MESSAGE} (${start})`);

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
