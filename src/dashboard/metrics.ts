import fs from 'node:fs';
import path from 'node:path';
import { Counter, Gauge, Registry } from 'prom-client';
import type { Redis } from 'ioredis';
import { listRuns } from '../runs/runList.ts';
import type { RunRow } from '../runs/runList.ts';
import { DEFAULT_PREFIX, HEARTBEAT_TTL_MS, LATENCY_BUCKETS_S, heartbeatKey, liveServers, metricsKey, workersKey } from '../queue/keys.ts';
import { spooledFiles } from '../queue/spool.ts';
import type { DashboardRepository } from './repositories.ts';

// /metrics in the Prometheus text format, with prom-client. Event counters and the latency
// histogram come from the hashes every worker process increments in Redis (workers/jobRecords.ts),
// so any dashboard reports the totals of all workers; queue depth, heartbeats, runs and spools are
// read at scrape time. One snapshot per scrape feeds every metric.

type Labels = Record<string, string | number>;

export type MetricsSnapshot = Readonly<{
  repositories: readonly DashboardRepository[];
  events: Readonly<Record<string, string>>;
  latency: Readonly<Record<string, string>>;
  costs: Readonly<Record<string, string>>;
  queueCounts: ReadonlyMap<string, Record<string, number>>;
  heartbeats: ReadonlyMap<string, readonly (readonly [string, number])[]>;
  runs: ReadonlyMap<string, readonly RunRow[] | null>;
  spool: ReadonlyMap<string, number | null>;
  now: number;
}>;

const TOKEN_KINDS: Readonly<Record<string, string>> = {
  input: 'input',
  output: 'output',
  cacheRead: 'cache_read',
  cacheCreation: 'cache_creation',
};

const QUEUE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed', 'completed'] as const;

export type MetricsEndpoint = Readonly<{ contentType: string; render(): Promise<string> }>;

