import { afterEach, describe, expect, inject, it } from 'vitest';
import { uniquePrefix } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { batonEnv, jsonOf, runBaton, startWorkerProcess } from '../support/processes.ts';
import type { WorkerProcess } from '../support/processes.ts';
import { URL_PATTERN, dashboardUrlOf, startBaton } from '../support/services.ts';
import type { ServiceProcess } from '../support/services.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { queueNameFor } from '../../src/queue/keys.ts';

// bull-board's queue listing says whether anything consumes a queue (`hasWorkers`, the board's "no
// workers" warning), from CLIENT LIST. A baton worker serves on demand: an idle repository's queue
// has no BullMQ Worker on it, yet it is served. The dashboard answers as `baton task` does, from the
// workers' heartbeat: served while a worker runs, idle or not, and not served once it stopped.

const redisUrl = inject('redisUrl');
let repo: GitRepo;
let worker: WorkerProcess | null = null;
const services: ServiceProcess[] = [];

afterEach(async () => {
  await worker?.stop();
  worker = null;
  await Promise.all(services.splice(0).map((service) => service.stop('SIGKILL')));
  repo?.cleanup();
});

type Listed = { name: string; hasWorkers: boolean | null };

async function listed(url: string, queueName: string): Promise<Listed | undefined> {
  const body = (await (await fetch(new URL('api/queues', url))).json()) as { queues: Listed[] };
  return body.queues.find((queue) => queue.name.endsWith(queueName));
}

async function until<T>(what: string, read: () => Promise<T>, holds: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await read();
    if (holds(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("the queue dashboard's workers", () => {
  it('shows the worker serving an idle queue on demand, and none once it stopped', async () => {
    repo = gitRepoWithTask();
    const env = batonEnv({ redisUrl, prefix: uniquePrefix('dash-workers') });
    const queueName = queueNameFor(repoIdentity(repo.root).id);
    worker = await startWorkerProcess(['--repo', repo.root], { env });
    const dashboard = await startBaton(['dashboard', '--port', '0', '--refresh', '200'], { env, ready: URL_PATTERN });
    services.push(dashboard);
    const url = dashboardUrlOf(dashboard);

    const idle = await until(
      'the queue listed',
      () => listed(url, queueName),
      (queue) => queue !== undefined,
    );
    expect(idle).toMatchObject({ hasWorkers: true });
    const panel = (await (await fetch(new URL(`api/queues/${encodeURIComponent(idle!.name)}/workers`, url))).json()) as {
      workers: { id: string; name: string | null }[];
    };
    expect(panel.workers).toHaveLength(1);
    expect(panel.workers[0]!.name).toMatch(/^baton worker w-\S+ \(serving on demand/);

    // A job comes and goes; the queue is idle again, and still served.
    const begun = await runBaton(['task', '01', 'begin-or-resume'], { env, cwd: repo.root });
    expect(jsonOf(begun).status, begun.stderr).toBe('running');
    expect(await listed(url, queueName)).toMatchObject({ hasWorkers: true });

    expect(await worker.stop()).toBe(0);
    worker = null;
    await until(
      'no worker after the worker stopped',
      () => listed(url, queueName),
      (queue) => queue?.hasWorkers === false,
    );
  });
});
