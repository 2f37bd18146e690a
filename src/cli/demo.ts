import fs from 'node:fs';
import { Queue } from 'bullmq';
import { Command, Option } from 'commander';
import { CLIENT_IDS, type ClientId } from '../clients/registry.ts';
import { runFilePath } from '../core/taskLayout.ts';
import { queueConfigFor } from '../queue/endpoint.ts';
import { parseCommand, portNumber } from './options.ts';
import {
  dashboardToken,
  EXIT_FAILURE,
  EXIT_OK,
  queueOptions,
  REDIS_HELP,
  ServiceHost,
  timestampedLog,
  untilSignal,
} from './serviceHost.ts';

// `baton demo`: a complete lifecycle, seven stages to a completed run, in a temporary repository,
// through the real pieces: a worker (in this process), the repository queue, real `baton hook`
// processes fed native SubagentStart/SubagentStop payloads, and a fake subagent writing each
// stage's artifact. The dashboard runs meanwhile; --keep-open keeps it (and the repository) up.

type DemoOptions = {
  keepOpen?: boolean;
  port: number;
  redis?: string;
  prefix?: string;
  client: ClientId;
};

export async function run(argv: string[]): Promise<number> {
  const program = new Command('baton demo')
    .description('Drive a complete lifecycle in a temporary repository through a worker, the queue and real hooks.')
    .option('--keep-open', 'keep the dashboard (and the temporary repository) up until Ctrl-C')
    .addOption(new Option('--port <n>', 'dashboard port').argParser(portNumber).default(0, 'a free port'));
  queueOptions(program, REDIS_HELP.startsOne).addOption(
    new Option('--client <client>', 'which client the hooks pretend to be').choices(CLIENT_IDS).default(CLIENT_IDS[0]),
  );
  const exit = parseCommand(program, argv, { repo: 'baton demo creates its own temporary repository' });
  if (exit !== null) return exit;
  const options = program.opts<DemoOptions>();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  // The worker's log is kept and shown only when the lifecycle stops.
  const workerLog: string[] = [];
  const host = new ServiceHost(
    'baton demo',
    timestampedLog((line) => workerLog.push(line)),
  );
  const badUrl = host.refuseRedisUrl(options.redis);
  if (badUrl !== null) return badUrl;

  const { createDemoRepository } = await import('../demo/repo.ts');
  const repo = await createDemoRepository();
  host.onStop(() => repo.remove());
  try {
    const redis = await host.redis(options.redis, repo.root, 'demo');
    if (!redis) return EXIT_FAILURE;
    const { repoIdentity } = await import('../queue/checkoutId.ts');
    const config = queueConfigFor(redis.url, options.prefix);
    const identity = repoIdentity(repo.root);
    // Registered before the worker, so it runs once the worker has stopped (steps run newest first).
    host.onStop(() => forgetDemoQueue(config, identity.id));
    const worker = await host.worker({ queue: config, repos: [repo.root] }, 5_000);
    const { describeDashboard } = await import('../dashboard/index.ts');
    const dashboard = await host.workerDashboard(worker, { port: options.port, token: dashboardToken(undefined) });
    if (!dashboard) return EXIT_FAILURE;

    out('baton demo');
    out(`  repository  ${repo.root} (made with isomorphic-git; task ${repo.taskId}, short id 01)`);
    out(`  redis       ${redis.describe}`);
    if (redis.passedOver !== undefined) out(`              ${redis.passedOver}`);
    out(`  worker      ${worker.id} (in this process, serving the repository queue)`);
    out(`  ${describeDashboard(dashboard).replace('dashboard: ', 'dashboard   ')}`);
    out(
      `driving the lifecycle with ${options.client} hooks: prepare → SubagentStart hook → subagent work → complete → SubagentStop hook → advance`,
    );

    const { driveLifecycle } = await import('../demo/driver.ts');
    const { queueDriverIO } = await import('./demoDriverIO.ts');
    const io = await queueDriverIO({ config, repo: identity, taskRef: '01', client: options.client });
    host.onStop(() => io.close());
    const started = performance.now();
    let final: Awaited<ReturnType<typeof driveLifecycle>>['final'];
    try {
      ({ final } = await driveLifecycle({
        root: repo.root,
        taskRef: '01',
        io,
        client: options.client,
        onStage: (stage) =>
          out(
            `  [${stage.index}] ${`${stage.stage} r${stage.round}`.padEnd(18)} ${stage.role.padEnd(8)}  ${stage.actions.join(' → ')}  (${stage.ms.toFixed(0)} ms)`,
          ),
      }));
    } catch (error) {
      return host.fail(`the lifecycle stopped: ${(error as Error).message}\nworker log:\n${workerLog.join('\n')}`);
    }
    const run = JSON.parse(fs.readFileSync(runFilePath(repo.taskDir), 'utf8')) as {
      status: string;
      stepCount: number;
      maxSteps: number;
      receipts: { role: string; stage: string; round: number; status: string; changedPaths: string[] }[];
    };
    out(
      `run ${repo.taskId} ${run.status} in ${((performance.now() - started) / 1000).toFixed(1)} s: ${run.stepCount}/${run.maxSteps} steps, ${run.receipts.length} delegations`,
    );
    for (const receipt of run.receipts) {
      out(
        `  ${receipt.role.padEnd(8)}  ${`${receipt.stage} r${receipt.round}`.padEnd(18)} ${receipt.status.padEnd(9)} changed: ${receipt.changedPaths.join(', ') || '-'}`,
      );
    }
    out(`result: ${JSON.stringify({ status: final.status, taskId: final.taskId, stepCount: final.run?.stepCount })}`);
    if (options.keepOpen) {
      out(`dashboard: ${dashboard.url} — kept open with the repository; Ctrl-C to stop and clean up`);
      await untilSignal();
    } else {
      out(`dashboard: ${dashboard.url} (stops now; 'baton demo --keep-open' keeps it up)`);
    }
    return run.status === 'completed' ? EXIT_OK : EXIT_FAILURE;
  } finally {
    await host.stop();
  }
}

/** The demo repository is deleted on exit: drop its queue and its entry in the repository list too. */
async function forgetDemoQueue(config: { redisUrl: string; prefix: string }, checkoutId: string): Promise<void> {
  const { connectFast } = await import('../queue/connection.ts');
  const { heartbeatKey, repositoriesKey } = await import('../queue/keys.ts');
  const { queueNameFor } = await import('../queue/keys.ts');
  const redis = await connectFast(config.redisUrl, 1_000);
  try {
    const name = queueNameFor(checkoutId);
    const queue = new Queue(name, { connection: redis, prefix: config.prefix, skipVersionCheck: true });
    await queue.obliterate({ force: true });
    await queue.close();
    await redis.hdel(repositoriesKey(config.prefix), checkoutId);
    await redis.del(heartbeatKey(config.prefix, name));
    const { forgetRepositoryMetrics } = await import('../workers/jobRecords.ts');
    await forgetRepositoryMetrics(redis, config.prefix, checkoutId);
  } finally {
    redis.disconnect();
  }
}
