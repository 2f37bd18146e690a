import { connectFast } from '../queue/connection.ts';
import { withDeadline } from '../base/deadline.ts';
import { redactRedisUrl } from '../queue/redisUrl.ts';
import { findRedisServer } from '../redisServer/launch.ts';
import { noRedisMessage } from './localRedis.ts';

// `baton worker` before Redis answers: a worker may start before its Redis (a boot order, a Redis
// being restarted), so it waits rather than exits. It says once what to do (the ways `baton start`
// lists), then retries quietly, with one line of count now and then, until Redis answers or a
// signal stops it. A Redis that answers but refuses baton (a wrong password, NOPERM, a TLS
// certificate, something that is not Redis) is not waited for: waiting would not fix it. (A URL
// that cannot name a Redis at all is a usage error: common.ts, redisUrlProblem.)

export const REDIS_RETRY_MS = 2_000;
/** How often a waiting worker says it is still waiting. */
export const REDIS_WAIT_REPORT_MS = 30_000;
const PROBE_TIMEOUT_MS = 1_000;

/** Socket errors that mean "nothing there (yet)": worth waiting for. */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOENT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
]);

export type RedisProbe = Readonly<{ kind: 'answers' }> | Readonly<{ kind: 'unreachable' | 'refused'; reason: string }>;

/** Connects and PINGs once. No answer in time, or a socket error above: unreachable; any other error: refused. */
export async function probeRedis(url: string, timeoutMs: number = PROBE_TIMEOUT_MS): Promise<RedisProbe> {
  try {
    const client = await connectFast(url, timeoutMs);
    try {
      await withDeadline(client.ping(), timeoutMs, `Redis at ${redactRedisUrl(url)} did not answer PING within ${timeoutMs} ms`);
    } finally {
      client.disconnect();
    }
    return { kind: 'answers' };
  } catch (error) {
    const cause = (error as Error).cause as { code?: unknown; name?: unknown } | undefined;
    const replied = (error as Error).name === 'ReplyError' || cause?.name === 'ReplyError';
    const code = typeof cause?.code === 'string' ? cause.code : null;
    const unreachable = !replied && (cause === undefined || (code !== null && UNREACHABLE_CODES.has(code)));
    return { kind: unreachable ? 'unreachable' : 'refused', reason: (error as Error).message };
  }
}

export type RedisWait = Readonly<{
  /** A whole message, on its own (stderr). */
  say(message: string): void;
  /** A timestamped log line. */
  log(line: string): void;
  probe?: (url: string) => Promise<RedisProbe>;
  retryMs?: number;
  reportMs?: number;
}>;

/**
 * 'ready' once Redis at `url` answers (nothing said when it answers at once), 'stopped' when
 * SIGINT/SIGTERM came first, 'refused' when it answered but refuses baton (said once, with why).
 */
export async function waitForRedis(url: string, wait: RedisWait): Promise<'ready' | 'stopped' | 'refused'> {
  const probe = wait.probe ?? probeRedis;
  const shown = redactRedisUrl(url);
  const refused = (reason: string) => {
    wait.say(
      `Redis at ${shown} answers but refuses this worker: ${reason}; check the URL's user and password, its TLS files, and the Redis ACL (docs/teams.md)`,
    );
    return 'refused' as const;
  };
  const first = await probe(url);
  if (first.kind === 'answers') return 'ready';
  if (first.kind === 'refused') return refused(first.reason);
  const retryMs = wait.retryMs ?? REDIS_RETRY_MS;
  const reportMs = wait.reportMs ?? REDIS_WAIT_REPORT_MS;
  let stopped: NodeJS.Signals | null = null;
  let wake: () => void = () => undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    stopped = signal;
    wake();
  };
  // Before the message: whoever reads it may press Ctrl-C at once.
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  wait.say(
    `${noRedisMessage(url, { command: 'worker', serverInstalled: findRedisServer() !== null })}\nwaiting for Redis at ${shown}: retrying every ${retryMs / 1000} s (Ctrl-C to stop)`,
  );
  const started = Date.now();
  let lastReport = started;
  let attempts = 1;
  try {
    for (;;) {
      // A signal during a probe is seen here, without waiting out the next interval.
      if (!stopped) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, retryMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      if (stopped) {
        wait.log(`${stopped}: stopped before Redis at ${shown} answered (${attempts} attempts)`);
        return 'stopped';
      }
      attempts += 1;
      const next = await probe(url);
      if (next.kind === 'answers') {
        wait.log(`Redis at ${shown} answers after ${attempts} attempts (${seconds(Date.now() - started)}); starting`);
        return 'ready';
      }
      if (next.kind === 'refused') return refused(next.reason);
      if (Date.now() - lastReport >= reportMs) {
        lastReport = Date.now();
        wait.log(
          `still no Redis at ${shown}: ${attempts} attempts in ${seconds(Date.now() - started)}; retrying every ${retryMs / 1000} s`,
        );
      }
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}
