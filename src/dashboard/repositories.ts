import os from 'node:os';
import type { Queue } from 'bullmq';

// A repository as the dashboard knows it: its queue, its path and the machine that path is on.
// The registry in Redis records the host of each checkout (`parseRepositoryEntry`, queue/keys.ts);
// an entry recorded before baton kept it has none, and is then shown on this dashboard's host.

export type DashboardRepository = Readonly<{
  queue: Queue;
  root: string;
  id: string;
  /** The host the registry recorded, if any. */
  host: string | null;
  /** What the run view shows: the recorded host, else this dashboard's. */
  machine: string;
}>;

export function localMachine(): string {
  return os.hostname();
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
