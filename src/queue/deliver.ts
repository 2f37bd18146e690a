import { withDeadline } from './deadline.ts';
import { queueConfigFrom } from './endpoint.ts';
import type { JobEnvelope } from './envelope.ts';
import type { HookQueue } from './hookTransport.ts';
import type { JobOutcome } from './outcome.ts';

// How a hook hands its event to the repository's queue without ever holding the agent
// (docs/architecture.md "Queue semantics": hooks never hang an agent): within a time budget, over
// the raw RESP client for plain Redis URLs (no Redis library to load, hookTransport.ts) or ioredis
// for Cluster and Sentinel, draining the spool first; spooling the event when Redis cannot be
// reached in time (docs/architecture.md "The spool"). Light imports only: the hook loads this on
// every event, the transport and the spool only when it has an event to deliver.

/** What a delivery tells the caller: its exit code, the result (stdout) and what to say (stderr). */
export type Delivery = { exitCode: number; stdout: string; stderr: string };

export type DeliverOptions = Readonly<{
  /**
   * Wait (within the budget) for the worker's result and report it. Only a hook whose answer
   * depends on the result needs it (the PreToolUse spawn claim); an event that only has to be
   * recorded returns once it is queued.
   */
  waitForResult: boolean;
}>;

/**
 * Enqueue within the budget, spooling when Redis cannot be reached; with `waitForResult`, wait for
 * the result if time allows.
 */
export async function deliver(envelope: JobEnvelope, args: { redis?: string; prefix?: string; budgetMs: number }, options: DeliverOptions): Promise<Delivery> {
  const deadline = Date.now() + args.budgetMs;
  const config = queueConfigFrom(args.redis, args.prefix, envelope.repo.root);
  const { connectHookQueue } = await import('./hookTransport.ts');
  const { drainSpool, spoolEvent } = await import('./spool.ts');
  const repo = envelope.repo;
  let client: HookQueue | null = null;
  let gaveUp = false;
  // A server that accepts the connection but never answers must not hold the agent: past the
  // budget the event is spooled (adding it twice is harmless: job ids and the journal deduplicate).
  const budgetLeft = () => Math.max(1, deadline - Date.now());
  const silent = `Redis did not answer within the hook budget (${args.budgetMs} ms)`;
  try {
    try {
      const enqueueing = (async () => {
        const connected = await connectHookQueue(config, repo, Math.max(50, Math.min(1_000, (deadline - Date.now()) / 2)));
        client = connected;
        if (gaveUp) {
          await connected.close();
          throw new Error(silent);
        }
        await drainSpool(repo.root, (spooled) => connected.enqueue(spooled));
        await connected.enqueue(envelope);
        return connected;
      })();
      enqueueing.catch(() => undefined);
      client = await withDeadline(enqueueing, budgetLeft(), silent).catch((error: unknown) => {
        gaveUp = true;
        throw error;
      });
    } catch (error) {
      const file = spoolEvent(repo.root, envelope);
      return {
        exitCode: 0,
        stdout: '',
        stderr: `baton: Redis unreachable (${(error as Error).message}); ${envelope.intent} event spooled to ${file}; it is applied, in order, once Redis and a worker are back\n`,
      };
    }
    let outcome: JobOutcome;
    try {
      if (!(await withDeadline(client.workerAvailable(), budgetLeft(), silent))) {
        return {
          exitCode: 0,
          stdout: '',
          stderr: `baton: no worker serves ${repo.root}; ${envelope.intent} event queued as ${envelope.eventId} and applied when one starts: baton worker --repo ${repo.root}\n`,
        };
      }
      if (!options.waitForResult) return { exitCode: 0, stdout: '', stderr: '' };
      // The wait ends by itself at the budget (XREAD BLOCK); the deadline is for a server that stopped answering.
      outcome = await withDeadline(client.waitFor(envelope.eventId, Math.max(0, deadline - Date.now() - 50)), budgetLeft() + 250, silent);
    } catch (error) {
      // The event is queued; Redis went away while we waited for its result (chaos suite).
      return {
        exitCode: 0,
        stdout: '',
        stderr: `baton: ${envelope.intent} event queued as ${envelope.eventId}; lost the connection to Redis while waiting for its result (${(error as Error).message}); the worker applies it once Redis is back\n`,
      };
    }
    if (outcome.kind === 'completed') {
      const result = outcome.value;
      const failed = result.status === 'failed';
      return {
        exitCode: failed ? 1 : 0,
        stdout: `${JSON.stringify(result)}\n`,
        stderr: failed && result.error ? `baton: ${result.error.code}: ${result.error.message}\n` : '',
      };
    }
    if (outcome.kind === 'failed') return { exitCode: 1, stdout: '', stderr: `baton: the worker could not apply ${envelope.eventId}: ${outcome.reason}\n` };
    return {
      exitCode: 0,
      stdout: '',
      stderr: `baton: ${envelope.intent} event queued as ${envelope.eventId}; not applied within the hook budget (${args.budgetMs} ms), the worker will apply it\n`,
    };
  } finally {
    await (client as HookQueue | null)?.close();
  }
}
