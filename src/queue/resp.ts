import net from 'node:net';
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { withDeadline } from '../base/deadline.ts';
import { redactRedisUrl, redisOptionsFromUrl } from './redisUrl.ts';

// A minimal RESP2 client for the hook path. Written here rather than using ioredis because of
// start-up cost: loading ioredis takes a fresh `node` ~65 ms, most of what a hook spends beyond
// the runtime's own start-up (bench/results/hook.md), while a hook sends one pipeline and exits.
// Covered: TCP and unix sockets (node:net), TLS (node:tls, loaded only for rediss://), AUTH with
// user/password, SELECT, pipelining, error replies as values. Not covered: RESP3, pub/sub, cluster
// and sentinel (callers fall back to ioredis for those; see rawRedisTarget).

export class RedisReplyError extends Error {
  /** The error's first word as Redis sends it: ERR, NOSCRIPT, WRONGPASS, NOAUTH, ... */
  readonly code: string;
  constructor(message: string) {
    super(message);
    this.name = 'RedisReplyError';
    this.code = /^[A-Z]+/.exec(message)?.[0] ?? 'ERR';
  }
}

export type RespReply = string | number | null | RespReply[] | RedisReplyError;
export type RespArg = string | number | Buffer;

export type RespTarget = Readonly<{
  host?: string;
  port?: number;
  path?: string;
  tls?: TlsConnectionOptions;
  username?: string;
  password?: string;
  db?: number;
  /** How to name the server in messages (password masked). */
  label: string;
}>;

/** URL parameters of a plain URL that the raw client honours (see redisUrl.ts). */
const RAW_URL_PARAMETERS = new Set(['db', 'ca', 'cert', 'key']);

/**
 * The connection settings of a plain Redis URL (redis://, rediss://, unix://, with `db` and the TLS
 * files `ca`, `cert`, `key` or $BATON_REDIS_CA/CERT/KEY), or null for anything else — cluster,
 * sentinel, other parameters — which the caller serves with ioredis instead.
 */
export function rawRedisTarget(url: string, env: Record<string, string | undefined> = process.env): RespTarget | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (!['redis:', 'rediss:', 'unix:'].includes(parsed.protocol)) return null;
  for (const key of parsed.searchParams.keys()) if (!RAW_URL_PARAMETERS.has(key)) return null;
  const options = redisOptionsFromUrl(url, env);
  return {
    ...(options.path !== undefined ? { path: options.path } : { host: options.host ?? '127.0.0.1', port: options.port ?? 6379 }),
    ...(options.tls ? { tls: options.tls } : {}),
    ...(options.username !== undefined ? { username: options.username } : {}),
    ...(options.password !== undefined ? { password: options.password } : {}),
    ...(options.db !== undefined ? { db: options.db } : {}),
    label: redactRedisUrl(url),
  };
}

export function encodeCommand(args: readonly RespArg[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = Buffer.isBuffer(arg) ? arg : Buffer.from(String(arg), 'utf8');
    parts.push(Buffer.from(`$${bytes.length}\r\n`), bytes, CRLF);
  }
  return Buffer.concat(parts);
}

const CRLF = Buffer.from('\r\n');

/** Parses one reply at `offset`; undefined when the buffer does not hold all of it yet. */
export function parseReply(buffer: Buffer, offset: number): { value: RespReply; next: number } | undefined {
  if (offset >= buffer.length) return undefined;
  const lineEnd = buffer.indexOf(CRLF, offset);
  if (lineEnd < 0) return undefined;
  const type = buffer[offset];
  const line = buffer.toString('utf8', offset + 1, lineEnd);
  const after = lineEnd + 2;
  switch (type) {
    case 0x2b: // + simple string
      return { value: line, next: after };
    case 0x2d: // - error
      return { value: new RedisReplyError(line), next: after };
    case 0x3a: // : integer
      return { value: Number(line), next: after };
    case 0x24: {
      // $ bulk string
      const length = Number(line);
      if (length < 0) return { value: null, next: after };
      if (buffer.length < after + length + 2) return undefined;
      return { value: buffer.toString('utf8', after, after + length), next: after + length + 2 };
    }
    case 0x2a: {
      // * array
      const count = Number(line);
      if (count < 0) return { value: null, next: after };
      const items: RespReply[] = [];
      let next = after;
      for (let index = 0; index < count; index += 1) {
        const item = parseReply(buffer, next);
        if (!item) return undefined;
        items.push(item.value);
        next = item.next;
      }
      return { value: items, next };
    }
    default:
      throw new Error(`Redis sent an unexpected reply type ${JSON.stringify(String.fromCharCode(type ?? 0))}`);
  }
}

