import { Command, Option } from 'commander';
import { collect, parseCommand, portNumber, positiveInteger } from './options.ts';
import { namedQueueConfig, noRedisNamed } from '../queue/endpoint.ts';
import {
  dashboardOptions,
  dashboardToken,
  EXIT_FAILURE,
  EXIT_OK,
  EXIT_USAGE,
  graceOptions,
  queueOptions,
  REDIS_HELP,
  ServiceHost,
} from './serviceHost.ts';

// `baton worker`: serve repositories until SIGINT/SIGTERM, then finish the active job and exit
// (or stop at the shutdown deadline).

export type WorkerCommandOptions = {
  repo: string[];
  discover?: boolean;
  allowRoot: string[];
  redis?: string;
  prefix?: string;
  shutdownDeadline: number;
  lockDuration?: number;
  stalledInterval?: number;
  keepWarm?: number;
  stopGrace: number;
  spawnGrace: number;
  dashboard?: boolean;
  port?: number;
  host: string;
  token?: string;
  allowWrites?: boolean;
  quiet?: boolean;
};

export async function run(argv: string[]): Promise<number> {
  const program = new Command('baton worker')
    .description('Serve repository queues: apply each lifecycle event, one at a time per repository.')
    .addOption(
      new Option('--repo <dir>', 'repository to serve (repeatable)')
        .argParser(collect)
        .default([], 'the repository of the working directory'),
    )
    .option('--discover', 'also serve any repository that enqueues a job, if it lies inside an --allow-root')
    .addOption(
      new Option('--allow-root <dir>', 'root directory that --discover may serve repositories from (repeatable)')
        .argParser(collect)
        .default([], 'none'),
    );
  queueOptions(program, REDIS_HELP.running)
    .option('--shutdown-deadline <ms>', 'on SIGINT/SIGTERM, wait at most this long for the active job', positiveInteger, 10_000)
    .option('--lock-duration <ms>', "job lock duration: how soon a killed worker's job is handed over", positiveInteger)
    .option('--stalled-interval <ms>', 'how often to look for jobs of killed workers', positiveInteger)
    .option(
      '--keep-warm <ms>',
      "keep consuming a repository's queue this long after its last job; idle repositories are watched on one shared connection",
      positiveInteger,
      120_000,
    );
  graceOptions(program)
    .option('--dashboard', 'also serve the queue dashboard')
    .option('--port <n>', 'dashboard port; 0 picks a free port (default: 3000)', portNumber);
  dashboardOptions(program).option('--quiet', 'log only problems');
  const exit = parseCommand(program, argv);
  if (exit !== null) return exit;
  return runWorker(program.opts<WorkerCommandOptions>());
}

export async function runWorker(options: WorkerCommandOptions): Promise<number> {
  const host = new ServiceHost('baton worker');
  if (options.discover && options.allowRoot.length === 0) {
    return host.fail('--discover needs at least one --allow-root DIR (the directories it may serve)', EXIT_USAGE);
  }
  const repos: string[] = [];
  const requested = options.repo.length > 0 ? options.repo : options.discover ? [] : [undefined];
  for (const option of requested) {
    const root = host.repoRoot(option);
    if (root === null) return EXIT_FAILURE;
    repos.push(root);
  }
  const token = dashboardToken(options.token);
  if (options.dashboard) {
    const refused = await host.refuseBind(options.host, token);
    if (refused !== null) return refused;
  }
  const badUrl = host.refuseRedisUrl(options.redis);
  if (badUrl !== null) return badUrl;
  // In a repository where `baton start` runs a private Redis, a plain `baton worker` finds it too;
  // never the default address (docs/usage.md "Which Redis"). The worker is what records an endpoint.
  const repoRoot = repos.length === 1 ? repos[0] : undefined;
  const named = namedQueueConfig({ redisOption: options.redis, prefixOption: options.prefix, repoRoot, recorded: false });
  if (!named) return host.fail(noRedisNamed('baton worker', repoRoot));
  const queue = named.queue;
  const prefixRefused = await host.refusePrefix(queue);
  if (prefixRefused !== null) return prefixRefused;
  // A worker may start before its Redis: say once what to do, then wait quietly (redisWait.ts).
  const { waitForRedis } = await import('./redisWait.ts');
  const redis = await waitForRedis(queue.redisUrl, { say: (message) => host.fail(message), log: host.log });
  if (redis !== 'ready') return redis === 'stopped' ? EXIT_OK : EXIT_FAILURE;
  const worker = await host.worker(
    {
      queue,
      repos,
      discoverRoots: options.discover ? options.allowRoot : [],
      lockDurationMs: options.lockDuration,
      stalledIntervalMs: options.stalledInterval,
      keepWarmMs: options.keepWarm,
      graces: { stopGraceMs: options.stopGrace, spawnGraceMs: options.spawnGrace },
      quiet: options.quiet,
    },
    options.shutdownDeadline,
  );
  if (options.dashboard) {
    const { describeDashboard } = await import('../dashboard/index.ts');
    const dashboard = await host.workerDashboard(worker, {
      host: options.host,
      port: options.port,
      token,
      allowWrites: options.allowWrites,
    });
    if (!dashboard) return EXIT_FAILURE;
    process.stdout.write(`baton ${describeDashboard(dashboard)}\n`);
  }
  process.stdout.write(
    `baton worker ${worker.id} ready: ${
      worker
        .served()
        .map((repo) => repo.root)
        .join(', ') || '(discovering)'
    }\n`,
  );
  return host.serveUntilSignal(`finishing the active job, then stopping (deadline ${options.shutdownDeadline} ms)`);
}
