import fs from 'node:fs';
import path from 'node:path';
// Light imports only: the hook reads this on every event (no zod, no Redis client here).
import { endpointFile, privateRedisDir } from '../base/batonDir.ts';
import { mainRepositoryOf } from '../base/repoRoot.ts';
import { checkoutRecord } from './checkoutId.ts';
import { DEFAULT_PREFIX, queueNameFor } from './keys.ts';
import type { QueueConfig } from './keys.ts';
import { DEFAULT_REDIS_URL } from './redisUrl.ts';

// Which Redis a repository's worker uses (docs/hooks.md "Which Redis"). A hook started by an agent has whatever
// environment the agent has, often no REDIS_URL; falling back to 127.0.0.1:6379 could reach a
// different Redis from the worker's, and the event would sit on a queue nobody serves. So every
// worker records the Redis URL and key prefix it serves a repository with in
// `<gitdir>/baton/endpoint.json` (mode 0600: URLs may carry passwords), and hooks and `baton task`
// read it: `--redis` > $REDIS_URL > the recorded endpoint. An explicit setting wins, as everywhere
// else; the recorded endpoint replaces the guess (127.0.0.1:6379) an agent without REDIS_URL made.
// TLS files given to the worker through BATON_REDIS_CA/CERT/KEY are written into the recorded URL
// (`?ca=` etc.), so a hook without those variables still trusts the same CA.
// A linked worktree is a checkout of its own with its own endpoint file, written once a worker serves
// it; until then (a worktree added a moment ago) it uses its main repository's: the worker serving the
// main repository serves its worktrees too (docs/architecture.md "Worktrees").

/** The worker's reconciliation graces (docs/architecture.md "Reconciliation"), in milliseconds. */
export type RecordedGraces = Readonly<{ stopGraceMs: number; spawnGraceMs: number }>;

export type RecordedEndpoint = Readonly<{ redisUrl: string; prefix: string; recordedAt: string; pid: number; graces?: RecordedGraces }>;

/**
 * Records (atomically, mode 0600) the endpoint a worker serves `repoRoot` with, and its graces, so
 * that `baton runs` and the run page show the clock the worker keeps.
 */
