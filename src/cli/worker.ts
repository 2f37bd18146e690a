import { Command } from 'commander';
import { collect, parseCommand, portNumber, positiveInteger } from './options.ts';
import { createFingerprinter } from '../core/fingerprint/index.ts';
import { startBatonWorker } from '../workers/worker.ts';
import { prefixProblem } from '../queue/connection.ts';
import { lookupRepoRoot, queueConfigFrom } from './common.ts';
import { dashboardToken } from './dashboard.ts';
import type { RunningDashboard } from '../dashboard/index.ts';

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
  dashboard?: boolean;
  port?: number;
  host?: string;
  token?: string;
  allowWrites?: boolean;
  quiet?: boolean;
};

export async function run(argv: string[]): Promise<number> {
  const program = new Command('baton worker')
    .description('Serve repository queues: apply each lifecycle event, one at a time per repository.')
    .option('--repo <dir>', 'repository to serve (repeatable; default: the repository of the working directory)', collect, [])
    .option('--discover', 'also serve any repository that enqueues a job, if it lies inside an --allow-root')
    .option('--allow-root <dir>', 'root directory that --discover may serve repositories from (repeatable)', collect, [])
    .option('--redis <url>', 'Redis URL (default: $REDIS_URL, then redis://127.0.0.1:6379)')
    .option('--prefix <prefix>', 'Redis key prefix (default: $BATON_PREFIX, then baton)')
    .option('--shutdown-deadline <ms>', 'on SIGINT/SIGTERM, wait at most this long for the active job', positiveInteger, 10_000)
    .option('--lock-duration <ms>', 'job lock duration: how soon a killed worker\'s job is handed over', positiveInteger)
    .option('--stalled-interval <ms>', 'how often to look for jobs of killed workers', positiveInteger)
    .option('--dashboard', 'also serve the queue dashboard')
    .option('--port <n>', 'dashboard port (default 3000; 0 picks a free port)', portNumber)
    .option('--host <host>', 'dashboard bind address (default 127.0.0.1; any other needs a token)')
    .option('--token <secret>', 'dashboard token (default: $BATON_DASHBOARD_TOKEN)')
    .option('--allow-writes', 'let the dashboard retry, remove and promote jobs (read-only otherwise)')
    .option('--quiet', 'log only problems');
  const exit = parseCommand(program, argv);
  if (exit !== null) return exit;
  return runWorker(program.opts<WorkerCommandOptions>());
}

export async function runWorker(options: WorkerCommandOptions): Promise<number> {
  if (options.discover && options.allowRoot.length === 0) {
    process.stderr.write('baton worker: --discover needs at least one --allow-root DIR (the directories it may serve)\n');
    return 2;
  }
  const repos: string[] = [];
  const requested = options.repo.length > 0 ? options.repo : options.discover ? [] : [undefined];
  for (const option of requested) {
    const root = lookupRepoRoot(option);
    if (!root.ok) {
      process.stderr.write(`baton worker: ${root.message}${option ? ` (${option})` : ''}\n`);
      return 2;
    }
    repos.push(root.root);
  }
  const token = dashboardToken(options.token);
  if (options.dashboard) {
    const { bindProblem } = await import('../dashboard/index.ts');
    const problem = bindProblem(options.host ?? '127.0.0.1', token);
    if (problem) {
      process.stderr.write(`baton worker: ${problem}\n`);
      return 2;
    }
  }
  // In a repository where `baton start` runs a private Redis, a plain `baton worker` finds it too.
  const queue = queueConfigFrom(options.redis, options.prefix, repos.length === 1 ? repos[0] : undefined);
  const prefixRefused = prefixProblem(queue.redisUrl, queue.prefix);
  if (prefixRefused) {
    process.stderr.write(`baton worker: ${prefixRefused}\n`);
    return 2;
  }
  const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  const worker = await startBatonWorker({
    queue,
    repos,
    discoverRoots: options.discover ? options.allowRoot : [],
    createFingerprinter: () => createFingerprinter(),
    log,
    lockDurationMs: options.lockDuration,
    stalledIntervalMs: options.stalledInterval,
    onJob: options.quiet
      ? undefined
      : (repository, job, elapsedMs) => {
          const { result, envelope } = job;
          const outcome = result.error ? `${result.status} ${result.error.code}` : result.status;
          log(`${repository.root} ${envelope.intent} ${envelope.taskRef} -> ${outcome}${job.replayed ? ' (duplicate, first result returned)' : ''} ${elapsedMs.toFixed(1)}ms`);
        },
  });
  let dashboard: RunningDashboard | null = null;
  if (options.dashboard) {
    const { describeDashboard, startDashboard, workerQueueSource } = await import('../dashboard/index.ts');
    try {
      dashboard = await startDashboard({
        source: workerQueueSource(worker),
        host: options.host,
        port: options.port,
        token,
        allowWrites: options.allowWrites,
        log,
      });
    } catch (error) {
      process.stderr.write(`baton worker: ${(error as Error).message}\n`);
      await worker.close(options.shutdownDeadline);
      return 1;
    }
    process.stdout.write(`baton ${describeDashboard(dashboard)}\n`);
  }
  const stopped = new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log(`${signal}: finishing the active job, then stopping (deadline ${options.shutdownDeadline} ms)`);
      void (dashboard?.close() ?? Promise.resolve()).then(() => worker.close(options.shutdownDeadline)).then(({ clean }) => {
        log(clean ? 'stopped' : 'stopped at the deadline; an unfinished job will be handed to the next worker');
        resolve(clean ? 0 : 1);
      });
    };
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
  });
  process.stdout.write(`baton worker ${worker.id} ready: ${worker.served().map((repo) => repo.root).join(', ') || '(discovering)'}\n`);
  return stopped;
}
