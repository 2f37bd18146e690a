import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ClientHeadless } from '../clients/headless.ts';
import type { ErrorCode } from '../core/errorCodes.ts';

// Whether a client can be started headless here, checked before anything is prepared
// (docs/clients.md "A reviewer from another vendor"): its command is installed, and it has
// credentials. What counts as logged in is what the client itself would use without asking.

type Env = Readonly<Record<string, string | undefined>>;

/** The variable that overrides a client's command: BATON_, its id in capitals with underscores, _COMMAND. */
export function commandVariable(client: string): string {
  return `BATON_${client.toUpperCase().replace(/-/g, '_')}_COMMAND`;
}

function onPath(name: string, env: Env): string | null {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return null;
}

/** The argv that starts the client: the override (a path, or a JSON array of arguments), else its command on PATH. */
export function resolvedCommand(client: string, headless: ClientHeadless, env: Env): string[] | null {
  const override = env[commandVariable(client)];
  if (override) {
    if (override.trim().startsWith('[')) {
      try {
        const argv = JSON.parse(override) as unknown;
        if (Array.isArray(argv) && argv.length > 0 && argv.every((part) => typeof part === 'string')) return argv as string[];
      } catch {
        return null;
      }
      return null;
    }
    return fs.existsSync(override) ? [override] : null;
  }
  const found = onPath(headless.command, env);
  return found ? [found] : null;
}

/** Why the client cannot be started headless here, or null. */
export function clientProblem(client: string, headless: ClientHeadless, env: Env): { code: ErrorCode; message: string } | null {
  if (!resolvedCommand(client, headless, env)) {
    return {
      code: 'BATON_CLIENT_NOT_INSTALLED',
      message: `${client} is not installed: no '${headless.command}' on PATH (or ${commandVariable(client)} names no command); nothing was prepared`,
    };
  }
  const read = (file: string) => {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch {
      return null;
    }
  };
  if (!headless.loggedIn(env, read, env.HOME ?? os.homedir())) {
    return { code: 'BATON_CLIENT_NOT_LOGGED_IN', message: `${client} has no credentials here: ${headless.login}; nothing was prepared` };
  }
  return null;
}
