import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';

// The one way baton starts a private `redis-server`: for `baton start`/`baton demo` (data under
// <gitdir>/baton/redis), for the tests and for the benchmarks (a temp dir). It listens on a unix
// socket only (`--port 0`: no TCP port, so nothing collides on a shared machine), never evicts
// (`noeviction`: an evicted key is a lost job), and persists append-only when asked.

/** sun_path is 108 bytes on Linux, 104 on macOS. */
const MAX_SOCKET_PATH = 100;
const POLL_MS = 25;

export class RedisServerError extends Error {}

/** The redis-server executable on PATH, or null (PATH only: a caller may hide it on purpose). */
export function findRedisServer(env: Record<string, string | undefined> = process.env): string | null {
  const dirs = (env.PATH ?? '').split(path.delimiter).filter(Boolean);
  for (const dir of dirs) {
    const candidate = path.join(dir, 'redis-server');
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // next
    }
  }
  return null;
}

export type RedisServerOptions = Readonly<{
  /** Data directory (append-only file, log); created if missing. */
  dir: string;
  /** Persist append-only (what a queue store needs); off for throw-away servers. */
  appendonly: boolean;
  /** Socket path; default `<dir>/redis.sock`, or a temp dir when that path is too long for a socket. */
  socket?: string;
  /** Executable; default findRedisServer(). */
  binary?: string;
  /** Own process group, so a Ctrl-C meant for the parent does not reach Redis first. */
  detached?: boolean;
  startTimeoutMs?: number;
}>;

export type RedisServer = Readonly<{
  url: string;
  socket: string;
  dir: string;
  binary: string;
  child: ChildProcess;
  /** Resolves with the exit code once the server exited. */
  exited: Promise<number | null>;
  /** SIGTERM (SIGKILL with `hard`), wait for the exit, remove the socket file. */
  stop(hard?: boolean): Promise<void>;
}>;

export function socketPathFor(dir: string): string {
  const socket = path.join(dir, 'redis.sock');
  if (Buffer.byteLength(socket) <= MAX_SOCKET_PATH) return socket;
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-redis-')), 'redis.sock');
}

/** Starts redis-server and resolves once it answers PING on its socket. */
export async function launchRedisServer(options: RedisServerOptions): Promise<RedisServer> {
  const binary = options.binary ?? findRedisServer();
  if (!binary) throw new RedisServerError('redis-server is not installed');
  fs.mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  const socket = options.socket ?? socketPathFor(options.dir);
  fs.rmSync(socket, { force: true });
  const logfile = path.join(options.dir, 'redis.log');
  const child = spawn(
    binary,
    [
      '--port',
      '0',
      '--unixsocket',
      socket,
      '--unixsocketperm',
      '700',
      '--dir',
      options.dir,
      '--save',
      '',
      '--appendonly',
      options.appendonly ? 'yes' : 'no',
      '--maxmemory-policy',
      'noeviction',
      '--logfile',
      logfile,
    ],
    { stdio: 'ignore', detached: options.detached ?? false },
  );
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      exitCode = code;
      resolve(code);
    });
    child.once('error', () => {
      exitCode = -1;
      resolve(-1);
    });
  });
  const timeoutMs = options.startTimeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  while (!(await answersPing(socket))) {
    if (exitCode !== undefined || Date.now() > deadline) {
      child.kill('SIGKILL');
      const tail = readTail(logfile, 5);
      const why = exitCode !== undefined ? `exited with ${exitCode}` : `did not answer on ${socket} within ${timeoutMs} ms`;
      throw new RedisServerError(`redis-server (${binary}) ${why}${tail ? `:\n${tail}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return {
    url: `unix://${socket}`,
    socket,
    dir: options.dir,
    binary,
    child,
    exited,
    async stop(hard = false) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(hard ? 'SIGKILL' : 'SIGTERM');
        await exited;
      }
      fs.rmSync(socket, { force: true });
    },
  };
}

async function answersPing(socket: string): Promise<boolean> {
  if (!fs.existsSync(socket)) return false;
  const client = new Redis({ path: socket, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, disconnectTimeout: 50 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

function readTail(file: string, lines: number): string {
  try {
    return fs.readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}
