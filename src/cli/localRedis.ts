import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { connectFast, redactRedisUrl, redisOptionsFromUrl, redisTargetFromUrl } from '../queue/connection.ts';
import { withDeadline } from '../base/deadline.ts';
import { writeFileAtomic } from '../base/atomicFile.ts';
import { defaultRedisUrl } from '../queue/endpoint.ts';
import { privateRedisDir } from '../base/batonDir.ts';
import { RedisServerError, findRedisServer, launchRedisServer } from '../redisServer/launch.ts';

// Finding a Redis for `baton start` and `baton demo`: the configured one (--redis, $REDIS_URL), else a
// private redis-server for this repository on a unix socket (append-only, noeviction, data under
// <gitdir>/baton/redis), else clear instructions. A Redis that merely answers on the default address
// (127.0.0.1:6379, or $BATON_DEFAULT_REDIS_URL) may belong to something else: it is never written
// into unless named with --redis or $REDIS_URL; the banner says it was passed over and how to use it.
// While the private server runs its address is recorded in <gitdir>/baton/redis/url, so hooks and
// `baton task` in the repository find it without configuration.

export type ResolvedRedis = Readonly<{
  url: string;
  kind: 'configured' | 'private' | 'private-shared';
  /** Human description for the start banner. */
  describe: string;
  /** For the banner, when a Redis answers on the default address and was not used (nothing named it): that, and how to use it. */
  passedOver?: string;
  stop(): Promise<void>;
}>;

export class RedisUnavailableError extends Error {}

const PROBE_TIMEOUT_MS = 500;

