import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { RedisReplyError, RespClient, encodeCommand, parseReply, rawRedisTarget } from '../../src/queue/resp.ts';
import type { RespTarget } from '../../src/queue/resp.ts';
import { describeNeeding, missingTool } from '../support/requirements.ts';
import { uniquePrefix } from '../support/fixtures.ts';
import { startPrivateRedis, startTcpRedis } from '../support/redisServer.ts';
import type { TcpRedis } from '../support/redisServer.ts';

// The hook's raw RESP2 client (src/queue/resp.ts) against real redis-servers: the suite's own
// (unix socket or whatever REDIS_URL says), and private TCP ones with a password, an ACL user and TLS.

const redisUrl = inject('redisUrl');

function targetOf(url: string): RespTarget {
  const target = rawRedisTarget(url);
  if (!target) throw new Error(`not a raw target: ${url}`);
  return target;
}

describe('rawRedisTarget', () => {
  it('reads plain URLs: host, port, unix path, TLS, credentials and database; masks the password in the label', () => {
    expect(rawRedisTarget('redis://127.0.0.1:6390/2')).toEqual({ host: '127.0.0.1', port: 6390, db: 2, label: 'redis://127.0.0.1:6390/2' });
    expect(rawRedisTarget('redis://u%40x:p%3Ass@localhost')).toEqual({
      host: 'localhost',
      port: 6379,
      username: 'u@x',
      password: 'p:ss',
      label: 'redis://u%40x:***@localhost',
    });
    expect(rawRedisTarget('redis://:secret@[::1]:7000')).toMatchObject({ host: '::1', port: 7000, password: 'secret' });
    expect(rawRedisTarget('unix:///tmp/r.sock?db=4')).toEqual({ path: '/tmp/r.sock', db: 4, label: 'unix:///tmp/r.sock?db=4' });
    expect(rawRedisTarget('rediss://cache.example:6380', {})).toEqual({
      host: 'cache.example',
      port: 6380,
      tls: { servername: 'cache.example' },
      label: 'rediss://cache.example:6380',
    });
  });

  it('leaves everything else to ioredis: sentinel and cluster schemes, unknown parameters, unparsable URLs', () => {
    expect(rawRedisTarget('redis+sentinel://127.0.0.1:26379/mymaster')).toBeNull();
    expect(rawRedisTarget('redis+cluster://127.0.0.1:7000')).toBeNull();
    expect(rawRedisTarget('redis://127.0.0.1:7000?cluster=true')).toBeNull();
    expect(rawRedisTarget('rediss+cluster://127.0.0.1:7000,127.0.0.1:7001')).toBeNull();
    expect(rawRedisTarget('not a url')).toBeNull();
  });
});

describe('RESP encoding and parsing', () => {
  it('encodes commands as arrays of bulk strings, counting bytes not characters', () => {
    expect(encodeCommand(['SET', 'clé', 42, Buffer.from([0, 255])]).toString('latin1')).toBe(
      `*4\r\n$3\r\nSET\r\n$4\r\n${Buffer.from('clé').toString('latin1')}\r\n$2\r\n42\r\n$2\r\n\x00\xff\r\n`,
    );
  });

  it('parses every RESP2 type and waits for incomplete replies', () => {
    const reply = Buffer.from('*5\r\n+OK\r\n:-7\r\n$4\r\nhé!\r\n$-1\r\n*2\r\n-ERR bad thing\r\n*-1\r\n');
    const parsed = parseReply(reply, 0);
    expect(parsed?.next).toBe(reply.length);
    const [ok, integer, bulk, nil, nested] = parsed!.value as unknown[];
    expect([ok, integer, bulk, nil]).toEqual(['OK', -7, 'hé!', null]);
    const [error, nilArray] = nested as [RedisReplyError, null];
    expect(error).toBeInstanceOf(RedisReplyError);
    expect(error.code).toBe('ERR');
    expect(error.message).toBe('ERR bad thing');
    expect(nilArray).toBeNull();
    for (let cut = 0; cut < reply.length; cut += 1) expect(parseReply(reply.subarray(0, cut), 0)).toBeUndefined();
  });

  it('refuses a reply type it does not know (RESP3) with a clear error', () => {
    expect(() => parseReply(Buffer.from('%1\r\n+a\r\n+b\r\n'), 0)).toThrow(/unexpected reply type "%"/);
  });
});

