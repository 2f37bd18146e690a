import { Command } from 'commander';
import { milliseconds, parseCommand, portNumber } from './options.ts';
import { queueConfigFrom } from './common.ts';

// `baton dashboard`: bull-board over every repository queue recorded in Redis, refreshed as new
// repositories appear. Loopback and read-only by default; any other bind needs a token.

/** `--token`, else $BATON_DASHBOARD_TOKEN; empty means none. */
export function dashboardToken(option: string | undefined, env: Record<string, string | undefined> = process.env): string | null {
  return option || env.BATON_DASHBOARD_TOKEN || null;
}

/** Resolves on the first SIGINT/SIGTERM with its name. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const handler = (signal: NodeJS.Signals) => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
      resolve(signal);
    };
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
  });
}

type DashboardCommandOptions = {
  port: number;
  host: string;
  redis?: string;
  prefix?: string;
  token?: string;
  allowWrites?: boolean;
  refresh: number;
};

export async function run(argv: string[]): Promise<number> {
  const program = new Command('baton dashboard')
    .description('Serve the queue dashboard (bull-board) over every repository queue recorded in Redis.')
    .option('--port <n>', 'port (0 picks a free port)', portNumber, 3000)
    .option('--host <host>', 'bind address; anything but 127.0.0.1/localhost/::1 needs a token', '127.0.0.1')
    .option('--redis <url>', 'Redis URL (default: $REDIS_URL, then redis://127.0.0.1:6379)')
    .option('--prefix <prefix>', 'Redis key prefix (default: $BATON_PREFIX, then baton)')
    .option('--token <secret>', 'require this token (default: $BATON_DASHBOARD_TOKEN)')
    .option('--allow-writes', 'allow retrying, removing and promoting jobs (read-only otherwise)')
    .option('--refresh <ms>', 'how often to look for new repositories', milliseconds, 2_000);
  const exit = parseCommand(program, argv, { repo: 'baton dashboard shows every repository recorded in Redis (baton worker --dashboard shows the ones it serves)' });
  if (exit !== null) return exit;
  const options = program.opts<DashboardCommandOptions>();
  const { bindProblem, describeDashboard, redisQueueSource, startDashboard } = await import('../dashboard/index.ts');
  const token = dashboardToken(options.token);
  const problem = bindProblem(options.host, token);
  if (problem) {
    process.stderr.write(`baton dashboard: ${problem}\n`);
    return 2;
  }
  const config = queueConfigFrom(options.redis, options.prefix);
  const { prefixProblem } = await import('../queue/connection.ts');
  const prefixRefused = prefixProblem(config.redisUrl, config.prefix);
  if (prefixRefused) {
    process.stderr.write(`baton dashboard: ${prefixRefused}\n`);
    return 2;
  }
  const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  let source;
  try {
    source = await redisQueueSource(config);
  } catch (error) {
    process.stderr.write(`baton dashboard: cannot reach Redis (${(error as Error).message}); start Redis or point --redis / REDIS_URL at it\n`);
    return 1;
  }
  const started = performance.now();
  let dashboard;
  try {
    dashboard = await startDashboard({ source, host: options.host, port: options.port, token, allowWrites: options.allowWrites, refreshMs: options.refresh, log });
  } catch (error) {
    process.stderr.write(`baton dashboard: ${(error as Error).message}\n`);
    return 1;
  }
  process.stdout.write(`baton ${describeDashboard(dashboard)} — ${(performance.now() - started).toFixed(0)} ms\n`);
  const signal = await untilSignal();
  log(`${signal}: stopping the dashboard`);
  await dashboard.close();
  return 0;
}