type Pending = { resolve(value: RespReply): void; reject(error: Error): void };

export class RespClient {
  readonly label: string;
  readonly #socket: net.Socket;
  readonly #pending: Pending[] = [];
  #buffer: Buffer = Buffer.alloc(0);
  #failure: Error | null = null;

  private constructor(socket: net.Socket, label: string) {
    this.#socket = socket;
    this.label = label;
    socket.on('data', (chunk: Buffer) => this.#receive(chunk));
    socket.on('error', (error) => this.#fail(new Error(`Redis at ${label}: ${error.message}`)));
    socket.on('close', () => this.#fail(new Error(`Redis at ${label} closed the connection`)));
  }

  /** Connects (and authenticates, selects the database) within `timeoutMs`, or rejects saying why. */
  static async connect(target: RespTarget, timeoutMs: number): Promise<RespClient> {
    const socket = await openSocket(target, timeoutMs);
    const client = new RespClient(socket, target.label);
    const setup: RespArg[][] = [];
    if (target.password !== undefined) setup.push(target.username ? ['AUTH', target.username, target.password] : ['AUTH', target.password]);
    if (target.db) setup.push(['SELECT', target.db]);
    if (setup.length === 0) return client;
    try {
      const replies = await withDeadline(
        client.pipeline(setup),
        timeoutMs,
        `Redis at ${target.label} did not answer within ${timeoutMs} ms`,
      );
      // A password given to a server that has none is not an error for ioredis either.
      const refused = replies.find(
        (reply): reply is RedisReplyError => reply instanceof RedisReplyError && !/without any password configured/.test(reply.message),
      );
      if (refused) throw new Error(`Redis at ${target.label} refused the connection setup: ${refused.message}`);
    } catch (error) {
      client.close();
      throw error;
    }
    return client;
  }

  /** Sends every command at once; resolves with one reply per command, error replies as RedisReplyError values. */
  pipeline(commands: readonly (readonly RespArg[])[]): Promise<RespReply[]> {
    if (this.#failure) return Promise.reject(this.#failure);
    const replies = commands.map(
      () =>
        new Promise<RespReply>((resolve, reject) => {
          this.#pending.push({ resolve, reject });
        }),
    );
    this.#socket.write(Buffer.concat(commands.map(encodeCommand)));
    return Promise.all(replies);
  }

  /** One command; an error reply rejects. */
  async call(...args: RespArg[]): Promise<RespReply> {
    const [reply] = await this.pipeline([args]);
    if (reply instanceof RedisReplyError) throw reply;
    return reply!;
  }

  /** Drops the connection at once (no QUIT round trip): a hook is about to exit. */
  close(): void {
    this.#fail(new Error(`connection to Redis at ${this.label} was closed`));
    this.#socket.destroy();
  }

  #receive(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    let offset = 0;
    for (;;) {
      let parsed: ReturnType<typeof parseReply>;
      try {
        parsed = parseReply(this.#buffer, offset);
      } catch (error) {
        this.#fail(error as Error);
        this.#socket.destroy();
        return;
      }
      if (!parsed) break;
      offset = parsed.next;
      const waiter = this.#pending.shift();
      if (!waiter) {
        this.#fail(new Error(`Redis at ${this.label} sent a reply nobody asked for`));
        this.#socket.destroy();
        return;
      }
      waiter.resolve(parsed.value);
    }
    this.#buffer = offset === this.#buffer.length ? Buffer.alloc(0) : this.#buffer.subarray(offset);
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    for (const waiter of this.#pending.splice(0)) waiter.reject(this.#failure);
  }
}

async function openSocket(target: RespTarget, timeoutMs: number): Promise<net.Socket> {
  const tls = target.tls ? await import('node:tls') : null;
  return new Promise<net.Socket>((resolve, reject) => {
    const endpoint = target.path !== undefined ? { path: target.path } : { host: target.host ?? '127.0.0.1', port: target.port ?? 6379 };
    const socket: net.Socket = tls ? tls.connect({ ...target.tls, ...endpoint }) : net.connect(endpoint);
    const ready = tls ? 'secureConnect' : 'connect';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`Redis at ${target.label} did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('error', (error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new Error(`cannot connect to Redis at ${target.label}: ${error.message}`));
    });
    socket.once(ready, () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      socket.setNoDelay(true);
      resolve(socket);
    });
  });
}
