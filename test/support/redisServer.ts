import { spawnSync } from 'node:child_process';
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
