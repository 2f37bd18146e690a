import os from 'node:os';
import type { Queue } from 'bullmq';

// A repository as the dashboard knows it: its queue, its path and the machine that path is on.
// The registry in Redis (`repositoriesKey`) maps a repository id to its root; a record may also be
// JSON carrying the machine (`{"root": …, "machine"|"host": …}`). Without a machine, the repository
// is taken to be on this dashboard's host.

export type DashboardRepository = Readonly<{ queue: Queue; root: string; id: string; machine: string }>;

export type RepositoryRecord = Readonly<{ root: string; machine: string }>;

export function localMachine(): string {
  return os.hostname();
}

/** A registry value: a bare root, or JSON with `root` and `machine` (or `host`). */
export function parseRepositoryRecord(value: string, fallbackMachine: string = localMachine()): RepositoryRecord {
  if (value.startsWith('{')) {
    try {
      const record = JSON.parse(value) as { root?: unknown; machine?: unknown; host?: unknown };
      if (typeof record.root === 'string') {
        const machine = typeof record.machine === 'string' ? record.machine : typeof record.host === 'string' ? record.host : fallbackMachine;
        return { root: record.root, machine };
      }
    } catch {
      // a root that happens to start with '{'
    }
  }
  return { root: value, machine: fallbackMachine };
}

/** The name bull-board gives the queue (its prefix leads with the path): used in job links. */
export function boardQueueName(repo: Pick<DashboardRepository, 'root' | 'queue'>): string {
  return `${repo.root} · ${repo.queue.name}`;
}

/** bull-board's page for the queue. */
export function boardQueuePath(repo: Pick<DashboardRepository, 'root' | 'queue'>): string {
  return `/queue/${encodeURIComponent(boardQueueName(repo))}`;
}

/** bull-board's page for one job. */
export function boardJobPath(repo: Pick<DashboardRepository, 'root' | 'queue'>, jobId: string): string {
  return `${boardQueuePath(repo)}/${encodeURIComponent(jobId)}`;
}
