import { Command } from 'commander';
import { lookupRepoRoot } from './common.ts';
import { milliseconds, parseCommand, portNumber } from './options.ts';
import { namedQueueConfig, noRedisNamed } from '../queue/endpoint.ts';
import { dashboardOptions, dashboardToken, EXIT_FAILURE, queueOptions, REDIS_HELP, ServiceHost } from './serviceHost.ts';

// `baton dashboard`: bull-board over every repository queue recorded in Redis, refreshed as new
// repositories appear. Loopback and read-only by default; any other bind needs a token.

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
    .option('--port <n>', 'port; 0 picks a free port', portNumber, 3000);
  dashboardOptions(queueOptions(program, REDIS_HELP.running)).option(
    '--refresh <ms>',
    'how often to look for new repositories',
    milliseconds,
    2_000,
  );
  const exit = parseCommand(program, argv, {
    repo: 'baton dashboard shows every repository recorded in Redis (baton worker --dashboard shows the ones it serves)',
  });
  if (exit !== null) return exit;
  const options = program.opts<DashboardCommandOptions>();
  const host = new ServiceHost('baton dashboard');
  const badUrl = host.refuseRedisUrl(options.redis);
  if (badUrl !== null) return badUrl;
  const token = dashboardToken(options.token);
  const refused = await host.refuseBind(options.host, token);
  if (refused !== null) return refused;
  // Run in a repository, the Redis its commands use; elsewhere only a named one (docs/usage.md "Which Redis").
  const found = lookupRepoRoot(undefined);
  const repoRoot = found.ok ? found.root : undefined;
  const named = namedQueueConfig({ redisOption: options.redis, prefixOption: options.prefix, repoRoot });
  if (!named) return host.fail(noRedisNamed('baton dashboard', repoRoot));
  const config = named.queue;
  const prefixRefused = await host.refusePrefix(config);
  if (prefixRefused !== null) return prefixRefused;
  const { describeDashboard, redisQueueSource } = await import('../dashboard/index.ts');
  let source: Awaited<ReturnType<typeof redisQueueSource>>;
  try {
    source = await redisQueueSource(config);
  } catch (error) {
    return host.fail(`cannot reach Redis (${(error as Error).message}); start Redis or point --redis / REDIS_URL at it`);
  }
  const started = performance.now();
  const dashboard = await host.dashboard({
    source,
    host: options.host,
    port: options.port,
    token,
    allowWrites: options.allowWrites,
    refreshMs: options.refresh,
  });
  if (!dashboard) return EXIT_FAILURE;
  process.stdout.write(`baton ${describeDashboard(dashboard)} — ${(performance.now() - started).toFixed(0)} ms\n`);
  return host.serveUntilSignal('stopping the dashboard');
}
