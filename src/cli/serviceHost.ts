import { Option } from 'commander';
import type { Command } from 'commander';
import { duration } from './options.ts';
import type { DashboardOptions, RunningDashboard } from '../dashboard/index.ts';
import type { QueueConfig } from '../queue/keys.ts';
import type { ProcessedJob, ServedRepository } from '../workers/processor.ts';
import type { BatonWorker, BatonWorkerOptions } from '../workers/worker.ts';
import type { ResolvedRedis } from './localRedis.ts';
import { lookupRepoRoot, redisUrlProblem } from './common.ts';

// What the long-running commands (`worker`, `start`, `demo`, `dashboard`) share: the timestamped
// log, the job line, exit codes, the repository lookup, Redis, the worker, the dashboard, and
// stopping everything in reverse order on SIGINT/SIGTERM. Heavy modules are imported when used, so
// `--help` and usage errors stay fast.

/** How long a stopped service command may linger before it exits anyway. */
const STOPPED_LINGER_MS = 1_000;

export const EXIT_OK = 0;
/**
 * Something failed (no repository there, Redis unreachable, port in use, a job left unfinished at
 * the deadline): every command exits 1 for these (docs/usage.md "Exit codes").
 */
export const EXIT_FAILURE = 1;
/** The command line is wrong: a bad option or option value, a refused dashboard bind. */
export const EXIT_USAGE = 2;

export type ServiceLog = (line: string) => void;

/** A log whose lines start with an ISO timestamp; written to stderr unless `sink` takes them. */
export function timestampedLog(sink: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): ServiceLog {
  return (line) => sink(`${new Date().toISOString()} ${line}`);
}

/** How long a repeated log line stays quiet before it is said again, with its count. */
export const REPEAT_QUIET_MS = 30_000;

/**
 * A log that says a line again only after `quietMs`, with how often it came in between. A worker
 * whose Redis went away logs the same connection error from each connection on every reconnect
 * attempt (four lines every 2 s, forever); people need the first one and a count.
 */
export function quietRepeats(log: ServiceLog, quietMs: number = REPEAT_QUIET_MS, now: () => number = Date.now): ServiceLog {
  const seen = new Map<string, { at: number; repeats: number }>();
  return (line) => {
    const time = now();
    for (const [text, entry] of seen) if (time - entry.at >= quietMs && entry.repeats === 0) seen.delete(text);
    const entry = seen.get(line);
    if (entry && time - entry.at < quietMs) {
      entry.repeats += 1;
      return;
    }
    log(entry?.repeats ? `${line} (${entry.repeats} more times in the last ${Math.round((time - entry.at) / 1000)} s)` : line);
    seen.set(line, { at: time, repeats: 0 });
  };
}

/** One line per applied job: repository, source, intent, task, outcome, time. */
export function jobLine(repository: ServedRepository, job: ProcessedJob, elapsedMs: number): string {
  const { result, envelope } = job;
  const outcome = result.error ? `${result.status} ${result.error.code}` : result.status;
  const replayed = job.replayed ? ' (duplicate, first result returned)' : '';
  return `${repository.root} ${envelope.source} ${envelope.intent} ${envelope.taskRef} -> ${outcome}${replayed} ${elapsedMs.toFixed(1)}ms`;
}

/** Where --redis looks when it is not given, for a command that reaches a running Redis or starts one. */
export const REDIS_HELP = {
  running: 'Redis URL (default: $REDIS_URL, then redis://127.0.0.1:6379)',
  startsOne: 'Redis URL (default: $REDIS_URL, else a private redis-server; a Redis on redis://127.0.0.1:6379 is used only when named)',
} as const;

/** `--redis` and `--prefix`, as every service command declares them. */
export function queueOptions(program: Command, redisHelp: string): Command {
  return program.option('--redis <url>', redisHelp).option('--prefix <prefix>', 'Redis key prefix (default: $BATON_PREFIX, then baton)');
}

/** The reconciliation graces (docs/architecture.md "Reconciliation") of a command that runs a worker. */
export function graceOptions(program: Command): Command {
  return program
    .addOption(
      new Option(
        '--stop-grace <duration>',
        'how long a delegation waits for its child: then a completed stage with no SubagentStop is sealed by the worker, a stage never completed pauses the run',
      )
        .argParser(duration)
        .default(duration('10m'), '10m'),
    )
    .addOption(
      new Option(
        '--spawn-grace <duration>',
        'how long a prepared delegation waits for its subagent to start: then the worker gives it up and frees the repository',
      )
        .argParser(duration)
        .default(duration('5m'), '5m'),
    );
}

