import fs from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import type { RedisOptions } from 'ioredis';

// Where Redis is. No runtime dependency (only ioredis' option types): the hook imports this before
// it knows whether it will talk to Redis at all. URLs (docs/teams.md):
//
//   redis://[user:pass@]host[:port][/db]          one server
//   rediss://…                                     one server over TLS
//   unix:///path/to/redis.sock[?db=N]              one server on a unix socket
//   redis+cluster://[user:pass@]host:port,host:port[,…]        Redis Cluster (seed nodes)
//   rediss+cluster://…                                          Redis Cluster over TLS
//   redis+sentinel://[user:pass@]host:port,host:port[,…]/master[/db][?sentinelPassword=…]
//   rediss+sentinel://…                                         Sentinel, TLS to sentinels and master
//
// TLS: `?ca=/path/ca.pem` (or $BATON_REDIS_CA) trusts a private CA; `?cert=`/`?key=` (or
// $BATON_REDIS_CERT / $BATON_REDIS_KEY) present a client certificate. Without a CA of its own, the
// machine's NODE_EXTRA_CA_CERTS is trusted as Node would, also where the launcher handed it over.

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export type RedisNode = Readonly<{ host: string; port: number }>;

/** How to reach Redis: one server (maybe behind Sentinel, which ioredis' Redis class handles) or a Cluster. */
export type RedisTarget =
  | Readonly<{ kind: 'single'; options: RedisOptions }>
  | Readonly<{ kind: 'sentinel'; options: RedisOptions }>
  | Readonly<{ kind: 'cluster'; nodes: readonly RedisNode[]; options: RedisOptions }>;

type Env = Record<string, string | undefined>;

const EXPECTED = 'expected redis://, rediss://, unix://, redis+cluster://, rediss+cluster://, redis+sentinel:// or rediss+sentinel://';

function invalid(url: string, why: string = EXPECTED): Error {
  return new Error(`invalid Redis URL '${redactRedisUrl(url)}': ${why}`);
}

/** True for URLs that name a Redis Cluster (prefixes must then carry a hash tag). */
export function isClusterUrl(url: string): boolean {
  return /^rediss?\+cluster:\/\//i.test(url);
}

