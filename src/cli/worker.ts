import { Command, InvalidArgumentError } from 'commander';
import { createFingerprinter } from '../core/fingerprint/index.ts';
import { startBatonWorker } from '../workers/worker.ts';
import { lookupRepoRoot, queueConfigFrom } from './common.ts';

// `baton worker`: serve repositories until SIGINT/SIGTERM, then finish the active job and exit
// (or stop at the shutdown deadline).

function positiveInt(value: string): number {
  const number = Number(value);
  if (!/^[1-9]\d*$/.test(value) || !Number.isSafeInteger(number)) throw new InvalidArgumentError('must be a positive integer');
  return number;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

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
    .option('--shutdown-deadline <ms>', 'on SIGINT/SIGTERM, wait at most this long for the active job', positiveInt, 10_000)
    .option('--lock-duration <ms>', 'job lock duration: how soon a killed worker\'s job is handed over', positiveInt)
    .option('--stalled-interval <ms>', 'how often to look for jobs of killed workers', positiveInt)
    .option('--dashboard', 'also serve the queue dashboard')
    .option('--port <n>', 'dashboard port (default 3000)', positiveInt)
    .option('--host <host>', 'dashboard bind address (default 127.0.0.1)')
    .option('--quiet', 'log only problems')
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });
  try {
    program.parse(argv, { from: 'user' });
  } catch (error) {
    return (error as { exitCode?: number }).exitCode === 0 ? 0 : 2;
  }
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
  const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  const worker = await startBatonWorker({
    queue: queueConfigFrom(options.redis, options.prefix),
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
  const stopped = new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log(`${signal}: finishing the active job, then stopping (deadline ${options.shutdownDeadline} ms)`);
      void worker.close(options.shutdownDeadline).then(({ clean }) => {
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
