import { describe, expect, it } from 'vitest';
import { TASK_ID, readRun, uniquePrefix } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import { batonEnv, jsonOf, runBaton, startWorkerProcess } from '../support/processes.ts';
import { driveLifecycle } from '../support/lifecycleDriver.ts';
import { failoverWithEvents } from '../support/failoverFlow.ts';
import { startSentinels, useTopology } from '../support/redisTopologies.ts';
import type { SentinelSetup } from '../support/redisTopologies.ts';

// baton behind Redis Sentinel (1 master, 1 replica, 3 sentinels on free ports), configured as
// `redis+sentinel://host:port,host:port,host:port/<master>`: a lifecycle through it, then the
// master stops while events flow and the sentinels promote the replica.

let sentinel: SentinelSetup;
const { repos, processes: workers } = useTopology(startSentinels, (started) => (sentinel = started));

describe('Redis Sentinel', () => {
  it('runs a lifecycle, then fails over while events flow: nothing lost, nothing applied twice, order kept', async () => {
    const repo = gitRepoWithTask();
    repos.push(repo);
    const env = batonEnv({ redisUrl: sentinel.url, prefix: uniquePrefix('sentinel') });
    const worker = await startWorkerProcess(['--repo', repo.root, '--lock-duration', '3000', '--stalled-interval', '1000'], { env });
    workers.push(worker);
    const { steps, final } = await driveLifecycle({ root: repo.root, taskRef: '01', env }).catch((error) => {
      throw new Error(`${(error as Error).message}\n${worker.output()}`);
    });
    expect(steps).toHaveLength(7);
    expect(final).toMatchObject({ status: 'completed', taskId: TASK_ID });

    // A second run of the same task directory: resume it and stream pause events through a failover.
    const second = gitRepoWithTask();
    repos.push(second);
    const secondWorker = await startWorkerProcess(['--repo', second.root, '--lock-duration', '3000', '--stalled-interval', '1000'], {
      env,
    });
    workers.push(secondWorker);
    expect(jsonOf(await runBaton(['task', '01', 'begin-or-resume'], { env, cwd: second.root })).status).toBe('running');
    const report = await failoverWithEvents(
      {
        redisUrl: sentinel.url,
        prefix: env.BATON_PREFIX!,
        root: second.root,
        taskDir: second.taskDir,
        stopMaster: () => sentinel.stopMaster(),
        promotedAfter: (stopped) => sentinel.promotedAfter(stopped),
      },
      secondWorker,
    );
    console.log(`sentinel failover: ${JSON.stringify(report)}`);
    // CLI and worker keep working against the promoted master.
    expect(jsonOf(await runBaton(['task', '01', 'begin-or-resume'], { env, cwd: second.root })).status).toBe('running');
    expect(readRun(second.taskDir).status).toBe('running');
  }, 150_000);
});
