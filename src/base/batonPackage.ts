import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// How to run this checkout's `baton` again from a child process or a hook: the current runtime's
// executable plus the absolute path of bin/baton.mjs (no npx, no PATH lookup: hooks must start fast).

/**
 * The directory of this baton's package (a checkout, or an installed package): the nearest ancestor
 * of this module holding bin/baton.mjs (dist/chunks/…, dist/…, or src/base/… under a TypeScript loader).
 */
export function batonPackageDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (fs.existsSync(path.join(dir, 'bin', 'baton.mjs'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find bin/baton.mjs of this baton package');
    dir = parent;
  }
}

/** The absolute path of this checkout's bin/baton.mjs. */
export function batonEntry(): string {
  const argvEntry = process.argv[1];
  if (argvEntry && path.basename(argvEntry) === 'baton.mjs' && fs.existsSync(argvEntry)) return fs.realpathSync(argvEntry);
  return path.join(batonPackageDir(), 'bin', 'baton.mjs');
}

/** The version in this package's package.json (what `baton --version` prints). */
export function batonVersion(): string {
  const manifest = JSON.parse(fs.readFileSync(path.join(batonPackageDir(), 'package.json'), 'utf8')) as { version?: unknown };
  if (typeof manifest.version !== 'string') throw new Error("this baton package's package.json has no version");
  return manifest.version;
}

/** argv that starts `baton` with the runtime running this process: [executable, ...runtime args, entry]. */
export function batonArgv(): string[] {
  const deno = (globalThis as { Deno?: { execPath(): string } }).Deno;
  if (deno) return [deno.execPath(), 'run', '-A', batonEntry()];
  return [process.execPath, batonEntry()];
}
