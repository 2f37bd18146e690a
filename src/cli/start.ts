import { Command } from 'commander';
import { lookupRepoRoot } from './common.ts';
import { dashboardToken, untilSignal } from './dashboard.ts';
import { milliseconds, parseCommand, portNumber } from './options.ts';
import type { RunningDashboard } from '../dashboard/index.ts';

// `baton start` (what `npm start` runs): the main job for the current repository — a worker and
// its dashboard — with Redis found or started for it (localRedis.ts). Ctrl-C stops the dashboard,
// lets the worker finish its active job, then stops a private Redis it started.

type StartOptions = {
  repo?: string;
  port?: number;
  host: string;
  redis?: string;
  prefix?: string;
  token?: string;
  allowWrites?: boolean;
  shutdownDeadline: number;
};

export async function run(argv: string[]): Promise<number> {
  const program = new Command('baton start')
    .description('Serve this repository: a baton worker plus its dashboard, with Redis found or started for it.')
    .option('--repo <dir>', 'repository (default: the nearest ancestor of the working directory holding .git)')
    .option('--port <n>', 'dashboard port (default 3000, or a free port when 3000 is taken; 0 picks a free port)', portNumber)
    .option('--host <host>', 'dashboard bind address; anything but 127.0.0.1/localhost/::1 needs a token', '127.0.0.1')
    .option('--redis <url>', 'Redis URL (default: $REDIS_URL, then redis://127.0.0.1:6379, then a private redis-server)')
    .option('--prefix <prefix>', 'Redis key prefix (default: $BATON_PREFIX, then baton)')
    .option('--token <secret>', 'dashboard token (default: $BATON_DASHBOARD_TOKEN)')
    .option('--allow-writes', 'let the dashboard retry, remove and promote jobs (read-only otherwise)')
    .option('--shutdown-deadline <ms>', 'on Ctrl-C, wait at most this long for the active job', milliseconds, 10_000);
  const exit = parseCommand(program, argv);
  if (exit !== null) return exit;
  const options = program.opts<StartOptions>();
  const root = lookupRepoRoot(options.repo);
  if (!root.ok) {
    process.stderr.write(`baton start: ${root.message}; run it inside a git repository or pass --repo DIR\n`);
    return 1;
  }
  const { bindProblem, describeDashboard, startDashboard, workerQueueSource, DashboardConfigError, DEFAULT_DASHBOARD_PORT } = await import('../dashboard/index.ts');
  const token = dashboardToken(options.token);
  const problem = bindProblem(options.host, token);
  if (problem) {
    process.stderr.write(`baton start: ${problem}\n`);
    return 2;
  }
  const started = performance.now();
  const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  const { resolveRedis, RedisUnavailableError } = await import('./localRedis.ts');
  let redis;
  try {
    redis = await resolveRedis({ redisOption: options.redis, repoRoot: root.root, log });
  } catch (error) {
    if (!(error instanceof RedisUnavailableError)) throw error;
    process.stderr.write(`baton start: ${error.message}\n`);
    return 1;
  }
  const { startBatonWorker } = await import('../workers/worker.ts');
  const { createFingerprinter } = await import('../fingerprint/index.ts');
  const { DEFAULT_PREFIX } = await import('../queue/keys.ts');
  let worker;
  try {
    worker = await startBatonWorker({
      queue: { redisUrl: redis.url, prefix: options.prefix ?? process.env.BATON_PREFIX ?? DEFAULT_PREFIX },
      repos: [root.root],
      createFingerprinter: () => createFingerprinter(),
      log,
      onJob: (repository, job, elapsedMs) => {
        const { result, envelope } = job;
        const outcome = result.error ? `${result.status} ${result.error.code}` : result.status;
        log(`${envelope.source} ${envelope.intent} ${envelope.taskRef} -> ${outcome}${job.replayed ? ' (duplicate)' : ''} ${elapsedMs.toFixed(1)}ms`);
      },
    });
  } catch (error) {
    await redis.stop();
    throw error;
  }
  let dashboard: RunningDashboard;
  const dashboardOptions = { source: workerQueueSource(worker), host: options.host, token, allowWrites: options.allowWrites, log };
  try {
    try {
      dashboard = await startDashboard({ ...dashboardOptions, port: options.port ?? DEFAULT_DASHBOARD_PORT });
    } catch (error) {
      // The default port is only a preference; an explicit one is a demand.
      if (options.port !== undefined || !(error instanceof DashboardConfigError) || error.code !== 'EADDRINUSE') throw error;
      dashboard = await startDashboard({ ...dashboardOptions, port: 0 });
      log(`dashboard: port ${DEFAULT_DASHBOARD_PORT} is taken, using ${dashboard.port}`);
    }
  } catch (error) {
    process.stderr.write(`baton start: ${(error as Error).message}\n`);
    await worker.close(options.shutdownDeadline);
    await redis.stop();
    return 1;
  }
  const ms = (performance.now() - started).toFixed(0);
  process.stdout.write(
    [
      `baton start: serving ${root.root}`,
      `  redis      ${redis.describe}`,
      `  worker     ${worker.id}`,
      `  ${describeDashboard(dashboard).replace('dashboard: ', 'dashboard  ')}`,
      `  agents     wire a client once per repository: baton install-hooks claude-code (or codex)`,
      `baton ready in ${ms} ms (Ctrl-C to stop)`,
      '',
    ].join('\n'),
  );
  const signal = await untilSignal();
  log(`${signal}: stopping the dashboard, finishing the active job (deadline ${options.shutdownDeadline} ms), then stopping`);
  await dashboard.close();
  const { clean } = await worker.close(options.shutdownDeadline);
  await redis.stop();
  log(clean ? 'stopped' : 'stopped at the deadline; an unfinished job will be handed to the next worker');
  return clean ? 0 : 1;
}