describe('RespClient against the suite Redis', () => {
  let client: RespClient;
  let reference: Redis;
  beforeAll(async () => {
    client = await RespClient.connect(targetOf(redisUrl), 2_000);
    reference = new Redis(redisOptionsFromUrl(redisUrl));
  });
  afterAll(async () => {
    await client.close();
    reference.disconnect();
  });

  it('pipelines commands in order, error replies as values; call() rejects on an error reply', async () => {
    const key = uniquePrefix('resp');
    const replies = await client.pipeline([
      ['SET', `${key}:s`, 'valeur ✓'],
      ['GET', `${key}:s`],
      ['INCR', `${key}:s`],
      ['RPUSH', `${key}:l`, 'a', 'b', 'c'],
      ['LRANGE', `${key}:l`, 0, -1],
      ['GET', `${key}:missing`],
    ]);
    expect(replies.slice(0, 2)).toEqual(['OK', 'valeur ✓']);
    expect(replies[2]).toBeInstanceOf(RedisReplyError);
    expect((replies[2] as RedisReplyError).message).toBe('ERR value is not an integer or out of range');
    expect(replies.slice(3)).toEqual([3, ['a', 'b', 'c'], null]);
    await expect(client.call('HSET', `${key}:s`, 'f', 'v')).rejects.toMatchObject({ code: 'WRONGTYPE' });
    expect(await reference.get(`${key}:s`)).toBe('valeur ✓');
  });

  it('reassembles replies split over many socket reads (1 MiB values, many pipelined replies)', async () => {
    const key = uniquePrefix('resp-big');
    const big = `${'x'.repeat(1024 * 1024 - 3)}end`;
    await reference.set(key, big);
    const replies = await client.pipeline(
      Array.from({ length: 500 }, (_, index) => (index % 100 === 0 ? ['GET', key] : ['ECHO', `m${index}`])),
    );
    expect(replies.filter((reply) => reply === big)).toHaveLength(5);
    expect(replies[499]).toBe('m499');
  });

  it('reads nested stream replies (XADD / XREAD) and blocks with XREAD BLOCK until an entry arrives', async () => {
    const key = uniquePrefix('resp-stream');
    const id = await client.call('XADD', key, '*', 'event', 'completed', 'jobId', 'j-1');
    expect(await client.call('XRANGE', key, '-', '+')).toEqual([[id, ['event', 'completed', 'jobId', 'j-1']]]);
    const waiting = client.call('XREAD', 'BLOCK', 5_000, 'STREAMS', key, id as string);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const next = await reference.xadd(key, '*', 'event', 'failed');
    expect(await waiting).toEqual([[key, [[next, ['event', 'failed']]]]]);
  });
});

describe('RespClient connection handling', () => {
  it('a password for a server that needs none is ignored, as ioredis does', async () => {
    const server = await startPrivateRedis();
    try {
      const client = await RespClient.connect({ ...targetOf(server.url), password: 'unneeded' }, 2_000);
      expect(await client.call('PING')).toBe('PONG');
      await client.close();
    } finally {
      await server.stop();
      fs.rmSync(server.dir, { recursive: true, force: true });
    }
  });

  it('reports a refused connection and a silent server clearly', async () => {
    const missing = path.join(os.tmpdir(), `baton-no-redis-${process.pid}.sock`);
    await expect(RespClient.connect(targetOf(`unix://${missing}`), 500)).rejects.toThrow(
      `cannot connect to Redis at unix://${missing}: connect ENOENT ${missing}`,
    );
  });

  it('rejects every pending command when the server closes the connection, and later calls too', async () => {
    const client = await RespClient.connect(targetOf(redisUrl), 2_000);
    const [id] = (await client.pipeline([['CLIENT', 'ID']])) as [number];
    const killer = new Redis(redisOptionsFromUrl(redisUrl));
    try {
      const pending = expect(client.call('BLPOP', uniquePrefix('resp-never'), 5)).rejects.toThrow(/closed the connection/);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await killer.client('KILL', 'ID', id);
      await pending;
      await expect(client.call('PING')).rejects.toThrow(/closed the connection/);
    } finally {
      killer.disconnect();
      await client.close();
    }
  });
});

