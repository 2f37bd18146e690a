import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { envelopeFor, eventIdForKey, parseEnvelope, queueNameFor, randomEventId, repoIdentity } from '../../src/queue/envelope.ts';
import { redisOptionsFromUrl, redactRedisUrl } from '../../src/queue/connection.ts';

describe('job envelope', () => {
  const repo = { id: '0123456789abcdef', root: '/srv/repo' };

  it('round-trips an event and validates it on the way back', () => {
    const envelope = envelopeFor({ intent: 'prepare', taskRef: '01', client: 'codex' }, repo, 'cli', 'c-1', new Date('2026-01-01T00:00:00Z'));
    expect(envelope).toEqual({ v: 1, eventId: 'c-1', repo, source: 'cli', intent: 'prepare', taskRef: '01', args: { client: 'codex' }, enqueuedAt: '2026-01-01T00:00:00.000Z' });
    expect(parseEnvelope(envelope)).toEqual({ ok: true, envelope, event: { intent: 'prepare', taskRef: '01', client: 'codex' } });
  });

  it.each([
    [{}, 'malformed job envelope'],
    [{ v: 2 }, 'v:'],
    [{ v: 1, eventId: '12345', repo, source: 'cli', intent: 'status', taskRef: '01', args: {}, enqueuedAt: 'x' }, 'eventId'],
    [{ v: 1, eventId: 'c-a:b', repo, source: 'cli', intent: 'status', taskRef: '01', args: {}, enqueuedAt: 'x' }, 'eventId'],
    [{ v: 1, eventId: 'c-1', repo, source: 'cli', intent: 'dance', taskRef: '01', args: {}, enqueuedAt: 'x' }, 'intent'],
    [{ v: 1, eventId: 'c-1', repo, source: 'cli', intent: 'prepare', taskRef: '01', args: {}, enqueuedAt: 'x' }, "malformed 'prepare' event: client"],
    [{ v: 1, eventId: 'c-1', repo, source: 'cli', intent: 'prepare', taskRef: '01', args: { client: 'codex', rm: '-rf' }, enqueuedAt: 'x' }, "malformed 'prepare' event"],
    [{ v: 1, eventId: 'c-1', repo, source: 'cli', intent: 'hook-start', taskRef: 'auto', args: { nativeAgent: 'a', childId: 'c', parentId: 'p', spawnMode: 'fresh' }, enqueuedAt: 'x' }, "requires '--client'"],
    ['just a string', 'malformed job envelope'],
  ])('rejects %j with a message naming the problem', (data, fragment) => {
    const check = parseEnvelope(data);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.message).toContain(fragment);
  });

  it('event ids are valid BullMQ job ids', () => {
    for (const id of [randomEventId(), eventIdForKey('deploy:1'), eventIdForKey('12345')]) {
      expect(id).not.toContain(':');
      expect(/^\d+$/.test(id)).toBe(false);
    }
    expect(eventIdForKey('k')).toBe(eventIdForKey('k'));
  });

  it('repo id is the first 16 hex digits of sha256 of the real path; queue name baton-<id>', () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-id-')));
    const link = `${dir}-link`;
    fs.symlinkSync(dir, link);
    try {
      const identity = repoIdentity(link);
      expect(identity.root).toBe(dir);
      expect(identity.id).toMatch(/^[0-9a-f]{16}$/);
      expect(identity).toEqual(repoIdentity(dir));
      expect(queueNameFor(identity.id)).toBe(`baton-${identity.id}`);
    } finally {
      fs.rmSync(link);
      fs.rmSync(dir, { recursive: true });
    }
  });
});

describe('Redis URLs', () => {
  it('parses redis, rediss (TLS), passwords, databases and unix sockets', () => {
    expect(redisOptionsFromUrl('redis://127.0.0.1:6380/2')).toEqual({ host: '127.0.0.1', port: 6380, db: 2 });
    expect(redisOptionsFromUrl('rediss://user:p%40ss@cache.example:6390')).toEqual({ host: 'cache.example', port: 6390, username: 'user', password: 'p@ss', tls: { servername: 'cache.example' } });
    expect(redisOptionsFromUrl('unix:///run/redis.sock?db=3')).toEqual({ path: '/run/redis.sock', db: 3 });
    expect(() => redisOptionsFromUrl('http://x')).toThrow(/expected redis/);
    expect(redactRedisUrl('redis://:secret@h:1')).toBe('redis://:***@h:1');
  });
});
