import path from 'node:path';
import { gitDirOf } from './repoRoot.ts';

// baton's own files of a checkout live beside git's, in `<gitdir>/baton/` (machine-local, never
// committed; a linked worktree has its own). Named once, here:
//
//   <gitdir>/baton/checkout.json   the checkout id naming the repository's queue (queue/checkoutId.ts)
//   <gitdir>/baton/endpoint.json   the Redis URL and prefix a worker serves it with (queue/endpoint.ts)
//   <gitdir>/baton/journal/        the worker's effectively-once record per event (workers/journal.ts)
//   <gitdir>/baton/runlog/         each run's job log, for the run view (src/runs/runLog.ts)
//   <gitdir>/baton/spool/          events a hook could not queue while Redis was down (queue/spool.ts)
//   <gitdir>/baton/redis/          the private redis-server of `baton start` (cli/localRedis.ts)
//   <gitdir>/baton/bin/            the `agent-infra-internal` shim (install-hooks --agent-infra-shim)
//   <gitdir>/baton/init.json       what `baton init` changed, for `baton uninstall` (src/install/record.ts)
//   <gitdir>/baton/reviewers/      the output of each headless reviewer, by receipt (cli/headlessReview.ts)

/** The entries of `<gitdir>/baton/`, by what they hold. */
export const BATON_ENTRIES = {
  checkout: 'checkout.json',
  endpoint: 'endpoint.json',
  journal: 'journal',
  runLog: 'runlog',
  spool: 'spool',
  privateRedis: 'redis',
  shim: 'bin',
  initRecord: 'init.json',
  reviewers: 'reviewers',
} as const;

export type BatonEntry = keyof typeof BATON_ENTRIES;

/** `<gitdir>/baton` of the checkout at `repoRoot`. */
export function batonDir(repoRoot: string): string {
  return path.join(gitDirOf(repoRoot), 'baton');
}

/** One entry of `<gitdir>/baton/` of the checkout at `repoRoot`. */
export function batonPath(repoRoot: string, entry: BatonEntry): string {
  return batonEntryIn(batonDir(repoRoot), entry);
}

/** One entry of a baton directory already found (a worker keeps its repository's). */
export function batonEntryIn(dir: string, entry: BatonEntry): string {
  return path.join(dir, BATON_ENTRIES[entry]);
}

export const checkoutFile = (repoRoot: string): string => batonPath(repoRoot, 'checkout');
export const endpointFile = (repoRoot: string): string => batonPath(repoRoot, 'endpoint');
export const spoolDir = (repoRoot: string): string => batonPath(repoRoot, 'spool');
export const privateRedisDir = (repoRoot: string): string => batonPath(repoRoot, 'privateRedis');
export const shimDir = (repoRoot: string): string => batonPath(repoRoot, 'shim');
export const initRecordFile = (repoRoot: string): string => batonPath(repoRoot, 'initRecord');
