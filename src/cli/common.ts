import path from 'node:path';
import { findRepoRoot } from '../core/repoRoot.ts';
import { REPO_ROOT_NOT_FOUND_MESSAGE } from '../core/taskRef.ts';
import { redisUrlFrom } from '../queue/connection.ts';
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

export function queueConfigFrom(redisOption: string | undefined, prefixOption?: string): QueueConfig {
  return {
    redisUrl: redisUrlFrom(redisOption, process.env),
    prefix: prefixOption ?? process.env.BATON_PREFIX ?? DEFAULT_PREFIX,
  };
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

export function failedResult(code: string, message: string, taskId: string | null = null) {
  return { status: 'failed', changed: false, taskId, run: null, next: null, error: { code, message } } as const;
}
