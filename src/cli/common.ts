import fs from 'node:fs';
import path from 'node:path';
// Light imports only: the hook loads this module on every event (no zod, no Redis client here).
import { REPO_ROOT_NOT_FOUND_MESSAGE, findRepoRoot, gitDirOf } from '../core/repoRoot.ts';
import { DEFAULT_REDIS_URL } from '../queue/redisUrl.ts';
import { DEFAULT_PREFIX } from '../queue/keys.ts';
import type { QueueConfig } from '../queue/keys.ts';

// Small pieces every command shares: where the repository is, where Redis is, how to print.

export type RepoRootLookup = { ok: true; root: string } | { ok: false; code: 'REPO_ROOT_NOT_FOUND'; message: string };

/** The nearest ancestor of `--repo DIR` (else of the working directory) holding `.git`, found without git. */
export function lookupRepoRoot(option: string | undefined, cwd: string = process.cwd()): RepoRootLookup {
  const root = option !== undefined ? findRepoRoot(path.resolve(cwd, option)) : findRepoRoot(cwd);
  if (root === null) return { ok: false, code: 'REPO_ROOT_NOT_FOUND', message: REPO_ROOT_NOT_FOUND_MESSAGE };
  return { ok: true, root };
}

/**
 * Where Redis is: `--redis`, else $REDIS_URL, else the private redis-server `baton start` runs for
 * this repository (when `repoRoot` is given and one is running), else $BATON_DEFAULT_REDIS_URL,
 * else redis://127.0.0.1:6379.
 */
export function queueConfigFrom(redisOption: string | undefined, prefixOption?: string, repoRoot?: string): QueueConfig {
  const env = process.env;
  return {
    redisUrl: redisOption ?? env.REDIS_URL ?? (repoRoot !== undefined ? privateRedisUrl(repoRoot) : null) ?? defaultRedisUrl(env),
    prefix: prefixOption ?? env.BATON_PREFIX ?? DEFAULT_PREFIX,
  };
}

/** The address probed when nothing is configured ($BATON_DEFAULT_REDIS_URL exists for tests and odd setups). */
export function defaultRedisUrl(env: Record<string, string | undefined> = process.env): string {
  return env.BATON_DEFAULT_REDIS_URL || DEFAULT_REDIS_URL;
}

/** `<gitdir>/baton/redis`: data, socket and address of the private redis-server of `baton start`. */
export function privateRedisDir(repoRoot: string): string {
  return path.join(gitDirOf(repoRoot), 'baton', 'redis');
}

/** The private Redis `baton start` recorded for this repository while it runs, if any. */
export function privateRedisUrl(repoRoot: string): string | null {
  try {
    return fs.readFileSync(path.join(privateRedisDir(repoRoot), 'url'), 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** The warning of a command given a common option it has no use for (see options.ts, UnusedOptions). */
export function unusedOptionWarning(command: string, option: 'repo' | 'redis', why: string): string {
  return `${command}: warning: --${option} is ignored: ${why}\n`;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

