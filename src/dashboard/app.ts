import fs from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Hono } from 'hono';
import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { serveStatic as baseServeStatic } from 'hono/serve-static';
import { createBullBoard } from '@bull-board/api';
import { HonoAdapter } from '@bull-board/hono';
import type { Queue } from 'bullmq';
import { createMetrics } from './metrics.ts';
import { servedOffline } from './offline.ts';
import { ServingAwareAdapter } from './servingWorkers.ts';
import { localMachine } from './repositories.ts';
import type { DashboardRepository } from './repositories.ts';
import { registerRunPages } from './runPages/routes.ts';

// The dashboard as a runtime-neutral Hono app: bull-board over baton's repository queues, the run
// view (/runs, runPages/) and /metrics (metrics.ts), all behind
// baton's own guard (token, host check, read-only). Nothing here knows how it is served; see
// serve.ts for the Node/Bun/Deno edge. Static files and views are read with node:fs, which all
// three runtimes provide.

/** host: the machine the checkout is on (null for entries recorded before baton kept it). */
export type DashboardQueue = Readonly<{ queue: Queue; root: string; id: string; host?: string | null }>;

export type DashboardAppOptions = Readonly<{
  /** When set, every request must carry it (bearer header, or the cookie `?token=` sets). */
  token?: string | null;
  /** Retry/remove/promote and the other mutating routes; off unless asked for. */
  allowWrites?: boolean;
  /**
   * Host names the app answers to when no token is set (DNS-rebinding guard for a loopback bind).
   * Defaults to the loopback names.
   */
  allowedHosts?: readonly string[];
  /** How often a watched run page checks its run for changes (server-sent events). */
  runPollMs?: number;
}>;

export type DashboardApp = Readonly<{
  app: Hono;
  /** Adds the queues not shown yet (queues never disappear while the dashboard runs). */
  sync(queues: readonly DashboardQueue[]): number;
  queueNames(): string[];
  repositories(): DashboardRepository[];
}>;

export const TOKEN_COOKIE = 'baton_dashboard_token';
const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '::1', '[::1]'];
/** Writes that would break baton's guarantees even when writes are enabled (global concurrency is the one-at-a-time rule). */
const ALWAYS_REFUSED = [/\/api\/queues\/[^/]+\/concurrency$/];

export function createDashboardApp(options: DashboardAppOptions = {}): DashboardApp {
  const token = options.token || null;
  const allowWrites = options.allowWrites === true;
  const allowedHosts = new Set([...LOOPBACK_HOSTS, ...(options.allowedHosts ?? [])].map((host) => host.toLowerCase()));

  const serverAdapter = new HonoAdapter(nodeServeStatic);
  serverAdapter.setBasePath('/');
  const board = createBullBoard({
    queues: [],
    serverAdapter,
    options: {
      // bull-board finds its UI with an eval'd require.resolve, which a bundle cannot follow.
      uiBasePath: path.dirname(createRequire(import.meta.url).resolve('@bull-board/ui/package.json')),
      // The run view and the metrics are one click away from bull-board's header (its "misc links" menu).
      uiConfig: {
        boardTitle: 'baton',
        hideDocsLink: true,
        showWorkers: true,
        miscLinks: [
          { text: 'Runs', url: '/runs' },
          { text: 'Metrics', url: '/metrics' },
        ],
      },
    },
  });
  const shown = new Map<string, DashboardRepository>();

  const app = new Hono();
  app.use('*', servedOffline());
  app.use('*', async (c, next) => {
    c.header('X-Frame-Options', 'DENY');
    c.header('X-Content-Type-Options', 'nosniff');
    // A `?token=` URL must not leak through the Referer header.
    c.header('Referrer-Policy', 'no-referrer');
    await next();
  });
  app.use('*', async (c, next) => {
    if (token) {
      const fromQuery = c.req.query('token');
      if (fromQuery !== undefined && safeEqual(fromQuery, token)) {
        setCookie(c, TOKEN_COOKIE, token, { httpOnly: true, sameSite: 'Strict', path: '/' });
        const url = new URL(c.req.url);
        url.searchParams.delete('token');
        return c.redirect(`${url.pathname}${url.search}`, 303);
      }
      if (!hasToken(c, token)) {
        c.header('WWW-Authenticate', 'Bearer realm="baton dashboard"');
        return c.text(
          'baton dashboard: a token is required (Authorization: Bearer <token>, or open the URL with ?token=<token> once)\n',
          401,
        );
      }
    } else {
      const host = hostnameOf(c.req.header('host'));
      if (host === null || !allowedHosts.has(host)) {
        return c.text(
          `baton dashboard: host '${c.req.header('host') ?? ''}' is not allowed; without a token the dashboard only answers to loopback names\n`,
          403,
        );
      }
    }
    if (!isSafeMethod(c.req.method)) {
      if (!allowWrites)
        return c.json({ error: 'the baton dashboard is read-only; restart it with --allow-writes to retry or remove jobs' }, 403);
      const refused = crossSiteWrite(c, token);
      if (refused) return c.json({ error: refused }, 403);
      if (ALWAYS_REFUSED.some((pattern) => pattern.test(c.req.path))) {
        return c.json(
          { error: 'baton applies each repository queue one job at a time; its global concurrency cannot be changed here' },
          403,
        );
      }
    }
    await next();
  });
  app.get('/baton/health', (c) =>
    c.json({
      ok: true,
      queues: [...shown.values()].map((entry) => ({
        name: entry.queue.name,
        root: entry.root,
        host: entry.host ?? null,
        checkout: entry.id,
      })),
    }),
  );
  const repositories = () => [...shown.values()];
  const runPages = registerRunPages(app, { repositories, pollMs: options.runPollMs });
  const metrics = createMetrics(repositories, { liveStreams: runPages.liveStreams });
  app.get('/metrics', async (c) => {
    c.header('Content-Type', metrics.contentType);
    c.header('Cache-Control', 'no-store');
    return c.body(await metrics.render());
  });
  app.route('/', serverAdapter.registerPlugin());

  return {
    app,
    sync(queues) {
      let added = 0;
      for (const entry of queues) {
        if (shown.has(entry.queue.name)) continue;
        shown.set(entry.queue.name, {
          queue: entry.queue,
          root: entry.root,
          id: entry.id,
          host: entry.host ?? null,
          machine: entry.host ?? localMachine(),
        });
        board.addQueue(
          new ServingAwareAdapter(entry.queue, entry.root, {
            readOnlyMode: !allowWrites,
            allowRetries: allowWrites,
            // bull-board names a queue by prefix + queue name (menu, URLs): lead with the repository path.
            prefix: `${entry.root} · `,
            // Two machines may have a checkout at the same path: the host tells them apart.
            displayName: entry.host ? `${entry.root} (${entry.host})` : entry.root,
            description: `queue ${entry.queue.name}: checkout ${entry.id} at ${entry.host ? `${entry.host}:` : ''}${entry.root}`,
          }),
        );
        added += 1;
      }
      return added;
    },
    queueNames: () => [...shown.keys()],
    repositories,
  };
}

function isSafeMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
}

function bearerToken(c: Context): string | null {
  const header = c.req.header('authorization');
  return (header && /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim()) || null;
}

function hasToken(c: Context, token: string): boolean {
  const bearer = bearerToken(c);
  if (bearer && safeEqual(bearer, token)) return true;
  const cookie = getCookie(c, TOKEN_COOKIE);
  return cookie !== undefined && safeEqual(cookie, token);
}

/**
 * Why a write may have come from another site, or null when it comes from the dashboard's own pages
 * (bull-board's UI sends writes with fetch, and browsers send `Origin` on those, and
 * `Sec-Fetch-Site: same-origin`). Refused: a browser's mark of another site (`cross-site`, and
 * `same-site`: another port of the same host is another origin), an `Origin` that is not the host the
 * request reached, and no `Origin` at all, unless the request carries the token as a bearer header
 * (a script: a browser never adds that header by itself).
 */
function crossSiteWrite(c: Context, token: string | null): string | null {
  const site = c.req.header('sec-fetch-site')?.toLowerCase();
  if (site === 'cross-site' || site === 'same-site') return `cross-origin write refused (Sec-Fetch-Site: ${site})`;
  const origin = c.req.header('origin');
  if (!origin) {
    const bearer = bearerToken(c);
    if (token && bearer && safeEqual(bearer, token)) return null;
    return 'write refused: no Origin header (a script sends the token as Authorization: Bearer <token>)';
  }
  try {
    if (new URL(origin).host.toLowerCase() === (c.req.header('host') ?? '').toLowerCase()) return null;
  } catch {
    // not a URL: refused below
  }
  return 'cross-origin write refused';
}

function hostnameOf(hostHeader: string | undefined): string | null {
  if (!hostHeader) return null;
  try {
    return new URL(`http://${hostHeader}`).hostname.toLowerCase();
  } catch {
    return null;
  }
}

/** Compares in time independent of where the strings differ (no runtime-specific crypto needed). */
export function safeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let index = 0; index < b.length; index += 1) diff |= (a.charCodeAt(index) || 0) ^ b.charCodeAt(index);
  return diff === 0;
}

/** bull-board's static files through Hono's runtime-agnostic serveStatic, read with node:fs. */
function nodeServeStatic(options: { root?: string; rewriteRequestPath?: (p: string) => string }) {
  return baseServeStatic({
    ...options,
    root: path.resolve(options.root ?? '.'),
    join: path.join,
    getContent: async (file: string) => {
      try {
        return new Uint8Array(await fs.readFile(file));
      } catch {
        return null;
      }
    },
  });
}
