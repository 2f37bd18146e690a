import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { clientQueueConfig, readEndpoint, recordEndpoint, withTlsFiles } from '../../src/queue/endpoint.ts';
import { endpointFile } from '../../src/base/batonDir.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';

// Which Redis a hook or `baton task` uses: --redis > REDIS_URL > the endpoint the worker recorded.

let repo: GitRepo | undefined;
afterEach(() => repo?.cleanup());

describe('clientQueueConfig', () => {
  it('prefers --redis, then REDIS_URL, then the recorded endpoint, then the fallback', () => {
    repo = gitRepoWithTask();
    const none = () => null;
    expect(clientQueueConfig(repo.root, undefined, none, {})).toBeNull();
    recordEndpoint(repo.root, { redisUrl: 'redis://worker.example:6379', prefix: '{team}' });
    expect(fs.statSync(endpointFile(repo.root)).mode & 0o777).toBe(0o600);
    expect(clientQueueConfig(repo.root, undefined, none, {})).toEqual({
      queue: { redisUrl: 'redis://worker.example:6379', prefix: '{team}' },
      source: 'endpoint',
    });
    // REDIS_URL naming the worker's Redis takes the worker's prefix along; another URL the default.
    expect(clientQueueConfig(repo.root, undefined, none, { REDIS_URL: 'redis://worker.example:6379' })).toEqual({
      queue: { redisUrl: 'redis://worker.example:6379', prefix: '{team}' },
      source: 'env',
    });
    expect(clientQueueConfig(repo.root, undefined, none, { REDIS_URL: 'redis://other:6379' })).toEqual({
      queue: { redisUrl: 'redis://other:6379', prefix: 'baton' },
      source: 'env',
    });
    expect(clientQueueConfig(repo.root, undefined, none, { REDIS_URL: 'redis://other:6379', BATON_PREFIX: 'x' })).toMatchObject({
      queue: { prefix: 'x' },
      source: 'env',
    });
    expect(clientQueueConfig(repo.root, 'redis://flag:1', none, { REDIS_URL: 'redis://other:6379' })).toMatchObject({
      queue: { redisUrl: 'redis://flag:1' },
      source: 'option',
    });
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
