import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { RedisServerError, findRedisServer, launchRedisServer, socketPathFor } from '../../src/redisServer/launch.ts';
import type { RedisServer } from '../../src/redisServer/launch.ts';
import { missingTool, requireHere } from '../support/requirements.ts';

// The one private-Redis launcher (used by `baton start`/`demo`, the test support and the
// benchmarks): unix socket only, noeviction, append-only when asked, clear errors.

const dirs: string[] = [];
let server: RedisServer | null = null;

afterEach(async () => {
  await server?.stop(true);
  server = null;
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-launch-'));
  dirs.push(dir);
  return dir;
}

async function config(socket: string, key: string): Promise<string> {
  const client = new Redis({ path: socket, maxRetriesPerRequest: 1 });
  try {
    return ((await client.config('GET', key)) as string[])[1]!;
  } finally {
    client.disconnect();
  }
}

describe('launchRedisServer', () => {
  it('serves on a unix socket only, never evicts, and persists append-only when asked', async (context) => {
    requireHere(context, missingTool(findRedisServer() !== null, 'redis-server', 'redis-server'));
    const dir = tempDir();
    server = await launchRedisServer({ dir, appendonly: true });
    expect(server.url).toBe(`unix://${path.join(dir, 'redis.sock')}`);
    expect(await config(server.socket, 'port')).toBe('0');
    expect(await config(server.socket, 'maxmemory-policy')).toBe('noeviction');
    expect(await config(server.socket, 'appendonly')).toBe('yes');
    expect(await config(server.socket, 'dir')).toBe(fs.realpathSync(dir));
    await server.stop();
    expect(fs.existsSync(server.socket)).toBe(false);
    expect(server.child.exitCode ?? server.child.signalCode).not.toBeNull();
  });

  it('without appendonly keeps nothing on disk', async (context) => {
    requireHere(context, missingTool(findRedisServer() !== null, 'redis-server', 'redis-server'));
    server = await launchRedisServer({ dir: tempDir(), appendonly: false });
    expect(await config(server.socket, 'appendonly')).toBe('no');
    expect(await config(server.socket, 'save')).toBe('');
  });

  it('moves the socket to a short temp path when the data directory is too deep for one', () => {
    const deep = path.join(tempDir(), 'x'.repeat(120));
    const socket = socketPathFor(deep);
    dirs.push(path.dirname(socket));
    expect(socket.startsWith(path.join(os.tmpdir(), 'baton-redis-'))).toBe(true);
    expect(Buffer.byteLength(socket)).toBeLessThanOrEqual(100);
  });

  it('reports a server that exits at start, and a missing executable', async () => {
    await expect(launchRedisServer({ dir: tempDir(), appendonly: false, binary: '/bin/false' })).rejects.toThrow(
      new RedisServerError('redis-server (/bin/false) exited with 1'),
    );
    const savedPath = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      expect(findRedisServer()).toBeNull();
      await expect(launchRedisServer({ dir: tempDir(), appendonly: false })).rejects.toThrow('redis-server is not installed');
    } finally {
      process.env.PATH = savedPath;
    }
  });
});
