import fs from 'node:fs';
import path from 'node:path';
import { shellQuote } from '../base/shellQuote.ts';
import { batonPackageDir } from '../base/batonPackage.ts';

// The command the installed files run for `baton` (docs/wiring.md "The command they run"): plain
// `baton`, which the client's shell finds on PATH, so that the files can be committed and work on
// every teammate's machine and after a checkout moves; or the command line given with `--command`.
// Either way it must end in `baton`, `baton.mjs` or `baton.js`: a later run (and `baton uninstall`)
// recognises baton's hook entries and permission rule by that name.

export const DEFAULT_COMMAND = 'baton';

export type InstalledCommand = Readonly<{
  /** The command line as given (`baton`, `node /opt/baton/bin/baton.mjs`). */
  command: string;
  commandFor(args: readonly string[]): string;
}>;

const ENDS_IN_BATON = /(^|[\s/'"])baton(\.mjs|\.js)?['"]?$/;

/** `--command` (else `baton`) as the installed files will run it, or why it cannot be used. */
export function installedCommand(option: string | undefined): InstalledCommand | { error: string } {
  const command = (option ?? DEFAULT_COMMAND).trim();
  if (command === '' || /[\r\n]/.test(command)) return { error: '--command must be one line that runs baton' };
  if (!ENDS_IN_BATON.test(command)) {
    return {
      error: `--command '${command}' must end in baton, baton.mjs or baton.js (later runs and 'baton uninstall' recognise baton's entries by that name)`,
    };
  }
  return { command, commandFor: (args) => [command, ...args.map(shellQuote)].join(' ') };
}

/** The executable `name` resolves to on PATH (as a shell would find it), or null. */
export function findOnPath(name: string, env: Readonly<Record<string, string | undefined>> = process.env): string | null {
  const candidates = name.includes('/')
    ? [name]
    : (env.PATH ?? '')
        .split(path.delimiter)
        .filter(Boolean)
        .map((dir) => path.join(dir, name));
  for (const candidate of candidates) {
    try {
      if (fs.statSync(candidate).isFile()) {
        fs.accessSync(candidate, fs.constants.X_OK);
        return candidate;
      }
    } catch {
      // not there, or not executable
    }
  }
  return null;
}

/** The program a command line starts (its first word, unquoted). */
export function programOf(command: string): string {
  const first = /^\s*(?:'([^']*)'|"([^"]*)"|(\S+))/.exec(command);
  return first?.[1] ?? first?.[2] ?? first?.[3] ?? '';
}

/**
 * What the user must know when the installed command cannot be started here (its program is not on
 * PATH): how to put this baton there, or how to name it with --command. Null when it can.
 */
export function commandNotice(command: string, env: Readonly<Record<string, string | undefined>> = process.env): string | null {
  const program = programOf(command);
  if (findOnPath(program, env) !== null) return null;
  if (command !== DEFAULT_COMMAND)
    return `the installed files run '${command}', but '${program}' is not found here: fix the command (--command) or install it`;
  let packageDir: string | null = null;
  try {
    packageDir = batonPackageDir();
  } catch {
    // not found: say the general thing
  }
  const fromCheckout = packageDir !== null && fs.existsSync(path.join(packageDir, '.git'));
  const howTo = fromCheckout
    ? `run 'npm link' in ${packageDir} (or 'npm install -g ${packageDir}')`
    : `install it with 'npm install -g <baton package or tarball>', and put npm's bin directory on PATH (export PATH="$(npm prefix -g)/bin:$PATH")`;
  return `the installed hooks and agents run 'baton', which is not on PATH here, so they would fail: ${howTo}; or run this again with --command "<how to run baton>" (e.g. --command "node ${path.join(packageDir ?? '/path/to/baton', 'bin', 'baton.mjs')}", which ties the files to this machine)`;
}
