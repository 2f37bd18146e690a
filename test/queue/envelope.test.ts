import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { envelopeFor } from '../../src/queue/envelope.ts';
import { eventIdForKey, randomEventId } from '../../src/queue/eventIds.ts';
import { parseEnvelope } from '../../src/queue/envelopeSchema.ts';
import { queueNameFor } from '../../src/queue/keys.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { redisOptionsFromUrl, redisTargetFromUrl, redactRedisUrl } from '../../src/queue/connection.ts';
import { prefixProblem } from '../../src/queue/keys.ts';

describe('job envelope', () => {
  const repo = { id: '0123456789abcdef', root: '/srv/repo' };
  /** A job envelope as the CLI sends it (a status of task 01), with `fields` changed in place. */
  const wire = (fields: Record<string, unknown>) => ({
    v: 1,
    eventId: 'c-1',
    repo,
    source: 'cli',
    intent: 'status',
    taskRef: '01',
    args: {},
    enqueuedAt: 'x',
    ...fields,
  });

  it('round-trips an event and validates it on the way back', () => {
    const envelope = envelopeFor(
      { intent: 'prepare', taskRef: '01', client: 'codex' },
      repo,
      'cli',
      'c-1',
      new Date('2026-01-01T00:00:00Z'),
    );
    expect(envelope).toEqual(wire({ intent: 'prepare', args: { client: 'codex' }, enqueuedAt: '2026-01-01T00:00:00.000Z' }));
    expect(parseEnvelope(envelope)).toEqual({ ok: true, envelope, event: { intent: 'prepare', taskRef: '01', client: 'codex' } });
  });

  it.each([
    [{}, 'malformed job envelope'],
    [{ v: 2 }, 'v:'],
    [wire({ eventId: '12345' }), 'eventId'],
    [wire({ eventId: 'c-a:b' }), 'eventId'],
    [wire({ intent: 'dance' }), 'intent'],
    [wire({ intent: 'prepare' }), "malformed 'prepare' event: client"],
    [wire({ intent: 'prepare', args: { client: 'codex', rm: '-rf' } }), "malformed 'prepare' event"],
    [
      wire({ intent: 'hook-start', taskRef: 'auto', args: { nativeAgent: 'a', childId: 'c', parentId: 'p', spawnMode: 'fresh' } }),
      "requires '--client'",
    ],
    ['just a string', 'malformed job envelope'],
  ])('rejects %j with a message naming the problem', (data, fragment) => {
    const check = parseEnvelope(data);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.message).toContain(fragment);
  });

  it('carries the caller’s traceparent when it traces; anything else in `trace` is refused', () => {
    const traced = envelopeFor(
      { intent: 'advance', taskRef: '01' },
      repo,
      'hook',
      'h-1',
      new Date(0),
      `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`,
    );
    const parsed = parseEnvelope(traced);
    expect(parsed.ok && parsed.envelope.trace).toBe(`00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`);
    expect('trace' in envelopeFor({ intent: 'advance', taskRef: '01' }, repo, 'cli', 'c-1')).toBe(false);
    const bad = parseEnvelope({ ...traced, trace: 'not-a-traceparent' });
    expect(bad.ok === false && bad.message).toMatch(/^malformed job envelope: trace: trace must be a W3C traceparent/);
  });

  it('event ids are valid BullMQ job ids', () => {
    for (const id of [randomEventId(), eventIdForKey('deploy:1'), eventIdForKey('12345')]) {
      expect(id).not.toContain(':');
      expect(/^\d+$/.test(id)).toBe(false);
    }
    expect(eventIdForKey('k')).toBe(eventIdForKey('k'));
  });

  it('repo id is the checkout id (16 hex digits), the same through a symlink; queue name baton-<id>', () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-id-')));
    fs.mkdirSync(path.join(dir, '.git'));
    const link = `${dir}-link`;
    fs.symlinkSync(dir, link);
    try {
      const identity = repoIdentity(link);
      expect(identity.root).toBe(dir);
      expect(identity.host).toBe(os.hostname());
      expect(identity.id).toMatch(/^[0-9a-f]{16}$/);
      expect(identity).toEqual(repoIdentity(dir));
      expect(JSON.parse(fs.readFileSync(path.join(dir, '.git', 'baton', 'checkout.json'), 'utf8')).id).toBe(identity.id);
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
    expect(redisOptionsFromUrl('rediss://user:p%40ss@cache.example:6390')).toEqual({
      host: 'cache.example',
      port: 6390,
      username: 'user',
      password: 'p@ss',
      tls: { servername: 'cache.example' },
    });
    expect(redisOptionsFromUrl('unix:///run/redis.sock?db=3')).toEqual({ path: '/run/redis.sock', db: 3 });
    expect(() => redisOptionsFromUrl('http://x')).toThrow(/expected redis/);
    expect(redactRedisUrl('redis://:secret@h:1')).toBe('redis://:***@h:1');
  });

  it('parses Cluster and Sentinel URLs; refuses a Cluster prefix without a hash tag', () => {
    expect(redisTargetFromUrl('redis+cluster://u:p%40w@127.0.0.1:7000,[::1]:7001,node-c:7002', {})).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '127.0.0.1', port: 7000 },
        { host: '::1', port: 7001 },
        { host: 'node-c', port: 7002 },
      ],
      options: { username: 'u', password: 'p@w' },
    });
    expect(() => redisTargetFromUrl('redis+cluster://h:1/2', {})).toThrow('a Redis Cluster has only database 0');
    expect(redisTargetFromUrl('redis+sentinel://:pw@10.0.0.1:26379,10.0.0.2/mymaster/3?sentinelPassword=spw', {})).toEqual({
      kind: 'sentinel',
      options: {
        password: 'pw',
        db: 3,
        name: 'mymaster',
        sentinelPassword: 'spw',
        sentinels: [
          { host: '10.0.0.1', port: 26379 },
          { host: '10.0.0.2', port: 26379 },
        ],
      },
    });
    expect(() => redisTargetFromUrl('redis+sentinel://h:26379', {})).toThrow('a Sentinel URL names the master');
    expect(() => redisTargetFromUrl('redis+shard://h:1', {})).toThrow('expected redis://');
    expect(redactRedisUrl('redis+sentinel://u:pw@h:1,h:2/m?sentinelPassword=spw')).toBe(
      'redis+sentinel://u:***@h:1,h:2/m?sentinelPassword=***',
    );
    expect(prefixProblem('redis+cluster://h:1', '{baton}')).toBeNull();
    expect(prefixProblem('redis://h:1', 'baton')).toBeNull();
    expect(prefixProblem('redis+cluster://h:1', 'baton')).toBe(
      "BATON_PREFIX_NOT_HASH_TAGGED: prefix 'baton' has no hash tag, so on Redis Cluster a queue's keys would land in different slots and its scripts would fail (CROSSSLOT). Use --prefix '{baton}' (or BATON_PREFIX='{baton}')",
    );
    expect(prefixProblem('rediss+cluster://h:1', 'team{}')).toContain("Use --prefix '{team}'");
  });

  it('trusts a private CA from ?ca= or BATON_REDIS_CA; no SNI for IP addresses', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-ca-'));
    try {
      fs.writeFileSync(path.join(dir, 'ca.pem'), 'PEM-CA');
      expect(redisOptionsFromUrl(`rediss://127.0.0.1:6390?ca=${path.join(dir, 'ca.pem')}`, {})).toEqual({
        host: '127.0.0.1',
        port: 6390,
        tls: { ca: 'PEM-CA' },
      });
      expect(redisOptionsFromUrl('rediss://redis.team:6390', { BATON_REDIS_CA: path.join(dir, 'ca.pem') })).toEqual({
        host: 'redis.team',
        port: 6390,
        tls: { servername: 'redis.team', ca: 'PEM-CA' },
      });
      expect(() => redisOptionsFromUrl('rediss://h:1', { BATON_REDIS_CA: path.join(dir, 'missing.pem') })).toThrow(
        `cannot read the Redis TLS CA (?ca= / BATON_REDIS_CA) at ${path.join(dir, 'missing.pem')}: ENOENT`,
      );
    } finally {
      fs.rmSync(dir, { recursive: true });
    }
  });
});