export function createMetrics(
  repositories: () => readonly DashboardRepository[],
  dashboard: { liveStreams(): number } = { liveStreams: () => 0 },
): MetricsEndpoint {
  const registry = new Registry();
  new Gauge({
    name: 'baton_dashboard_live_streams',
    help: 'Run-view pages this dashboard is keeping current (open server-sent event streams).',
    registers: [registry],
    collect() {
      this.set(dashboard.liveStreams());
    },
  });
  let snapshot: MetricsSnapshot | null = null;
  const byId = () => new Map((snapshot?.repositories ?? []).map((repo) => [repo.id, repo] as const));
  const labelsOf = (repo: DashboardRepository) => ({ repository: repo.root, machine: repo.machine });

  /** A metric labelled by repository and machine, then `extra`. */
  const perRepository = (name: string, help: string, extra: readonly string[]) => ({
    name,
    help,
    labelNames: ['repository', 'machine', ...extra],
    registers: [registry],
  });

  /** A counter over the workers' events hash (`<checkout id>\t<intent>\t<outcome>` → count); `labels` picks the outcomes it counts. */
  const eventCounter = (name: string, help: string, extra: readonly string[], labels: (intent: string, outcome: string) => Labels | null) =>
    new Counter({
      ...perRepository(name, help, extra),
      collect() {
        this.reset();
        const repos = byId();
        for (const [field, value] of Object.entries(snapshot?.events ?? {})) {
          const [id, intent, outcome] = field.split('\t');
          const repo = repos.get(id ?? '');
          const counted = repo && intent && outcome !== undefined ? labels(intent, outcome) : null;
          if (repo && counted) this.inc({ ...labelsOf(repo), ...counted }, Number(value));
        }
      },
    });
  eventCounter(
    'baton_events_applied_total',
    'Events a worker applied, by repository, intent and the orchestration status of the result (failed = refused by the lifecycle rules).',
    ['intent', 'result'],
    (intent, outcome) => (outcome.startsWith('applied:') ? { intent, result: outcome.slice('applied:'.length) } : null),
  );
  eventCounter(
    'baton_events_failed_total',
    'Jobs a worker could not apply (the job failed; its run is paused with BATON_EVENT_FAILED), by repository and intent.',
    ['intent'],
    (intent, outcome) => (outcome === 'failed' ? { intent } : null),
  );
  eventCounter(
    'baton_reconciliations_total',
    'Delegations a worker settled itself because an awaited hook event did not come within its grace, by repository and kind (sealed, stalled, not-started).',
    ['kind'],
    (intent, outcome) =>
      intent === 'reconcile' && outcome.startsWith('reconciled:') ? { kind: outcome.slice('reconciled:'.length) } : null,
  );
  /** A counter over the workers' costs hash (`<checkout id>\t<role>\t<model>\t<kind>` → count); `kinds` picks and names what it counts. */
  const costCounter = (name: string, help: string, extra: readonly string[], labels: (kind: string) => Labels | null) =>
    new Counter({
      ...perRepository(name, help, ['role', 'model', ...extra]),
      collect() {
        this.reset();
        const repos = byId();
        for (const [field, value] of Object.entries(snapshot?.costs ?? {})) {
          const [id, role, model, kind] = field.split('\t');
          const repo = repos.get(id ?? '');
          const counted = repo && role && model && kind ? labels(kind) : null;
          if (repo && counted) this.inc({ ...labelsOf(repo), role: role!, model: model!, ...counted }, Number(value));
        }
      },
    });
  costCounter(
    'baton_stage_tokens_total',
    'Tokens of the children\'s model requests at each seal, by the client\'s own record (docs/run-view.md "What a stage cost"), per repository, role, model and kind (input, output, cache_read, cache_creation).',
    ['kind'],
    (kind) => (TOKEN_KINDS[kind] ? { kind: TOKEN_KINDS[kind] } : null),
  );
  costCounter(
    'baton_stage_requests_total',
    "The children's model requests at each seal, by the client's own record, per repository, role and model.",
    [],
    (kind) => (kind === 'requests' ? {} : null),
  );
  // The histogram's buckets are counted by the workers; prom-client formats them.
  registry.registerMetric({
    name: 'baton_event_latency_seconds',
    help: 'Time from enqueue (job created in Redis) to applied (run files written), per repository.',
    type: 'histogram',
    aggregator: 'sum',
    get: async () => ({
      name: 'baton_event_latency_seconds',
      help: 'Time from enqueue (job created in Redis) to applied (run files written), per repository.',
      type: 'histogram',
      aggregator: 'sum',
      values: latencyValues(snapshot),
    }),
  } as unknown as Parameters<Registry['registerMetric']>[0]);
  /** A gauge of per-repository samples (`extra` labels after repository and machine), read from the snapshot. */
  const repositoryGauge = (
    name: string,
    help: string,
    extra: readonly string[],
    samples: (repo: DashboardRepository, taken: MetricsSnapshot) => Iterable<readonly [Labels, number]>,
  ) =>
    new Gauge({
      ...perRepository(name, help, extra),
      collect() {
        this.reset();
        if (!snapshot) return;
        for (const repo of snapshot.repositories) {
          for (const [labels, value] of samples(repo, snapshot)) this.set({ ...labelsOf(repo), ...labels }, value);
        }
      },
    });
  repositoryGauge(
    'baton_queue_jobs',
    'Jobs in each repository queue by state; waiting + prioritized + delayed is the backlog.',
    ['state'],
    (repo, taken) => {
      const counts = taken.queueCounts.get(repo.id);
      return counts ? QUEUE_STATES.map((state) => [{ state }, counts[state] ?? 0] as const) : [];
    },
  );
  repositoryGauge(
    'baton_runs',
    'Orchestration runs by status (corrupt = run file unreadable), per repository whose files this dashboard can read.',
    ['status'],
    (repo, taken) => {
      const rows = taken.runs.get(repo.id);
      return rows
        ? ['running', 'paused', 'completed', 'corrupt'].map(
            (status) => [{ status }, rows.filter((row) => row.status === status).length] as const,
          )
        : [];
    },
  );
  repositoryGauge(
    'baton_pending_delegations',
    'Runs with a pending delegation (prepared and not yet consumed), per repository.',
    [],
    (repo, taken) => {
      const rows = taken.runs.get(repo.id);
      return rows ? [[{}, rows.filter((row) => row.status !== 'corrupt' && row.pending !== null).length]] : [];
    },
  );
  repositoryGauge(
    'baton_oldest_pending_delegation_age_seconds',
    'Age of the oldest pending delegation (since prepare), per repository; 0 when none is pending.',
    [],
    (repo, taken) => {
      const rows = taken.runs.get(repo.id);
      if (!rows) return [];
      const since = rows
        .flatMap((row) => (row.status !== 'corrupt' && row.pending ? [Date.parse(row.pending.since)] : []))
        .filter((at) => !Number.isNaN(at));
      return [[{}, since.length === 0 ? 0 : Math.max(0, (taken.now - Math.min(...since)) / 1000)]];
    },
  );
  repositoryGauge(
    'baton_spool_events',
    'Events hooks spooled to .git/baton/spool/ while Redis was down, not yet queued.',
    [],
    (repo, taken) => {
      const count = taken.spool.get(repo.id);
      return count !== null && count !== undefined ? [[{}, count]] : [];
    },
  );
  repositoryGauge('baton_workers', 'Worker processes with a live heartbeat for the repository queue.', [], (repo, taken) => [
    [{}, taken.heartbeats.get(repo.id)?.length ?? 0],
  ]);
  repositoryGauge(
    'baton_worker_heartbeat_age_seconds',
    'Seconds since each live worker last beat for the repository queue (beats every 1.5 s; gone after 5 s).',
    ['worker'],
    (repo, taken) =>
      (taken.heartbeats.get(repo.id) ?? []).map(
        ([worker, expiry]) => [{ worker }, Math.max(0, (taken.now - (expiry - HEARTBEAT_TTL_MS)) / 1000)] as const,
      ),
  );

  let scraping: Promise<string> = Promise.resolve('');
  return {
    contentType: registry.contentType,
    render() {
      // One scrape at a time: the metrics read the shared snapshot.
      scraping = scraping
        .catch(() => '')
        .then(async () => {
          snapshot = await takeSnapshot(repositories());
          return registry.metrics();
        });
      return scraping;
    },
  };
}