/** `--host`, `--token` and `--allow-writes` of a served dashboard (`--port` differs per command). */
export function dashboardOptions(program: Command): Command {
  return program
    .option('--host <host>', 'dashboard bind address; anything but 127.0.0.1/localhost/::1 needs a token', '127.0.0.1')
    .option(
      '--token <secret>',
      'dashboard token; on a shared machine set $BATON_DASHBOARD_TOKEN instead (a --token value shows in the process list)',
    )
    .option('--allow-writes', 'let the dashboard retry, remove and promote jobs (read-only otherwise)');
}

/** `--token`, else $BATON_DASHBOARD_TOKEN; empty means none. */
export function dashboardToken(option: string | undefined, env: Record<string, string | undefined> = process.env): string | null {
  return option || env.BATON_DASHBOARD_TOKEN || null;
}

/**
 * Resolves on the first SIGINT/SIGTERM with its name. Later signals are reported and ignored: the
 * stop that follows is bounded by the shutdown deadline, and a second Ctrl-C killing the process
 * would leave a private Redis (and its recorded address) behind.
 */
export function untilSignal(onRepeat: (signal: NodeJS.Signals) => void = () => undefined): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let received = false;
    const handler = (signal: NodeJS.Signals) => {
      if (received) return onRepeat(signal);
      received = true;
      resolve(signal);
    };
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
  });
}

type StopStep = () => Promise<unknown> | unknown;

/** One running service command: its name for messages, its log, and what to stop, newest first. */
export class ServiceHost {
  readonly command: string;
  readonly log: ServiceLog;
  private readonly stopSteps: StopStep[] = [];
  /** Set when a worker stopped at its deadline with a job unfinished. */
  private jobUnfinished = false;
  /** Set when a stop step failed (reported as it happened). */
  private stepFailed = false;

  constructor(command: string, log: ServiceLog = timestampedLog()) {
    this.command = command;
    this.log = log;
  }

  /** Prints `<command>: <message>` on stderr and returns `exitCode`. */
  fail(message: string, exitCode: number = EXIT_FAILURE): number {
    process.stderr.write(`${this.command}: ${message}\n`);
    return exitCode;
  }

  /**
   * The repository at `--repo DIR` (else of the working directory), or null after saying there is
   * none (then the command exits EXIT_FAILURE, as every command does without a repository).
   */
  repoRoot(option: string | undefined): string | null {
    const found = lookupRepoRoot(option);
    if (found.ok) return found.root;
    this.fail(`${found.message}${option ? ` (${option})` : ''}; run it inside a git repository or pass --repo DIR`);
    return null;
  }

  /** Null when the dashboard may bind `host`; otherwise prints why not and returns EXIT_USAGE. */
  async refuseBind(host: string, token: string | null): Promise<number | null> {
    const { bindProblem } = await import('../dashboard/index.ts');
    const problem = bindProblem(host, token);
    return problem ? this.fail(problem, EXIT_USAGE) : null;
  }

  /** Null when `--redis` (else $REDIS_URL) can name a Redis; otherwise prints why and returns EXIT_USAGE (no stack, no "start Redis"). */
  refuseRedisUrl(option: string | undefined): number | null {
    const problem = redisUrlProblem(option);
    return problem ? this.fail(problem, EXIT_USAGE) : null;
  }

  /** Null when `config.prefix` fits its Redis; otherwise (Redis Cluster without a hash tag) prints why and returns EXIT_USAGE. */
  async refusePrefix(config: QueueConfig): Promise<number | null> {
    const { prefixProblem } = await import('../queue/keys.ts');
    const problem = prefixProblem(config.redisUrl, config.prefix);
    return problem ? this.fail(problem, EXIT_USAGE) : null;
  }

  /** Redis for a service (localRedis.ts), stopped last; null after printing why there is none. */
  async redis(redisOption: string | undefined, repoRoot: string, command: 'start' | 'demo'): Promise<ResolvedRedis | null> {
    const { resolveRedis, RedisUnavailableError } = await import('./localRedis.ts');
    try {
      const redis = await resolveRedis({ redisOption, repoRoot, log: this.log, command });
      this.onStop(() => redis.stop());
      return redis;
    } catch (error) {
      if (!(error instanceof RedisUnavailableError)) throw error;
      this.fail(error.message);
      return null;
    }
  }