export function recordEndpoint(repoRoot: string, queue: QueueConfig, now: Date = new Date(), graces?: RecordedGraces): string {
  const file = endpointFile(repoRoot);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const endpoint: RecordedEndpoint = {
    redisUrl: withTlsFiles(queue.redisUrl),
    prefix: queue.prefix,
    recordedAt: now.toISOString(),
    pid: process.pid,
    ...(graces ? { graces: { stopGraceMs: graces.stopGraceMs, spawnGraceMs: graces.spawnGraceMs } } : {}),
  };
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify(endpoint)}\n`, { mode: 0o600 });
  fs.chmodSync(temp, 0o600);
  fs.renameSync(temp, file);
  return file;
}

const TLS_FILE_VARIABLES = [
  ['ca', 'BATON_REDIS_CA'],
  ['cert', 'BATON_REDIS_CERT'],
  ['key', 'BATON_REDIS_KEY'],
] as const;

/** `url` with the TLS files of the environment as query parameters, where the URL names none. */
export function withTlsFiles(url: string, env: Record<string, string | undefined> = process.env): string {
  if (!/^rediss(\+[a-z]+)?:\/\//.test(url)) return url;
  const [base, query = ''] = url.split(/\?(.*)/s, 2) as [string, string?];
  const params = new URLSearchParams(query);
  for (const [name, variable] of TLS_FILE_VARIABLES) {
    const file = env[variable];
    if (file && !params.has(name)) params.set(name, path.resolve(file));
  }
  const text = params.toString();
  return text ? `${base}?${text}` : base;
}

/** The recorded endpoint (a linked worktree without one of its own: its main repository's), or null when there is none or it cannot be read. */
export function readEndpoint(repoRoot: string): RecordedEndpoint | null {
  return ownElseMain(repoRoot, readEndpointOf);
}

/** What `read` finds for the checkout, else (a linked worktree not served yet) for its main repository. */
function ownElseMain<T>(repoRoot: string, read: (root: string) => T | null): T | null {
  const own = read(repoRoot);
  if (own !== null) return own;
  const main = mainRepositoryOf(repoRoot);
  return main ? read(main) : null;
}

function readEndpointOf(repoRoot: string): RecordedEndpoint | null {
  let value: unknown;
  try {
    value = JSON.parse(fs.readFileSync(endpointFile(repoRoot), 'utf8'));
  } catch {
    return null;
  }
  const record = value as Partial<RecordedEndpoint> | null;
  if (!record || typeof record.redisUrl !== 'string' || record.redisUrl === '') return null;
  return {
    redisUrl: record.redisUrl,
    prefix: typeof record.prefix === 'string' && record.prefix !== '' ? record.prefix : DEFAULT_PREFIX,
    recordedAt: typeof record.recordedAt === 'string' ? record.recordedAt : '',
    pid: typeof record.pid === 'number' ? record.pid : 0,
    ...(isGraces(record.graces) ? { graces: record.graces } : {}),
  };
}

function isGraces(value: unknown): value is RecordedGraces {
  const graces = value as Partial<RecordedGraces> | null | undefined;
  return (
    typeof graces?.stopGraceMs === 'number' && graces.stopGraceMs > 0 && typeof graces.spawnGraceMs === 'number' && graces.spawnGraceMs > 0
  );
}

/** Where the Redis a command uses came from (said by `baton doctor` and in errors). */
export type RedisSource = 'option' | 'env' | 'endpoint' | 'private';

/** The Redis and prefix a command uses, and where that came from. */
export type ClientQueueConfig = Readonly<{ queue: QueueConfig; source: RedisSource }>;

/**
 * Which Redis a command uses (docs/usage.md "Which Redis"), the one rule of every command: the one
 * named by `--redis`, else by $REDIS_URL, else (for a repository's clients: hook, `baton task`,
 * doctor, the dashboard run in it) the one its worker was named and recorded, else the private
 * redis-server `baton start` runs for the repository; else none (null), and the caller says so
 * with `noRedisNamed`. Never the default address: a Redis that merely answers on 127.0.0.1:6379
 * may be someone else's, and a command must not write into it unless named.
 */
export function namedQueueConfig(
  options: Readonly<{ redisOption?: string; prefixOption?: string; repoRoot?: string; recorded?: boolean }>,
  env: Record<string, string | undefined> = process.env,
): ClientQueueConfig | null {
  const config = resolveNamedQueue(options, env);
  const main = config && options.repoRoot !== undefined && options.recorded !== false ? mainRepositoryOf(options.repoRoot) : null;
  if (!config || !main) return config;
  // A linked worktree: its main repository's workers serve it too (QueueConfig's `mainQueue`).
  return { ...config, queue: { ...config.queue, mainQueue: queueNameFor(checkoutRecord(fs.realpathSync.native(main)).id) } };
}

function resolveNamedQueue(
  options: Readonly<{ redisOption?: string; prefixOption?: string; repoRoot?: string; recorded?: boolean }>,
  env: Record<string, string | undefined>,
): ClientQueueConfig | null {
  const { redisOption, repoRoot } = options;
  const prefix = (fallback: string) => options.prefixOption ?? (env.BATON_PREFIX || fallback);
  if (redisOption !== undefined) return { queue: { redisUrl: redisOption, prefix: prefix(DEFAULT_PREFIX) }, source: 'option' };
  const recorded = repoRoot !== undefined && options.recorded !== false ? readEndpoint(repoRoot) : null;
  if (env.REDIS_URL) {
    // The worker's prefix goes with the worker's Redis when nothing says otherwise.
    const sameAsWorker = recorded && recorded.redisUrl === withTlsFiles(env.REDIS_URL, env);
    return { queue: { redisUrl: env.REDIS_URL, prefix: prefix(sameAsWorker ? recorded.prefix : DEFAULT_PREFIX) }, source: 'env' };
  }
  if (recorded) return { queue: { redisUrl: recorded.redisUrl, prefix: prefix(recorded.prefix) }, source: 'endpoint' };
  const local = repoRoot !== undefined ? privateRedisUrl(repoRoot) : null;
  return local ? { queue: { redisUrl: local, prefix: prefix(DEFAULT_PREFIX) }, source: 'private' } : null;
}

/** The error of a command that found no Redis named (`namedQueueConfig` null): both ways to name one. */
export function noRedisNamed(command: string, repoRoot?: string): string {
  const where = repoRoot !== undefined ? ` for ${repoRoot}` : '';
  return [
    `no Redis is named${where}, and baton does not guess one (a Redis answering on 127.0.0.1:6379 may be someone else's). Either:`,
    `  - name it:  ${command} --redis redis://host:6379   (or set REDIS_URL)`,
    `  - or run 'baton start' in the repository: it starts a private redis-server and every baton command there finds it`,
  ].join('\n');
}

/** A Redis URL and the key prefix (`--prefix`, else $BATON_PREFIX, else the default). */
export function queueConfigFor(
  redisUrl: string,
  prefixOption?: string,
  env: Record<string, string | undefined> = process.env,
): QueueConfig {
  return { redisUrl, prefix: prefixOption ?? (env.BATON_PREFIX || DEFAULT_PREFIX) };
}

/** The address probed when nothing is configured ($BATON_DEFAULT_REDIS_URL exists for tests and odd setups). */
export function defaultRedisUrl(env: Record<string, string | undefined> = process.env): string {
  return env.BATON_DEFAULT_REDIS_URL || DEFAULT_REDIS_URL;
}

/** The private Redis `baton start` recorded for this repository while it runs (a linked worktree: else its main repository's), if any. */
export function privateRedisUrl(repoRoot: string): string | null {
  return ownElseMain(repoRoot, privateRedisUrlOf);
}

function privateRedisUrlOf(repoRoot: string): string | null {
  try {
    return fs.readFileSync(path.join(privateRedisDir(repoRoot), 'url'), 'utf8').trim() || null;
  } catch {
    return null;
  }
}
