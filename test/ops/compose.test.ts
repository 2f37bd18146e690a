import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { missingTool, requireHere } from '../support/requirements.ts';
import { PROJECT_ROOT } from '../support/processes.ts';
import { useWorkerHarness } from '../support/workerHarness.ts';
import { findRedisServer } from '../../src/redisServer/launch.ts';

// compose.yaml (no Docker engine here: the file is parsed and checked), and the worker's warning
// when Redis is configured to evict or not to persist (what compose.yaml's Redis avoids).

type Service = {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  user?: string;
  depends_on?: Record<string, unknown>;
};

describe('compose.yaml', () => {
  const compose = parse(fs.readFileSync(path.join(PROJECT_ROOT, 'compose.yaml'), 'utf8')) as {
    services: Record<string, Service>;
    volumes: Record<string, unknown>;
  };

  it('runs Redis as a queue store: append-only, noeviction, data on a volume, reachable on loopback only', () => {
    const redis = compose.services.redis!;
    const command = redis.command!.join(' ');
    expect(command).toMatch(/^redis-server /);
    expect(command).toContain('--appendonly yes');
    expect(command).toContain('--maxmemory-policy noeviction');
    const [volume, target] = redis.volumes![0]!.split(':');
    expect(target).toBe('/data');
    expect(Object.keys(compose.volumes)).toContain(volume);
    expect(redis.ports!.every((port) => port.startsWith('127.0.0.1:'))).toBe(true);
  });

  it('runs a worker with the repository mounted at its own path, the dashboard on 0.0.0.0 with a token, published on 127.0.0.1 only', () => {
    const worker = compose.services.worker!;
    expect(worker.command!.slice(0, 3)).toEqual(['node', 'bin/baton.mjs', 'worker']);
    const args = worker.command!.slice(3);
    const repoArg = args[args.indexOf('--repo') + 1]!;
    expect(repoArg).toMatch(/^\$\{REPO:\?/);
    expect(args).toEqual(expect.arrayContaining(['--dashboard', '--host', '0.0.0.0']));
    // same path inside and outside: a repository's queue is named after the hash of its real path
    expect(worker.volumes).toContainEqual(expect.stringMatching(/^\$\{REPO:\?[^}]*\}:\$\{REPO(:\?[^}]*)?\}$/));
    expect(worker.volumes).toContain('.:/baton:ro');
    expect(worker.environment!.REDIS_URL).toBe('redis://redis:6379');
    expect(worker.environment!.BATON_DASHBOARD_TOKEN).toMatch(/^\$\{BATON_DASHBOARD_TOKEN:\?/);
    expect(worker.ports).toHaveLength(1);
    expect(worker.ports![0]).toMatch(/^127\.0\.0\.1:\$\{BATON_DASHBOARD_PORT:-3000\}:3000$/);
    expect(worker.depends_on).toMatchObject({ redis: { condition: 'service_healthy' } });
  });
});

describe('worker warnings about the Redis configuration', () => {
  const harness = useWorkerHarness();

  async function workerOutput(appendonly: boolean, policy: string): Promise<string> {
    const redis = await harness.privateRedis({ appendonly });
    const client = new Redis({ path: redis.socket });
    await client.config('SET', 'maxmemory-policy', policy);
    client.disconnect();
    const { worker } = await harness.serve('warn', { redisUrl: redis.url });
    return worker.output();
  }

  it('warns when Redis may evict jobs and persists nothing', async (context) => {
    requireHere(context, missingTool(findRedisServer() !== null, 'redis-server', 'redis-server'));
    const output = await workerOutput(false, 'allkeys-lru');
    expect(output).toContain("warning: Redis maxmemory-policy is 'allkeys-lru'");
    expect(output).toContain('noeviction');
    expect(output).toContain('warning: Redis persists nothing');
    expect(output).toContain('appendonly yes');
  });

  it('is quiet with the configuration compose.yaml uses', async (context) => {
    requireHere(context, missingTool(findRedisServer() !== null, 'redis-server', 'redis-server'));
    const output = await workerOutput(true, 'noeviction');
    expect(output).not.toContain('warning: Redis');
  });
});
