import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { namedQueueConfig, noRedisNamed, readEndpoint, recordEndpoint, withTlsFiles } from '../../src/queue/endpoint.ts';
import { endpointFile, privateRedisDir } from '../../src/base/batonDir.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';

// Which Redis a command uses (docs/usage.md "Which Redis"): --redis > REDIS_URL > the endpoint the
// worker recorded > the private Redis of `baton start` > none (never the default address).

let repo: GitRepo | undefined;
afterEach(() => repo?.cleanup());

/** What `baton start` leaves while its private redis-server runs: the server's URL in <gitdir>/baton/redis/url. */
function recordPrivateRedis(root: string, url: string): void {
  fs.mkdirSync(privateRedisDir(root), { recursive: true });
  fs.writeFileSync(path.join(privateRedisDir(root), 'url'), `${url}\n`);
}

describe('namedQueueConfig', () => {
  it('prefers --redis, then REDIS_URL, then the recorded endpoint, then the private Redis; else none', () => {
    repo = gitRepoWithTask();
    const at = (redisOption: string | undefined, env: Record<string, string>) =>
      namedQueueConfig({ redisOption, repoRoot: repo!.root }, env);
    expect(at(undefined, {})).toBeNull();
    recordPrivateRedis(repo.root, 'unix:///run/private.sock');
    expect(at(undefined, {})).toEqual({ queue: { redisUrl: 'unix:///run/private.sock', prefix: 'baton' }, source: 'private' });
    recordEndpoint(repo.root, { redisUrl: 'redis://worker.example:6379', prefix: '{team}' });
    expect(fs.statSync(endpointFile(repo.root)).mode & 0o777).toBe(0o600);
    expect(at(undefined, {})).toEqual({ queue: { redisUrl: 'redis://worker.example:6379', prefix: '{team}' }, source: 'endpoint' });
    // REDIS_URL naming the worker's Redis takes the worker's prefix along; another URL the default.
    expect(at(undefined, { REDIS_URL: 'redis://worker.example:6379' })).toEqual({
      queue: { redisUrl: 'redis://worker.example:6379', prefix: '{team}' },
      source: 'env',
    });
    expect(at(undefined, { REDIS_URL: 'redis://other:6379' })).toEqual({
      queue: { redisUrl: 'redis://other:6379', prefix: 'baton' },
      source: 'env',
    });
    expect(at(undefined, { REDIS_URL: 'redis://other:6379', BATON_PREFIX: 'x' })).toMatchObject({ queue: { prefix: 'x' }, source: 'env' });
    expect(at('redis://flag:1', { REDIS_URL: 'redis://other:6379' })).toMatchObject({
      queue: { redisUrl: 'redis://flag:1' },
      source: 'option',
    });
  });

  it('never names the default address, whatever BATON_DEFAULT_REDIS_URL says; outside a repository only --redis and REDIS_URL count', () => {
    expect(namedQueueConfig({}, { BATON_DEFAULT_REDIS_URL: 'redis://127.0.0.1:6379' })).toBeNull();
    expect(namedQueueConfig({ prefixOption: 'p' }, { REDIS_URL: 'redis://r:1' })).toEqual({
      queue: { redisUrl: 'redis://r:1', prefix: 'p' },
      source: 'env',
    });
  });

  it('leaves the recorded endpoint out for the worker (recorded: false), which is what records it', () => {
    repo = gitRepoWithTask();
    recordEndpoint(repo.root, { redisUrl: 'redis://worker.example:6379', prefix: '{team}' });
    expect(namedQueueConfig({ repoRoot: repo.root, recorded: false }, {})).toBeNull();
    recordPrivateRedis(repo.root, 'unix:///run/private.sock');
    expect(namedQueueConfig({ repoRoot: repo.root, recorded: false, prefixOption: 'mine' }, {})).toEqual({
      queue: { redisUrl: 'unix:///run/private.sock', prefix: 'mine' },
      source: 'private',
    });
  });
});

describe('noRedisNamed', () => {
  it('names both ways: --redis or REDIS_URL, and baton start', () => {
    const message = noRedisNamed('baton task', '/src/project');
    expect(message).toContain('no Redis is named for /src/project');
    expect(message).toContain('baton task --redis redis://host:6379   (or set REDIS_URL)');
    expect(message).toContain("run 'baton start' in the repository");
  });
});

describe('withTlsFiles', () => {
  it('writes the TLS files of the environment into a rediss URL that names none', () => {
    const env = { BATON_REDIS_CA: '/etc/baton/ca.pem', BATON_REDIS_CERT: '/etc/baton/client.pem' };
    expect(withTlsFiles('rediss://u:p@host:6380/2', env)).toBe(
      'rediss://u:p@host:6380/2?ca=%2Fetc%2Fbaton%2Fca.pem&cert=%2Fetc%2Fbaton%2Fclient.pem',
    );
    expect(withTlsFiles('rediss://host:6380?ca=%2Fown.pem', env)).toBe('rediss://host:6380?ca=%2Fown.pem&cert=%2Fetc%2Fbaton%2Fclient.pem');
    expect(withTlsFiles('rediss+cluster://a:1,b:2', { BATON_REDIS_CA: '/ca.pem' })).toBe('rediss+cluster://a:1,b:2?ca=%2Fca.pem');
    expect(withTlsFiles('redis://host:6379', env)).toBe('redis://host:6379');
  });

  it('is what recordEndpoint stores', () => {
    repo = gitRepoWithTask();
    const previous = process.env.BATON_REDIS_CA;
    process.env.BATON_REDIS_CA = '/ca.pem';
    try {
      recordEndpoint(repo.root, { redisUrl: 'rediss://host:6380', prefix: 'baton' });
    } finally {
      if (previous === undefined) delete process.env.BATON_REDIS_CA;
      else process.env.BATON_REDIS_CA = previous;
    }
    expect(readEndpoint(repo.root)?.redisUrl).toBe('rediss://host:6380?ca=%2Fca.pem');
  });
});
