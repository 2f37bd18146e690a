import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// How to run this checkout's `baton` again from a child process or a hook: the current runtime's
// executable plus the absolute path of bin/baton.mjs (no npx, no PATH lookup: hooks must start fast).

/** The absolute path of this checkout's bin/baton.mjs. */
export function batonEntry(): string {
  const argvEntry = process.argv[1];
  if (argvEntry && path.basename(argvEntry) === 'baton.mjs' && fs.existsSync(argvEntry)) return fs.realpathSync(argvEntry);
  // Walk up from this module (dist/chunks/…, dist/…, or src/cli/… under a TypeScript loader).
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'bin', 'baton.mjs');
    if (fs.existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find bin/baton.mjs of this baton checkout');
    dir = parent;
  }
}

/** argv that starts `baton` with the runtime running this process: [executable, ...runtime args, entry]. */
export function batonArgv(): string[] {
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  if (deno) return [deno.execPath(), 'run', '-A', batonEntry()];
  return [process.execPath, batonEntry()];
}

/** POSIX shell quoting, only where needed, so the common case stays readable in settings files. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

export function batonCommandLine(args: readonly string[]): string {
  return [...batonArgv(), ...args].map(shellQuote).join(' ');
}
