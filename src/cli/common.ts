import path from 'node:path';
import { REPO_ROOT_NOT_FOUND_MESSAGE, findRepoRoot } from '../base/repoRoot.ts';
import { redisTargetFromUrl } from '../queue/redisUrl.ts';

// Small pieces every command shares: where the repository is, how to warn, how to print. Where
// Redis is lives in src/queue/endpoint.ts.

export type RepoRootLookup = { ok: true; root: string } | { ok: false; code: 'REPO_ROOT_NOT_FOUND'; message: string };

/** The nearest ancestor of `--repo DIR` (else of the working directory) holding `.git`, found without git. */
export function lookupRepoRoot(option: string | undefined, cwd: string = process.cwd()): RepoRootLookup {
  const root = option !== undefined ? findRepoRoot(path.resolve(cwd, option)) : findRepoRoot(cwd);
  if (root === null) return { ok: false, code: 'REPO_ROOT_NOT_FOUND', message: REPO_ROOT_NOT_FOUND_MESSAGE };
  return { ok: true, root };
}

/** The warning of a command given a common option it has no use for (see options.ts, UnusedOptions). */
export function unusedOptionWarning(command: string, option: 'repo' | 'redis', why: string): string {
  return `${command}: warning: --${option} is ignored: ${why}\n`;
}

/**
 * Why the Redis URL a command was given (`--redis`, else $REDIS_URL) cannot name a Redis at all, as
 * `<where it came from>: <why>`; null when it can, or when none was given. A usage error, not an
 * unreachable Redis: starting Redis would not help.
 */
export function redisUrlProblem(option: string | undefined, env: Record<string, string | undefined> = process.env): string | null {
  const [url, source] = option !== undefined ? [option, '--redis'] : [env.REDIS_URL, 'REDIS_URL'];
  if (!url) return null;
  try {
    redisTargetFromUrl(url, env);
    return null;
  } catch (error) {
    return `${source}: ${(error as Error).message}`;
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}