  /** A worker with real fingerprints, logging every job unless `quiet`; stopped with `deadlineMs`. */
  async worker(
    options: Omit<BatonWorkerOptions, 'createFingerprinter' | 'log' | 'onJob'> & { queue: QueueConfig; quiet?: boolean },
    deadlineMs: number,
  ): Promise<BatonWorker> {
    const { startBatonWorker } = await import('../workers/worker.ts');
    const { createFingerprinter } = await import('../fingerprint/index.ts');
    const { quiet, ...workerOptions } = options;
    const log = this.log;
    const worker = await startBatonWorker({
      ...workerOptions,
      createFingerprinter: () => createFingerprinter(),
      // Job lines are all said; the worker's own lines (connection errors) quietly when they repeat.
      log: quietRepeats(log),
      onJob: quiet ? undefined : (repository, job, elapsedMs) => log(jobLine(repository, job, elapsedMs)),
    });
    this.onStop(async () => {
      const { clean } = await worker.close(deadlineMs);
      if (!clean) this.jobUnfinished = true;
    });
    return worker;
  }

  /**
   * A dashboard, closed before the worker. With `fallbackToFreePort`, a taken default port (no
   * --port given) is only a preference: a free port is used instead. Null after printing the
   * failure and stopping what was started.
   */
  async dashboard(options: DashboardOptions & { fallbackToFreePort?: boolean }): Promise<RunningDashboard | null> {
    const { startDashboard, DashboardConfigError, DEFAULT_DASHBOARD_PORT } = await import('../dashboard/index.ts');
    const { fallbackToFreePort, ...dashboardOptions } = options;
    let dashboard: RunningDashboard;
    try {
      try {
        dashboard = await startDashboard({ ...dashboardOptions, log: dashboardOptions.log ?? this.log });
      } catch (error) {
        if (!fallbackToFreePort || options.port !== undefined || !(error instanceof DashboardConfigError) || error.code !== 'EADDRINUSE')
          throw error;
        dashboard = await startDashboard({ ...dashboardOptions, log: dashboardOptions.log ?? this.log, port: 0 });
        this.log(`dashboard: port ${DEFAULT_DASHBOARD_PORT} is taken, using ${dashboard.port}`);
      }
    } catch (error) {
      this.fail((error as Error).message);
      await this.stop();
      return null;
    }
    this.onStop(() => dashboard.close());
    return dashboard;
  }

  /** A dashboard over the queues `worker` serves (see dashboard()). */
  async workerDashboard(
    worker: BatonWorker,
    options: Omit<DashboardOptions, 'source' | 'log'> & { fallbackToFreePort?: boolean },
  ): Promise<RunningDashboard | null> {
    const { workerQueueSource } = await import('../dashboard/index.ts');
    return this.dashboard({ ...options, source: workerQueueSource(worker) });
  }

  /** Registers something to stop; steps run newest first. */
  onStop(step: StopStep): void {
    this.stopSteps.push(step);
  }

  /** Runs the stop steps, newest first; a failing step is reported and the others still run. */
  async stop(): Promise<void> {
    for (const step of this.stopSteps.splice(0).reverse()) {
      try {
        await step();
      } catch (error) {
        this.stepFailed = true;
        process.stderr.write(`${this.command}: stopping: ${(error as Error).message}\n`);
      }
    }
  }

  /**
   * Serves until SIGINT/SIGTERM, then stops everything. EXIT_OK when every step stopped cleanly
   * (a worker finished its active job), else EXIT_FAILURE.
   */
  /**
   * Listens for SIGINT/SIGTERM from now on. Call it before printing that the service is ready: Node
   * starts handling a signal a moment after the listener is added, and a Ctrl-C sent the instant
   * "ready" is read would otherwise kill the process without stopping anything (a private Redis).
   */
  listenForStop(): Promise<NodeJS.Signals> {
    return untilSignal((again) => this.log(`${again}: already stopping`));
  }

  async serveUntilSignal(plan: string, stopSignal: Promise<NodeJS.Signals> = this.listenForStop()): Promise<number> {
    const signal = await stopSignal;
    this.log(`${signal}: ${plan}`);
    await this.stop();
    if (this.jobUnfinished) this.log('stopped at the deadline; an unfinished job will be handed to the next worker');
    else this.log(this.stepFailed ? 'stopped, with the errors above' : 'stopped');
    const code = this.jobUnfinished || this.stepFailed ? EXIT_FAILURE : EXIT_OK;
    // Everything is stopped; what may still hold the event loop is a client retrying a Redis that is
    // gone (BullMQ's connections reconnect until they are closed, and closing them waits for Redis).
    // It must not keep the process alive: the timer does not hold the loop, so a clean exit is not delayed.
    setTimeout(() => process.exit(code), STOPPED_LINGER_MS).unref();
    return code;
  }
}