export function redisTargetFromUrl(url: string, env: Env = process.env): RedisTarget {
  const multi = /^(rediss?)\+(cluster|sentinel):\/\/(?:([^@/?#]*)@)?([^/?#]+)(\/[^?#]*)?(?:\?([^#]*))?$/i.exec(url);
  if (multi) return multiNodeTarget(url, multi, env);
  if (/^rediss?\+/i.test(url)) throw invalid(url);
  return { kind: 'single', options: redisOptionsFromUrl(url, env) };
}

/** Options for one server (or a Sentinel-managed master); a Cluster URL needs redisTargetFromUrl. */
export function redisOptionsFromUrl(url: string, env: Env = process.env): RedisOptions {
  if (/^rediss?\+sentinel:\/\//i.test(url)) return redisTargetFromUrl(url, env).options;
  if (isClusterUrl(url))
    throw new Error(`'${redactRedisUrl(url)}' is a Redis Cluster URL; connect with redisTargetFromUrl (ioredis Cluster)`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(url);
  }
  const db = parsed.searchParams.get('db') ?? (parsed.pathname.length > 1 && parsed.protocol !== 'unix:' ? parsed.pathname.slice(1) : null);
  const options: RedisOptions = {};
  if (db !== null && db !== '') {
    if (!/^\d+$/.test(db)) throw invalid(url, 'database must be a number');
    options.db = Number(db);
  }
  if (parsed.username) options.username = decodeURIComponent(parsed.username);
  if (parsed.password) options.password = decodeURIComponent(parsed.password);
  switch (parsed.protocol) {
    case 'unix:':
      options.path = decodeURIComponent(parsed.pathname);
      return options;
    case 'rediss:':
    case 'redis:':
      if (parsed.protocol === 'rediss:') options.tls = tlsOptions(parsed.hostname, parsed.searchParams, env);
      options.host = unbracket(parsed.hostname) || '127.0.0.1';
      options.port = parsed.port ? Number(parsed.port) : 6379;
      return options;
    default:
      throw invalid(url);
  }
}

function multiNodeTarget(url: string, match: RegExpExecArray, env: Env): RedisTarget {
  const [, scheme, kind, userinfo, hostList, pathPart, query] = match;
  const tls = scheme!.toLowerCase() === 'rediss';
  const params = new URLSearchParams(query ?? '');
  const nodes = hostList!.split(',').map((entry) => parseNode(url, entry, kind!.toLowerCase() === 'sentinel' ? 26379 : 6379));
  const options: RedisOptions = {};
  if (userinfo) {
    const colon = userinfo.indexOf(':');
    const user = colon < 0 ? userinfo : userinfo.slice(0, colon);
    const pass = colon < 0 ? '' : userinfo.slice(colon + 1);
    if (user) options.username = decodeURIComponent(user);
    if (pass) options.password = decodeURIComponent(pass);
  }
  if (tls) options.tls = tlsOptions(nodes[0]!.host, params, env);
  if (kind!.toLowerCase() === 'cluster') {
    if (pathPart && pathPart !== '/') throw invalid(url, 'a Redis Cluster has only database 0; remove the path');
    return { kind: 'cluster', nodes, options };
  }
  const segments = (pathPart ?? '').split('/').filter(Boolean);
  const name = params.get('name') ?? (segments[0] ? decodeURIComponent(segments[0]) : null);
  if (!name) throw invalid(url, 'a Sentinel URL names the master: redis+sentinel://host:port,host:port/<master-name>');
  const db = params.get('db') ?? segments[1] ?? null;
  if (db !== null) {
    if (!/^\d+$/.test(db)) throw invalid(url, 'database must be a number');
    options.db = Number(db);
  }
  options.sentinels = nodes.map((node) => ({ host: node.host, port: node.port }));
  options.name = name;
  const sentinelUser = params.get('sentinelUsername');
  const sentinelPass = params.get('sentinelPassword');
  if (sentinelUser) options.sentinelUsername = sentinelUser;
  if (sentinelPass) options.sentinelPassword = sentinelPass;
  if (tls) {
    options.enableTLSForSentinelMode = true;
    options.sentinelTLS = options.tls;
  }
  return { kind: 'sentinel', options };
}

function parseNode(url: string, entry: string, defaultPort: number): RedisNode {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry.trim());
  if (!match) throw invalid(url, `cannot read node '${entry}': expected host:port`);
  const port = match[2] ? Number(match[2]) : defaultPort;
  if (!(port > 0 && port < 65536)) throw invalid(url, `node '${entry}' has no valid port`);
  return { host: unbracket(match[1]!), port };
}

function unbracket(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** TLS options: SNI for host names (not allowed for IP addresses), and the CA / client certificate if given. */
function tlsOptions(hostname: string, params: URLSearchParams, env: Env): NonNullable<RedisOptions['tls']> {
  const host = unbracket(hostname);
  const tls: NonNullable<RedisOptions['tls']> = {};
  if (host && net.isIP(host) === 0) tls.servername = host;
  const ca = params.get('ca') ?? env.BATON_REDIS_CA;
  const cert = params.get('cert') ?? env.BATON_REDIS_CERT;
  const key = params.get('key') ?? env.BATON_REDIS_KEY;
  if (ca) tls.ca = readPem(ca, 'CA (?ca= / BATON_REDIS_CA)');
  else {
    const extra = machineExtraCa(env);
    if (extra) tls.ca = extra;
  }
  if (cert) tls.cert = readPem(cert, 'client certificate (?cert= / BATON_REDIS_CERT)');
  if (key) tls.key = readPem(key, 'client key (?key= / BATON_REDIS_KEY)');
  return tls;
}

/**
 * What NODE_EXTRA_CA_CERTS would have trusted, for a process the `baton` launcher (bin/baton) started
 * without it (it parses the bundle at start, which `baton hook` and `baton task` skip): Node's own
 * roots plus the bundle, read only here, when the Redis is TLS. Unreadable: Node's roots alone, as
 * Node itself does with a bundle it cannot read.
 */
function machineExtraCa(env: Env): string[] | null {
  const file = env.BATON_NODE_EXTRA_CA_CERTS;
  if (!file) return null;
  let bundle: string;
  try {
    bundle = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const { rootCertificates } = createRequire(import.meta.url)('node:tls') as typeof import('node:tls');
  return [...rootCertificates, bundle];
}

function readPem(file: string, what: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the Redis TLS ${what} at ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

/** A URL safe to print: passwords (the user's and the sentinels') are masked. */
export function redactRedisUrl(url: string): string {
  return url.replace(/^([a-z+]+:\/\/[^:@/]*:)[^@/]*@/i, '$1***@').replace(/([?&](?:sentinelPassword|password)=)[^&#]*/gi, '$1***');
}