describe('RespClient over TCP: AUTH and SELECT', () => {
  let server: TcpRedis;
  beforeAll(async () => {
    server = await startTcpRedis({ password: 'default-secret', user: { name: 'baton', password: 'p@ss:word' } });
  });
  afterAll(() => server?.stop());

  it('authenticates as the default user with a password and selects the database', async () => {
    const url = `redis://:default-secret@127.0.0.1:${server.port}/3`;
    const client = await RespClient.connect(targetOf(url), 2_000);
    try {
      expect(await client.call('SET', 'k', 'in db 3')).toBe('OK');
      expect(await client.call('ACL', 'WHOAMI')).toBe('default');
    } finally {
      await client.close();
    }
    const reference = new Redis(redisOptionsFromUrl(url));
    try {
      expect(await reference.get('k')).toBe('in db 3');
      await reference.select(0);
      expect(await reference.get('k')).toBeNull();
    } finally {
      reference.disconnect();
    }
  });

  it('authenticates as an ACL user (URL-encoded credentials)', async () => {
    const client = await RespClient.connect(targetOf(`redis://baton:${encodeURIComponent('p@ss:word')}@127.0.0.1:${server.port}`), 2_000);
    try {
      expect(await client.call('ACL', 'WHOAMI')).toBe('baton');
    } finally {
      await client.close();
    }
  });

  it('says so when the password is wrong or missing, without printing it', async () => {
    const wrong = RespClient.connect(targetOf(`redis://baton:nope@127.0.0.1:${server.port}`), 2_000);
    await expect(wrong).rejects.toThrow(
      `Redis at redis://baton:***@127.0.0.1:${server.port} refused the connection setup: WRONGPASS invalid username-password pair or user is disabled.`,
    );
    const anonymous = await RespClient.connect(targetOf(`redis://127.0.0.1:${server.port}`), 2_000);
    try {
      await expect(anonymous.call('GET', 'k')).rejects.toMatchObject({ code: 'NOAUTH' });
    } finally {
      await anonymous.close();
    }
  });
});

const openssl = spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0;

describeNeeding(missingTool(openssl, 'openssl', 'openssl'), 'RespClient over TLS (rediss://)', () => {
  let server: TcpRedis;
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-tls-'));
    const made = spawnSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        'key.pem',
        '-out',
        'cert.pem',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
      ],
      { cwd: dir, stdio: 'ignore' },
    );
    if (made.status !== 0) throw new Error('openssl could not make a test certificate');
    server = await startTcpRedis({
      password: 'tls-secret',
      tls: { cert: fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8'), key: fs.readFileSync(path.join(dir, 'key.pem'), 'utf8') },
    });
  });
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('connects over TLS, verifying the server against the CA of ?ca= (or $BATON_REDIS_CA), and authenticates', async () => {
    const ca = path.join(dir, 'cert.pem');
    const viaParameter = targetOf(`rediss://:tls-secret@127.0.0.1:${server.port}/1?ca=${encodeURIComponent(ca)}`);
    const viaEnvironment = rawRedisTarget(`rediss://:tls-secret@127.0.0.1:${server.port}/1`, { BATON_REDIS_CA: ca })!;
    for (const target of [viaParameter, viaEnvironment]) {
      expect(target.tls).toEqual({ ca: fs.readFileSync(ca, 'utf8') });
      const client = await RespClient.connect(target, 5_000);
      try {
        expect(await client.call('SET', 'tls', 'yes')).toBe('OK');
        expect(await client.call('GET', 'tls')).toBe('yes');
      } finally {
        await client.close();
      }
    }
  });

  it('refuses a server whose certificate it cannot verify', async () => {
    await expect(RespClient.connect(rawRedisTarget(`rediss://127.0.0.1:${server.port}`, {})!, 5_000)).rejects.toThrow(
      /cannot connect to Redis at rediss:\/\/127\.0\.0\.1:\d+\/?: self[- ]signed certificate/,
    );
  });
});
