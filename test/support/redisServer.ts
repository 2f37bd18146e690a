import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findRedisServer, launchRedisServer, socketPathFor } from '../../src/redisServer/launch.ts';
import type { RedisServer } from '../../src/redisServer/launch.ts';

// Real Redis for tests, never a mock, never a fixed port (machines are shared):
//   1. REDIS_URL when set;
//   2. testcontainers (12.0.x, the last line that loads on Node 20) when a Docker engine answers;
//   3. otherwise a private redis-server on a unix socket in a temp dir.

export type ProvisionedRedis = { url: string; kind: 'env' | 'container' | 'private'; stop(): Promise<void> };

export async function provisionRedis(): Promise<ProvisionedRedis> {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, kind: 'env', stop: async () => undefined };
  if (dockerAnswers()) {
    const { RedisContainer } = await import('@testcontainers/redis');
    const container = await new RedisContainer('redis:7-alpine').start();
    return { url: container.getConnectionUrl(), kind: 'container', stop: async () => void (await container.stop()) };
  }
  const server = await startPrivateRedis();
  return {
    url: server.url,
    kind: 'private',
    stop: async () => {
      await server.stop();
      fs.rmSync(server.dir, { recursive: true, force: true });
    },
  };
}

function dockerAnswers(): boolean {
  const probe = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { timeout: 5_000, stdio: 'ignore' });
  return probe.status === 0;
}

export type PrivateRedis = {
  url: string;
  socket: string;
  dir: string;
  /** Stops the server (SIGTERM, or SIGKILL with `hard`); the socket path stays reserved. */
  stop(hard?: boolean): Promise<void>;
  /** Starts it again on the same socket (data persists only with `appendonly`). */
  start(): Promise<void>;
};

/** What the suite says when it has no Redis at all: the command that installs one. */
export const NO_REDIS_FOR_TESTS =
  'no Redis for the tests: redis-server is not installed. Run `bash scripts/setup.sh` (installs redis-server, git and chromium, then npm ci), or set REDIS_URL, or start a Docker engine';

/** A private redis-server on a unix socket in a temp dir (the launcher of src/redisServer). */
export async function startPrivateRedis(options: { appendonly?: boolean } = {}): Promise<PrivateRedis> {
  const binary = findRedisServer();
  if (!binary) throw new Error(NO_REDIS_FOR_TESTS);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-redis-'));
  const socket = socketPathFor(dir);
  let running: RedisServer | null = null;
  const server: PrivateRedis = {
    url: `unix://${socket}`,
    socket,
    dir,
    async start() {
      running = await launchRedisServer({ dir, socket, binary, appendonly: options.appendonly ?? false });
    },
    async stop(hard = false) {
      const current = running;
      running = null;
      await current?.stop(hard);
    },
  };
  await server.start();
  return server;
}

export type TcpRedis = { url: string; port: number; dir: string; stop(): Promise<void> };

/**
 * A private redis-server on a free loopback TCP port (picked by the OS, never fixed), for what a
 * unix socket cannot show: TCP, AUTH (`password`, or an ACL `user`), TLS (`tls`: the server's PEM
 * certificate and key; clients then need that certificate as their CA).
 */
export async function startTcpRedis(
  options: { password?: string; user?: { name: string; password: string }; tls?: { cert: string; key: string } } = {},
): Promise<TcpRedis> {
  const binary = findRedisServer();
  if (!binary) throw new Error(NO_REDIS_FOR_TESTS);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-redis-tcp-'));
  const port = await freeLoopbackPort();
  const args = ['--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--logfile', path.join(dir, 'redis.log')];
  // The unix socket is only for our own readiness probe.
  const socket = path.join(dir, 'probe.sock');
  args.push('--unixsocket', socket, '--unixsocketperm', '700');
  if (options.tls) {
    fs.writeFileSync(path.join(dir, 'cert.pem'), options.tls.cert);
    fs.writeFileSync(path.join(dir, 'key.pem'), options.tls.key);
    args.push(
      '--port',
      '0',
      '--tls-port',
      String(port),
      '--tls-cert-file',
      path.join(dir, 'cert.pem'),
      '--tls-key-file',
      path.join(dir, 'key.pem'),
      '--tls-auth-clients',
      'no',
    );
  } else {
    args.push('--port', String(port));
  }
  if (options.password) args.push('--requirepass', options.password);
  if (options.user) args.push('--user', options.user.name, 'on', `>${options.user.password}`, '~*', '&*', '+@all');
  const child = spawn(binary, args, { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForSocket(socket, 10_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `${options.tls ? 'rediss' : 'redis'}://127.0.0.1:${port}`, port, dir, stop };
}

async function freeLoopbackPort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitForSocket(socket: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fs.existsSync(socket)) {
    if (Date.now() > deadline) throw new Error(`redis-server did not open ${socket} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
