import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { findRedisServer } from '../../src/redisServer/launch.ts';

// Real Redis topologies for the team tests, each started by the test on free ports of 127.0.0.1
// (never a fixed port) in a temp dir: a Redis Cluster (3 masters + 3 replicas), a Sentinel setup
// (1 master, 1 replica, 3 sentinels), and a TLS server with a CA and certificate made by openssl.

/** What a team test starts on its topology and stops after its last test: processes, then repositories. */
export type TopologyUsers = {
  repos: { cleanup(): void }[];
  processes: { stop(signal?: NodeJS.Signals): Promise<unknown> }[];
};

/**
 * One topology for the whole file: `start` makes it before the first test (`use` gets it); after the
 * last, the processes the tests pushed are killed, then the repositories they pushed are removed (once
 * nothing writes into them), then the topology stops.
 */
export function useTopology<T extends { stop(): Promise<void> }>(start: () => Promise<T>, use: (topology: T) => void): TopologyUsers {
  let topology: T | null = null;
  const users: TopologyUsers = { repos: [], processes: [] };
  beforeAll(async () => {
    topology = await start();
    use(topology);
  }, 90_000);
  afterAll(async () => {
    await Promise.all(users.processes.map((user) => user.stop('SIGKILL')));
    for (const repo of users.repos) repo.cleanup();
    await topology?.stop();
  });
  return users;
}

export type RedisNodeProcess = { port: number; dir: string; child: ChildProcess | null; stop(signal?: NodeJS.Signals): Promise<void> };

function redisServerBinary(): string {
  const found = findRedisServer();
  if (!found) throw new Error('these tests need redis-server (apt-get install -y redis-server, or scripts/setup.sh)');
  return found;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

const taken = new Set<number>();

/** A free port (and, for cluster nodes, a free bus port at +10000) on 127.0.0.1. */
export async function freePort(options: { bus?: boolean } = {}): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    if (taken.has(port) || (options.bus && taken.has(port + 10_000))) continue;
    if (!(await canListen(port))) continue;
    if (options.bus && !(await canListen(port + 10_000))) continue;
    taken.add(port);
    if (options.bus) taken.add(port + 10_000);
    return port;
  }
  throw new Error('no free port found on 127.0.0.1');
}