function latencyValues(snapshot: MetricsSnapshot | null): { value: number; labels: Labels; metricName: string }[] {
  if (!snapshot) return [];
  const values: { value: number; labels: Labels; metricName: string }[] = [];
  for (const repo of snapshot.repositories) {
    const field = (name: string) => Number(snapshot.latency[`${repo.id}\t${name}`] ?? 0);
    const count = field('count');
    if (count === 0) continue;
    const labels = { repository: repo.root, machine: repo.machine };
    let cumulative = 0;
    for (const bound of LATENCY_BUCKETS_S) {
      cumulative += field(String(bound));
      values.push({ value: cumulative, labels: { ...labels, le: bound }, metricName: 'baton_event_latency_seconds_bucket' });
    }
    values.push({ value: count, labels: { ...labels, le: '+Inf' }, metricName: 'baton_event_latency_seconds_bucket' });
    values.push({ value: field('sum'), labels, metricName: 'baton_event_latency_seconds_sum' });
    values.push({ value: count, labels, metricName: 'baton_event_latency_seconds_count' });
  }
  return values;
}

async function takeSnapshot(repositories: readonly DashboardRepository[]): Promise<MetricsSnapshot> {
  const now = Date.now();
  const first = repositories[0];
  const redis: Redis | null = first ? await redisOf(first) : null;
  const prefix = first?.queue.opts.prefix ?? DEFAULT_PREFIX;
  const [events, latency, costs, liveWorkers] = redis
    ? await Promise.all([
        redis.hgetall(metricsKey(prefix, 'events')),
        redis.hgetall(metricsKey(prefix, 'latency')),
        redis.hgetall(metricsKey(prefix, 'costs')),
        redis.zrangebyscore(workersKey(prefix), now, '+inf', 'WITHSCORES'),
      ])
    : [{}, {}, {}, []];
  const queueCounts = new Map<string, Record<string, number>>();
  const heartbeats = new Map<string, (readonly [string, number])[]>();
  const runs = new Map<string, RunRow[] | null>();
  const spool = new Map<string, number | null>();
  await Promise.all(
    repositories.map(async (repo) => {
      const client = await redisOf(repo);
      const [counts, members] = await Promise.all([
        repo.queue.getJobCounts(...QUEUE_STATES),
        client.zrange(heartbeatKey(repo.queue.opts.prefix ?? prefix, repo.queue.name), '0', '-1', 'WITHSCORES'),
      ]);
      queueCounts.set(repo.id, counts);
      // Serving workers whose process heartbeat is live (docs/architecture.md "Serving on demand").
      const live = liveServers(members, liveWorkers, now);
      heartbeats.set(repo.id, live);
      // Files of a repository on another machine are not readable here: those metrics are left out.
      if (!fs.existsSync(path.join(repo.root, '.git'))) {
        runs.set(repo.id, null);
        spool.set(repo.id, null);
        return;
      }
      try {
        runs.set(repo.id, await listRuns(repo.root));
      } catch {
        runs.set(repo.id, null);
      }
      try {
        spool.set(repo.id, spooledFiles(repo.root).length);
      } catch {
        spool.set(repo.id, null);
      }
    }),
  );
  return { repositories, events, latency, costs, queueCounts, heartbeats, runs, spool, now };
}

/** The queue's own Redis connection (BullMQ's Redis backend exposes it). */
function redisOf(repo: DashboardRepository): Promise<Redis> {
  return repo.queue.getBackend().client as unknown as Promise<Redis>;
}
