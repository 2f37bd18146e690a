import { redactRedisUrl } from '../queue/redisUrl.ts';
import { findRedisServer } from '../redisServer/launch.ts';
import { answers, noRedisMessage } from './localRedis.ts';

// `baton worker` before Redis answers: a worker may start before its Redis (a boot order, a Redis
// being restarted), so it waits rather than exits. It says once what to do (the ways `baton start`
// lists), then retries quietly, with one line of count now and then, until Redis answers or a
// signal stops it. (A URL that cannot name a Redis at all is a usage error: common.ts, redisUrlProblem.)

export const REDIS_RETRY_MS = 2_000;
/** How often a waiting worker says it is still waiting. */
export const REDIS_WAIT_REPORT_MS = 30_000;

export type RedisWait = Readonly<{
  /** The whole message, once (stderr). */
  say(message: string): void;
  /** A timestamped log line. */
  log(line: string): void;
  probe?: (url: string) => Promise<boolean>;
  retryMs?: number;
  reportMs?: number;
}>;

/**
 * Resolves true once Redis at `url` answers, false when SIGINT/SIGTERM came first. Nothing is
 * said when it answers at once.
 */
export async function waitForRedis(url: string, wait: RedisWait): Promise<boolean> {
  const probe = wait.probe ?? answers;
  if (await probe(url)) return true;
  const retryMs = wait.retryMs ?? REDIS_RETRY_MS;
  const reportMs = wait.reportMs ?? REDIS_WAIT_REPORT_MS;
  const shown = redactRedisUrl(url);
  let stopped: NodeJS.Signals | null = null;
  let wake = () => undefined as void;
  const onSignal = (signal: NodeJS.Signals) => {
    stopped = signal;
    wake();
  };
  // Before the message: whoever reads it may press Ctrl-C at once.
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  wait.say(`${noRedisMessage(url, { command: 'worker', serverInstalled: findRedisServer() !== null })}\nwaiting for Redis at ${shown}: retrying every ${retryMs / 1000} s (Ctrl-C to stop)`);
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
        return false;
      }
      attempts += 1;
      if (await probe(url)) {
        wait.log(`Redis at ${shown} answers after ${attempts} attempts (${seconds(Date.now() - started)}); starting`);
        return true;
      }
      if (Date.now() - lastReport >= reportMs) {
        lastReport = Date.now();
        wait.log(`still no Redis at ${shown}: ${attempts} attempts in ${seconds(Date.now() - started)}; retrying every ${retryMs / 1000} s`);
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