async function answers(url: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<boolean> {
  if (redisTargetFromUrlSafe(url)?.kind !== 'single') {
    // Cluster and Sentinel: ioredis' Cluster / sentinel client, which connectFast builds.
    try {
      const client = await connectFast(url, timeoutMs * 4);
      client.disconnect();
      return true;
    } catch {
      return false;
    }
  }
  let client: Redis;
  try {
    // Not connectFast: after a refused connection ioredis keeps a 2 s disconnect timer alive,
    // which would hold a command that exits on "no Redis" for those 2 s.
    client = new Redis({
      ...redisOptionsFromUrl(url),
      lazyConnect: true,
      connectTimeout: timeoutMs,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      disconnectTimeout: 50,
    });
  } catch {
    return false;
  }
  client.on('error', () => undefined);
  try {
    await withDeadline(client.connect(), timeoutMs, 'no answer');
    return (await withDeadline(client.ping(), timeoutMs, 'no answer')) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

function redisTargetFromUrlSafe(url: string): ReturnType<typeof redisTargetFromUrl> | null {
  try {
    return redisTargetFromUrl(url);
  } catch {
    return null;
  }
}

/**
 * What to do when no Redis answers: the ways to get one, for the command that needs it. `baton start`
 * (and `npm start`) starts a private redis-server when one is installed, so it lists installing one;
 * `baton worker` does not start Redis, so it points at `baton start` first.
 */
export function noRedisMessage(probed: string, options: { command?: 'start' | 'worker'; serverInstalled?: boolean } = {}): string {
  const command = options.command ?? 'start';
  const installed = options.serverInstalled ?? false;
  const ways: [string, string][] = [
    ...(command === 'worker'
      ? [['in the repository, a worker with Redis found or started for it:', 'baton start'] as [string, string]]
      : []),
    ...(installed
      ? []
      : [
          [
            'install Redis; baton start then runs a private one for this repository:',
            'sudo apt-get install -y redis-server   (macOS: brew install redis)',
          ] as [string, string],
        ]),
    [
      'run Redis in Docker, on this machine only:',
      'docker run -d --name baton-redis -p 127.0.0.1:6379:6379 redis:7 redis-server --appendonly yes',
    ],
    ['use a Redis you have:', `REDIS_URL=redis://host:6379 ${command === 'worker' ? 'baton worker' : 'baton start'}`],
  ];
  const width = Math.max(...ways.map(([what]) => what.length));
  const why = command === 'worker' ? '' : ' and redis-server is not installed';
  return [
    `no Redis: nothing answers on ${redactRedisUrl(probed)}${why}. Any one of these works:`,
    ...ways.map(([what, how]) => `  - ${what.padEnd(width)}  ${how}`),
  ].join('\n');
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function resolveRedis(options: {
  redisOption?: string;
  repoRoot: string;
  env?: Record<string, string | undefined>;
  log?: (line: string) => void;
  /** The command the messages name (`baton start` or `baton demo`). */
  command?: 'start' | 'demo';
}): Promise<ResolvedRedis> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => undefined);
  const configured = options.redisOption ?? env.REDIS_URL;
  if (configured) {
    if (!(await answers(configured, 2_000))) {
      throw new RedisUnavailableError(
        `Redis at ${redactRedisUrl(configured)} does not answer; start it, or unset REDIS_URL/--redis to let baton find or start one`,
      );
    }
    return { url: configured, kind: 'configured', describe: redactRedisUrl(configured), stop: async () => undefined };
  }
  const probed = defaultRedisUrl(env);
  // Asked only to say so: a Redis there is someone's, and baton writes into it only when named.
  const defaultAnswers = answers(probed);
  const resolved = await startPrivateRedis(options.repoRoot, env, log, async () =>
    (await defaultAnswers) ? passedOverMessage(probed, options.command ?? 'start') : noRedisMessage(probed),
  );
  if (!(await defaultAnswers)) return resolved;
  const url = redactRedisUrl(probed);
  const command = options.command ?? 'start';
  return {
    ...resolved,
    passedOver: `not using the Redis that answers on ${url} (nothing names it); to use it: baton ${command} --redis ${url}`,
  };
}

/** No private redis-server can run, and the Redis on the default address was not named: how to go on. */
export function passedOverMessage(probed: string, command: 'start' | 'demo'): string {
  const url = redactRedisUrl(probed);
  return [
    `a Redis answers on ${url}, but nothing names it (--redis, REDIS_URL) and it may belong to something else, so baton does not write into it; and redis-server is not installed to run a private one. Either of these works:`,
    `  - use that Redis for baton:   baton ${command} --redis ${url}`,
    '  - install Redis; baton then runs a private one for this repository:   sudo apt-get install -y redis-server   (macOS: brew install redis)',
  ].join('\n');
}

async function startPrivateRedis(
  repoRoot: string,
  env: Record<string, string | undefined>,
  log: (line: string) => void,
  noServer: () => Promise<string>,
): Promise<ResolvedRedis> {
  const dir = privateRedisDir(repoRoot);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const urlFile = path.join(dir, 'url');
  const ownerFile = path.join(dir, 'owner');

  // Another `baton start` of this repository may already run one: share it, or adopt it when its owner died.
  // This checkout's own (privateRedisUrl falls back to a linked worktree's main repository's).
  const recorded = readOr(urlFile, '').trim() || null;
  if (recorded && (await answers(recorded))) {
    const owner = Number(readOr(ownerFile, ''));
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && pidAlive(owner)) {
      return {
        url: recorded,
        kind: 'private-shared',
        describe: `${recorded} (private redis-server of baton pid ${owner})`,
        stop: async () => undefined,
      };
    }
    writeFileAtomic(ownerFile, `${process.pid}\n`);
    log(`adopting the private redis-server left running at ${recorded}`);
    return owned(recorded, null, dir, urlFile, ownerFile);
  }
  fs.rmSync(urlFile, { force: true });

  const binary = findRedisServer(env);
  if (!binary) throw new RedisUnavailableError(await noServer());
  let server: Awaited<ReturnType<typeof launchRedisServer>>;
  try {
    // Its own process group: Ctrl-C reaches baton, which stops the worker first, then Redis.
    server = await launchRedisServer({ dir, binary, appendonly: true, detached: true });
  } catch (error) {
    if (error instanceof RedisServerError) throw new RedisUnavailableError(`the private ${error.message}`);
    throw error;
  }
  writeFileAtomic(ownerFile, `${process.pid}\n`);
  writeFileAtomic(urlFile, `${server.url}\n`);
  return owned(server.url, server.child, dir, urlFile, ownerFile, server.exited);
}

function owned(
  url: string,
  child: ChildProcess | null,
  dir: string,
  urlFile: string,
  ownerFile: string,
  exited?: Promise<number | null>,
): ResolvedRedis {
  return {
    url,
    kind: 'private',
    describe: `${url} (private redis-server, append-only data in ${dir})`,
    async stop() {
      fs.rmSync(urlFile, { force: true });
      fs.rmSync(ownerFile, { force: true });
      try {
        const client = await connectFast(url, 1_000);
        // SHUTDOWN closes the connection instead of replying.
        await client.call('SHUTDOWN').catch(() => undefined);
        client.disconnect();
      } catch {
        child?.kill('SIGTERM');
      }
      if (child && exited) {
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}

function readOr(file: string, fallback: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}
