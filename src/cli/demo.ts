import fs from 'node:fs';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Command, Option } from 'commander';
import { dashboardToken, untilSignal } from './dashboard.ts';
import { parseCommand, portNumber } from './options.ts';

// `baton demo`: a complete lifecycle, seven stages to a completed run, in a temporary repository,
// through the real pieces: a worker (in this process), the repository queue, real `baton hook`
// processes fed native SubagentStart/SubagentStop payloads, and a fake subagent writing each
// stage's artifact. The dashboard runs meanwhile; --keep-open keeps it (and the repository) up.

type DemoOptions = {
  keepOpen?: boolean;
  port: number;
  redis?: string;
  prefix?: string;
  client: 'claude-code' | 'codex';
};

export async function run(argv: string[]): Promise<number> {
  const program = new Command('baton demo')
    .description('Drive a complete lifecycle in a temporary repository through a worker, the queue and real hooks.')
    .option('--keep-open', 'keep the dashboard (and the temporary repository) up until Ctrl-C')
    .option('--port <n>', 'dashboard port (default: a free port)', portNumber, 0)
    .option('--redis <url>', 'Redis URL (default: $REDIS_URL, then redis://127.0.0.1:6379, then a private redis-server)')
    .option('--prefix <prefix>', 'Redis key prefix (default: $BATON_PREFIX, then baton)')
    .addOption(new Option('--client <client>', 'which client the hooks pretend to be').choices(['claude-code', 'codex']).default('claude-code'));
  const exit = parseCommand(program, argv, { repo: 'baton demo creates its own temporary repository' });
  if (exit !== null) return exit;
  const options = program.opts<DemoOptions>();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const workerLog: string[] = [];
  const log = (line: string) => workerLog.push(`${new Date().toISOString()} ${line}`);

  const { createDemoRepository } = await import('../demo/repo.ts');
  const { resolveRedis, RedisUnavailableError } = await import('./localRedis.ts');
  const repo = await createDemoRepository();
  const cleanups: (() => Promise<void> | void)[] = [() => repo.remove()];
  const cleanUp = async () => {
    for (const step of cleanups.splice(0).reverse()) {
      try {
        await step();
      } catch (error) {
        process.stderr.write(`baton demo: cleanup: ${(error as Error).message}\n`);
      }
    }
  };
  try {
    let redis;
    try {
      redis = await resolveRedis({ redisOption: options.redis, repoRoot: repo.root, log });
    } catch (error) {
      if (!(error instanceof RedisUnavailableError)) throw error;
      process.stderr.write(`baton demo: ${error.message}\n`);
      return 1;
    }
    cleanups.push(() => redis.stop());
    const { startBatonWorker } = await import('../workers/worker.ts');
    const { createFingerprinter } = await import('../core/fingerprint/index.ts');
    const { DEFAULT_PREFIX } = await import('../queue/keys.ts');
    const { repoIdentity } = await import('../queue/envelope.ts');
    const config = { redisUrl: redis.url, prefix: options.prefix ?? process.env.BATON_PREFIX ?? DEFAULT_PREFIX };
    const worker = await startBatonWorker({ queue: config, repos: [repo.root], createFingerprinter: () => createFingerprinter(), log });
    const identity = repoIdentity(repo.root);
    cleanups.push(() => forgetDemoQueue(config, identity.id));
    cleanups.push(() => worker.close(5_000).then(() => undefined));
    const { describeDashboard, startDashboard, workerQueueSource } = await import('../dashboard/index.ts');
    const dashboard = await startDashboard({ source: workerQueueSource(worker), port: options.port, token: dashboardToken(undefined), log });
    cleanups.push(() => dashboard.close());

    out('baton demo');
    out(`  repository  ${repo.root} (made with isomorphic-git; task ${repo.taskId}, short id 01)`);
    out(`  redis       ${redis.describe}`);
    out(`  worker      ${worker.id} (in this process, serving the repository queue)`);
    out(`  ${describeDashboard(dashboard).replace('dashboard: ', 'dashboard   ')}`);
    out(`driving the lifecycle with ${options.client} hooks: prepare → SubagentStart hook → subagent work → complete → SubagentStop hook → advance`);

    const { driveLifecycle } = await import('../demo/driver.ts');
    const { queueDriverIO } = await import('../demo/io.ts');
    const io = await queueDriverIO({ config, repo: identity, taskRef: '01', client: options.client });
    cleanups.push(() => io.close());
    const started = performance.now();
    let final;
    try {
      ({ final } = await driveLifecycle({
        root: repo.root,
        taskRef: '01',
        io,
        client: options.client,
        onStage: (stage) =>
          out(`  [${stage.index}] ${`${stage.stage} r${stage.round}`.padEnd(18)} ${stage.role.padEnd(8)}  ${stage.actions.join(' → ')}  (${stage.ms.toFixed(0)} ms)`),
      }));
    } catch (error) {
      process.stderr.write(`baton demo: the lifecycle stopped: ${(error as Error).message}\nworker log:\n${workerLog.join('\n')}\n`);
      return 1;
    }
    const run = JSON.parse(fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8')) as {
      status: string;
      stepCount: number;
      maxSteps: number;
      receipts: { role: string; stage: string; round: number; status: string; changedPaths: string[] }[];
    };
    out(`run ${repo.taskId} ${run.status} in ${((performance.now() - started) / 1000).toFixed(1)} s: ${run.stepCount}/${run.maxSteps} steps, ${run.receipts.length} delegations`);
    for (const receipt of run.receipts) {
      out(`  ${receipt.role.padEnd(8)}  ${`${receipt.stage} r${receipt.round}`.padEnd(18)} ${receipt.status.padEnd(9)} changed: ${receipt.changedPaths.join(', ') || '-'}`);
    }
    out(`result: ${JSON.stringify({ status: final.status, taskId: final.taskId, stepCount: final.run?.stepCount })}`);
    if (options.keepOpen) {
      out(`dashboard: ${dashboard.url} — kept open with the repository; Ctrl-C to stop and clean up`);
      await untilSignal();
    } else {
      out(`dashboard: ${dashboard.url} (stops now; 'baton demo --keep-open' keeps it up)`);
    }
    return run.status === 'completed' ? 0 : 1;
  } finally {
    await cleanUp();
  }
}

/** The demo repository is deleted on exit: drop its queue and its entry in the repository list too. */
async function forgetDemoQueue(config: { redisUrl: string; prefix: string }, repoId: string): Promise<void> {
  const { connectFast } = await import('../queue/connection.ts');
  const { heartbeatKey, repositoriesKey } = await import('../queue/keys.ts');
  const { queueNameFor } = await import('../queue/envelope.ts');
  const redis = await connectFast(config.redisUrl, 1_000);
  try {
    const name = queueNameFor(repoId);
    const queue = new Queue(name, { connection: redis, prefix: config.prefix, skipVersionCheck: true });
    await queue.obliterate({ force: true });
    await queue.close();
    await redis.hdel(repositoriesKey(config.prefix), repoId);
    await redis.del(heartbeatKey(config.prefix, name));
    const { forgetRepositoryMetrics } = await import('../workers/jobRecords.ts');
    await forgetRepositoryMetrics(redis, config.prefix, repoId);
  } finally {
    redis.disconnect();
  }
}