export async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | null | undefined | false>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One short-lived client to a node (test plumbing, not baton's code path). */
export const withNodeAt = withNode;

export async function withNode<T>(
  options: { port: number; tls?: object; username?: string; password?: string },
  use: (client: Redis) => Promise<T>,
): Promise<T> {
  const client = new Redis({
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1_000,
    ...options,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await use(client);
  } finally {
    client.disconnect();
  }
}

export function startNode(
  dir: string,
  port: number,
  args: readonly string[],
  options: { ping?: boolean; tls?: object } = {},
): Promise<RedisNodeProcess> {
  fs.mkdirSync(dir, { recursive: true });
  const child = spawn(redisServerBinary(), [...args, '--dir', dir, '--logfile', path.join(dir, 'redis.log')], { stdio: 'ignore' });
  const node: RedisNodeProcess = {
    port,
    dir,
    child,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      const running = node.child;
      node.child = null;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill(signal);
      const timer = setTimeout(() => running.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
  if (options.ping === false) return Promise.resolve(node);
  return waitFor(`redis-server on port ${port} did not answer (see ${path.join(dir, 'redis.log')})`, 10_000, () =>
    withNode({ port, ...(options.tls ? { tls: options.tls } : {}) }, async (client) => (await client.ping()) === 'PONG' && node),
  );
}

const durable = ['--bind', '127.0.0.1', '--appendonly', 'yes', '--save', '', '--maxmemory-policy', 'noeviction'];

// ---------------------------------------------------------------------------------------------

export type RedisClusterSetup = {
  url: string;
  dir: string;
  nodes: RedisNodeProcess[];
  /** The port of the master that serves `key`'s slot right now. */
  masterOf(key: string): Promise<number>;
  /** Stops that master (SIGTERM) and returns once it has exited: the failover has begun. */
  stopMasterOf(key: string): Promise<number>;
  /** Waits until a replica has taken `key`'s slot over from the stopped master; its port. */
  promotedAfter(key: string, stopped: number): Promise<number>;
  stop(): Promise<void>;
};

/** With `tls`, every node speaks only TLS (clients, cluster bus, replication), with certificates from makeCertificates. */
export async function startRedisCluster(options: { tls?: Certificates } = {}): Promise<RedisClusterSetup> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-cluster-'));
  const ports: number[] = [];
  for (let index = 0; index < 6; index += 1) ports.push(await freePort({ bus: true }));
  const certs = options.tls;
  const tls = certs ? { ca: fs.readFileSync(certs.caFile) } : undefined;
  const withNode = <T>(node: { port: number }, use: (client: Redis) => Promise<T>) => withNodeAt({ ...node, ...(tls ? { tls } : {}) }, use);
  const nodes = await Promise.all(
    ports.map((port) =>
      startNode(
        path.join(dir, String(port)),
        port,
        [
          ...(certs
            ? ['--port', '0', '--tls-port', String(port), '--tls-cluster', 'yes', '--tls-replication', 'yes', ...tlsServerArgs(certs)]
            : ['--port', String(port)]),
          ...durable,
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          path.join(dir, String(port), 'nodes.conf'),
          '--cluster-node-timeout',
          '2000',
          // a replica takes over however long it was disconnected (the test stops masters on purpose)
          '--cluster-replica-validity-factor',
          '0',
        ],
        tls ? { tls } : {},
      ),
    ),
  );
  const setup = {
    url: `${certs ? 'rediss' : 'redis'}+cluster://${ports.map((port) => `127.0.0.1:${port}`).join(',')}`,
    dir,
    nodes,
    async masterOf(key: string) {
      const alive = nodes.filter((node) => node.child !== null);
      return withNode({ port: alive[0]!.port }, async (client) => {
        const slot = (await client.call('CLUSTER', 'KEYSLOT', key)) as number;
        const ranges = (await client.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, string], ...unknown[]][];
        const owner = ranges.find(([from, to]) => slot >= from && slot <= to);
        if (!owner) throw new Error(`no master serves slot ${slot}`);
        return owner[2][1];
      });
    },
    async stopMasterOf(key: string) {
      const stopped = await setup.masterOf(key);
      await nodes.find((node) => node.port === stopped)!.stop('SIGTERM');
      return stopped;
    },
    promotedAfter(key: string, stopped: number) {
      return waitFor(`no replica took over from ${stopped}`, 60_000, async () => {
        const port = await setup.masterOf(key);
        if (port === stopped) return null;
        const state = (await withNode({ port }, (client) => client.call('CLUSTER', 'INFO'))) as string;
        return state.includes('cluster_state:ok') ? port : null;
      });
    },
    async stop() {
      await Promise.all(nodes.map((node) => node.stop('SIGKILL')));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    const create = spawnSync(
      'redis-cli',
      [
        ...(certs ? ['--tls', '--cacert', certs.caFile] : []),
        '--cluster',
        'create',
        ...ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        '1',
        '--cluster-yes',
      ],
      {
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`);
    await waitFor('the cluster did not become ready', 40_000, async () => {
      for (const port of ports) {
        const info = (await withNode({ port }, (client) => client.call('CLUSTER', 'INFO'))) as string;
        if (!info.includes('cluster_state:ok') || !info.includes('cluster_known_nodes:6')) return false;
      }
      // every master has its replica in sync
      const replicas = await Promise.all(ports.map((port) => withNode({ port }, (client) => client.info('replication'))));
      return replicas.filter((info) => info.includes('role:slave') && info.includes('master_link_status:up')).length === 3;
    });
  } catch (error) {
    await setup.stop();
    throw error;
  }
  return setup;
}

// ---------------------------------------------------------------------------------------------

export type SentinelSetup = {
  url: string;
  masterName: string;
  master: RedisNodeProcess;
  replica: RedisNodeProcess;
  sentinels: RedisNodeProcess[];
  currentMaster(): Promise<number>;
  /** Stops the current master (SIGTERM) and returns once it has exited: the failover has begun. */
  stopMaster(): Promise<number>;
  /** Waits until the sentinels have promoted the replica of the stopped master; its port. */
  promotedAfter(stopped: number): Promise<number>;
  stop(): Promise<void>;
};

export async function startSentinels(): Promise<SentinelSetup> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-sentinel-'));
  const masterName = 'batonmaster';
  const [masterPort, replicaPort] = [await freePort(), await freePort()];
  const master = await startNode(path.join(dir, 'master'), masterPort!, ['--port', String(masterPort), ...durable]);
  const replica = await startNode(path.join(dir, 'replica'), replicaPort!, [
    '--port',
    String(replicaPort),
    ...durable,
    '--replicaof',
    '127.0.0.1',
    String(masterPort),
  ]);
  const sentinels: RedisNodeProcess[] = [];
  const all = () => [master, replica, ...sentinels];
  const setup: SentinelSetup = {
    url: '',
    masterName,
    master,
    replica,
    sentinels,
    async currentMaster() {
      const alive = sentinels.find((node) => node.child !== null)!;
      const [, port] = (await withNode({ port: alive.port }, (client) =>
        client.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName),
      )) as [string, string];
      return Number(port);
    },
    async stopMaster() {
      const stopped = await setup.currentMaster();
      await all()
        .find((node) => node.port === stopped)!
        .stop('SIGTERM');
      return stopped;
    },
    promotedAfter(stopped: number) {
      return waitFor('the sentinels did not promote the replica', 60_000, async () => {
        const port = await setup.currentMaster();
        if (port === stopped) return null;
        const role = await withNode({ port }, (client) => client.info('replication'));
        return role.includes('role:master') ? port : null;
      });
    },
    async stop() {
      await Promise.all(all().map((node) => node.stop('SIGKILL')));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await waitFor('the replica did not sync', 30_000, async () =>
      (await withNode({ port: replicaPort! }, (client) => client.info('replication'))).includes('master_link_status:up'),
    );
    for (let index = 0; index < 3; index += 1) {
      const port = await freePort();
      const sentinelDir = path.join(dir, `sentinel-${index}`);
      fs.mkdirSync(sentinelDir, { recursive: true });
      const config = path.join(sentinelDir, 'sentinel.conf');
      fs.writeFileSync(
        config,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `sentinel monitor ${masterName} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${masterName} 2000`,
          `sentinel failover-timeout ${masterName} 10000`,
          `sentinel parallel-syncs ${masterName} 1`,
          '',
        ].join('\n'),
      );
      sentinels.push(await startNode(sentinelDir, port, [config, '--sentinel']));
    }
    // Sentinels find the replica and each other through the master; failover needs both.
    await waitFor('the sentinels did not discover each other and the replica', 40_000, async () => {
      for (const sentinel of sentinels) {
        const known = await withNode({ port: sentinel.port }, async (client) => ({
          sentinels: ((await client.call('SENTINEL', 'SENTINELS', masterName)) as unknown[]).length,
          replicas: ((await client.call('SENTINEL', 'REPLICAS', masterName)) as unknown[]).length,
        }));
        if (known.sentinels < 2 || known.replicas < 1) return false;
      }
      return true;
    });
  } catch (error) {
    await setup.stop();
    throw error;
  }
  setup.url = `redis+sentinel://${sentinels.map((node) => `127.0.0.1:${node.port}`).join(',')}/${masterName}`;
  return setup;
}

// ---------------------------------------------------------------------------------------------

export type TlsSetup = { port: number; dir: string; caFile: string; node: RedisNodeProcess; stop(): Promise<void> };

export type Certificates = { dir: string; caFile: string; certFile: string; keyFile: string };

function openssl(args: readonly string[], cwd: string): void {
  const run = spawnSync('openssl', args, { cwd, encoding: 'utf8', timeout: 20_000 });
  if (run.status !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${run.stderr}`);
}

/** A CA and a server certificate for 127.0.0.1/localhost, made by openssl in `dir`. */
export function makeCertificates(dir: string): Certificates {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', '-new', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=baton test CA'], dir);
  openssl(['req', '-new', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost'], dir);
  fs.writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.pem',
      '-days',
      '2',
      '-extfile',
      'san.ext',
    ],
    dir,
  );
  return { dir, caFile: path.join(dir, 'ca.pem'), certFile: path.join(dir, 'server.pem'), keyFile: path.join(dir, 'server.key') };
}

function tlsServerArgs(certs: Certificates): string[] {
  return [
    '--tls-cert-file',
    certs.certFile,
    '--tls-key-file',
    certs.keyFile,
    '--tls-ca-cert-file',
    certs.caFile,
    '--tls-auth-clients',
    'no',
  ];
}

/** A CA and a server certificate for 127.0.0.1/localhost, made by openssl, and redis-server speaking only TLS. */
export async function startTlsRedis(): Promise<TlsSetup> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-tls-'));
  const certs = makeCertificates(dir);
  const port = await freePort();
  const caFile = path.join(dir, 'ca.pem');
  const node = await startNode(
    path.join(dir, 'data'),
    port,
    ['--port', '0', '--tls-port', String(port), ...tlsServerArgs(certs), ...durable],
    { tls: { ca: fs.readFileSync(caFile) } },
  );
  return {
    port,
    dir,
    caFile,
    node,
    async stop() {
      await node.stop('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
