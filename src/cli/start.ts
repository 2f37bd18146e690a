import { Command } from 'commander';
import { queueConfigFor } from '../queue/endpoint.ts';
import { agentsLine } from './wiredClients.ts';
import { milliseconds, parseCommand, portNumber } from './options.ts';
import { dashboardOptions, dashboardToken, EXIT_FAILURE, graceOptions, queueOptions, REDIS_HELP, ServiceHost } from './serviceHost.ts';

// `baton start`: the main job for the current repository — a worker and
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
  stopGrace: number;
  spawnGrace: number;
};

export async function run(argv: string[]): Promise<number> {
  const program = new Command('baton start')
    .description('Serve this repository: a baton worker plus its dashboard, with Redis found or started for it.')
    .option('--repo <dir>', 'repository (default: the nearest ancestor of the working directory holding .git)')
    .option('--port <n>', 'dashboard port; 0 picks a free port (default: 3000, or a free port when 3000 is taken)', portNumber);
  dashboardOptions(queueOptions(program, REDIS_HELP.startsOne)).option(
    '--shutdown-deadline <ms>',
    'on Ctrl-C, wait at most this long for the active job',
    milliseconds,
    10_000,
  );
  graceOptions(program);
  const exit = parseCommand(program, argv);
  if (exit !== null) return exit;
  const options = program.opts<StartOptions>();
  const host = new ServiceHost('baton start');
  const root = host.repoRoot(options.repo);
  if (root === null) return EXIT_FAILURE;
  const badUrl = host.refuseRedisUrl(options.redis);
  if (badUrl !== null) return badUrl;
  const token = dashboardToken(options.token);
  const refused = await host.refuseBind(options.host, token);
  if (refused !== null) return refused;
  const started = performance.now();
  const redis = await host.redis(options.redis, root, 'start');
  if (!redis) return EXIT_FAILURE;
  const { describeDashboard } = await import('../dashboard/index.ts');
  let worker: Awaited<ReturnType<typeof host.worker>>;
  try {
    worker = await host.worker(
      {
        queue: queueConfigFor(redis.url, options.prefix),
        repos: [root],
        graces: { stopGraceMs: options.stopGrace, spawnGraceMs: options.spawnGrace },
      },
      options.shutdownDeadline,
    );
  } catch (error) {
    await host.stop();
    throw error;
  }
  const dashboard = await host.workerDashboard(worker, {
    host: options.host,
    port: options.port,
    token,
    allowWrites: options.allowWrites,
    fallbackToFreePort: true,
  });
  if (!dashboard) return EXIT_FAILURE;
  const stopSignal = host.listenForStop();
  const ms = (performance.now() - started).toFixed(0);
  process.stdout.write(
    [
      `baton start: serving ${root}`,
      `  redis      ${redis.describe}`,
      ...(redis.passedOver === undefined ? [] : [`             ${redis.passedOver}`]),
      `  worker     ${worker.id}`,
      `  ${describeDashboard(dashboard).replace('dashboard: ', 'dashboard  ')}`,
      `  agents     ${agentsLine(root)}`,
      `baton ready in ${ms} ms (Ctrl-C to stop)`,
      '',
    ].join('\n'),
  );
  return host.serveUntilSignal(
    `stopping the dashboard, finishing the active job (deadline ${options.shutdownDeadline} ms), then stopping`,
    stopSignal,
  );
}
