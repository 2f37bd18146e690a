import os from 'node:os';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { assertPrefixFits, connectDurable, connectFast } from '../queue/connection.ts';
import { queueNameFor } from '../queue/keys.ts';
import { parseRepositoryEntry, repositoriesKey } from '../queue/keys.ts';
import type { QueueConfig } from '../queue/keys.ts';
import { createDashboardApp } from './app.ts';
import type { DashboardQueue } from './app.ts';
import { serveFetch } from './serve.ts';

// Starting a dashboard: check the bind policy, build the app, serve it, and keep its queue list in
// step with a source (the queues a worker serves, or every repository recorded in Redis).

export type { DashboardQueue } from './app.ts';

export const DEFAULT_DASHBOARD_HOST = '127.0.0.1';
export const DEFAULT_DASHBOARD_PORT = 3000;
/** Binds that need no token: only this machine can connect. */
const TOKENLESS_HOSTS = new Set(['127.0.0.1', 'localhost', '::1']);

export type QueueSource = Readonly<{ list(): Promise<readonly DashboardQueue[]> | readonly DashboardQueue[]; close?(): Promise<void> }>;

export type DashboardOptions = Readonly<{
  source: QueueSource;
  host?: string;
  port?: number;
  token?: string | null;
  allowWrites?: boolean;
  refreshMs?: number;
  log?: (line: string) => void;
}>;

export type RunningDashboard = Readonly<{
  url: string;
  host: string;
  port: number;
  readOnly: boolean;
  tokenRequired: boolean;
  /** Picks up new queues now rather than at the next refresh. */
  refresh(): Promise<void>;
  close(): Promise<void>;
}>;

export class DashboardConfigError extends Error {
  readonly code: string | undefined;
  constructor(message: string, code?: string) {
    super(message);
    this.code = code;
  }
}

/** The message for a bind that is refused, or null when it is allowed. */
export function bindProblem(host: string, token: string | null | undefined): string | null {
  if (TOKENLESS_HOSTS.has(host.toLowerCase()) || token) return null;
  return (
    `refusing to serve the dashboard on ${host} without a token: anyone who can reach that address could read every job. ` +
    'Set BATON_DASHBOARD_TOKEN=<secret> (or pass --token <secret>, which other users of the machine can read in the process list), or bind to 127.0.0.1, the default.'
  );
}

export function dashboardUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}/`;
}

export async function startDashboard(options: DashboardOptions): Promise<RunningDashboard> {
  const host = options.host ?? DEFAULT_DASHBOARD_HOST;
  const token = options.token || null;
  const problem = bindProblem(host, token);
  if (problem) throw new DashboardConfigError(problem);
  const log = options.log ?? (() => undefined);
  const dashboard = createDashboardApp({ token, allowWrites: options.allowWrites, allowedHosts: [host] });

  let refreshing: Promise<void> | null = null;
  const refresh = () => {
    refreshing ??= Promise.resolve()
      .then(() => options.source.list())
      .then((queues) => {
        const added = dashboard.sync(queues);
        if (added > 0) log(`dashboard: showing ${dashboard.queueNames().length} repository queue(s)`);
      })
      .catch((error: unknown) => log(`dashboard: cannot list queues: ${(error as Error).message}`))
      .finally(() => {
        refreshing = null;
      });
    return refreshing;
  };
  await refresh();
  const timer = setInterval(() => void refresh(), options.refreshMs ?? 1_000);
  (timer as { unref?: () => void }).unref?.();

  let served: Awaited<ReturnType<typeof serveFetch>>;
  try {
    served = await serveFetch(dashboard.app.fetch, { hostname: host, port: options.port ?? DEFAULT_DASHBOARD_PORT });
  } catch (error) {
    clearInterval(timer);
    await options.source.close?.();
    const code = (error as { code?: string }).code;
    if (code === 'EADDRINUSE')
      throw new DashboardConfigError(
        `port ${options.port ?? DEFAULT_DASHBOARD_PORT} on ${host} is in use; pass --port N (0 picks a free port)`,
        code,
      );
    if (code === 'EADDRNOTAVAIL') throw new DashboardConfigError(`cannot bind ${host}: no such local address`, code);
    throw error;
  }
  return {
    url: dashboardUrl(host, served.port),
    host,
    port: served.port,
    readOnly: options.allowWrites !== true,
    tokenRequired: token !== null,
    refresh,
    async close() {
      clearInterval(timer);
      await served.close();
      await options.source.close?.();
    },
  };
}

/** One line for people: where it is and what it allows. */
export function describeDashboard(dashboard: RunningDashboard): string {
  const mode = dashboard.readOnly ? 'read-only; --allow-writes enables retry' : 'writes enabled';
  const auth = dashboard.tokenRequired
    ? `; token required (open ${dashboard.url}?token=<token> once, or send Authorization: Bearer <token>)`
    : '';
  return `dashboard: ${dashboard.url} (${mode}${auth})`;
}

/** The queues a running worker serves; repositories it discovers later appear at the next refresh. */
export function workerQueueSource(worker: { queues(): readonly Queue[]; served(): readonly { id: string; root: string }[] }): QueueSource {
  const host = os.hostname();
  return {
    list() {
      const roots = new Map(worker.served().map((repo) => [queueNameFor(repo.id), repo] as const));
      return worker.queues().flatMap((queue) => {
        const repo = roots.get(queue.name);
        return repo ? [{ queue, root: repo.root, id: repo.id, host }] : [];
      });
    },
  };
}

/** Every repository recorded in Redis (`repositoriesKey`): what `baton dashboard` shows. */
export async function redisQueueSource(config: QueueConfig, connectTimeoutMs = 2_000): Promise<QueueSource> {
  assertPrefixFits(config.redisUrl, config.prefix);
  // Fail fast with a clear message when Redis is not there, then hold a reconnecting connection.
  const probe = await connectFast(config.redisUrl, connectTimeoutMs);
  probe.disconnect();
  const connection: Redis = connectDurable(config.redisUrl, 'baton-dashboard');
  connection.on('error', () => undefined);
  const queues = new Map<string, DashboardQueue>();
  return {
    async list() {
      const known = await connection.hgetall(repositoriesKey(config.prefix));
      for (const [id, value] of Object.entries(known)) {
        if (queues.has(id)) continue;
        const { root, host } = parseRepositoryEntry(value);
        const queue = new Queue(queueNameFor(id), { connection, prefix: config.prefix, skipVersionCheck: true });
        queue.on('error', () => undefined);
        queues.set(id, { queue, root, id, host });
      }
      return [...queues.values()];
    },
    async close() {
      await Promise.all([...queues.values()].map((entry) => entry.queue.close().catch(() => undefined)));
      connection.disconnect();
    },
  };
}
