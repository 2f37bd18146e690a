import { withDeadline } from '../base/deadline.ts';
import type { JobEnvelope } from './envelope.ts';
import type { HookQueue } from './hookTransport.ts';
import type { QueueConfig } from './keys.ts';
import type { JobOutcome } from './outcome.ts';
import { mainRepositoryOf } from '../base/repoRoot.ts';

// How a hook hands its event to the repository's queue without ever holding the agent
// (docs/architecture.md "Queue semantics": hooks never hang an agent): within a time budget, over
// the raw RESP client for plain Redis URLs (no Redis library to load, hookTransport.ts) or ioredis
// for Cluster and Sentinel, draining the spool first; spooling the event when Redis cannot be
// reached in time (docs/architecture.md "The spool"). Light imports only: the hook loads this on
// every event, the transport and the spool only when it has an event to deliver.

/**
 * What a delivery tells the caller: its exit code, the result (stdout), what to say (stderr), and
 * what became of the event: its result is known (`answered`); it is in the queue or the spool and
 * may still be applied (`queued`, `spooled`); or it was withdrawn before any worker took it and
 * never will be (`withdrawn`).
 */
export type Delivery = { exitCode: number; stdout: string; stderr: string; fate: 'answered' | 'queued' | 'spooled' | 'withdrawn' };

export type DeliverOptions = Readonly<{
  /**
   * Wait (within the budget) for the worker's result and report it. Only a hook whose answer
   * depends on the result needs it (the PreToolUse spawn claim); an event that only has to be
   * recorded returns once it is queued.
   */
  waitForResult: boolean;
  /**
   * For an event that must not be applied once its caller gave up on it (the spawn claim of a
   * PreToolUse hook that blocks the spawn, docs/hooks.md "Spawn claim (PreToolUse)"): when no worker
   * serves the repository, or no result came within the budget, withdraw the job atomically
   * (withdraw.ts). If a worker took it at that very moment, wait up to `graceMs` more for its result.
   */
  withdrawUnanswered?: Readonly<{ graceMs: number }>;
}>;

/** Where a delivery goes (the Redis and prefix its caller resolved) and how long it may take. */
export type DeliveryTarget = Readonly<{ queue: QueueConfig; budgetMs: number }>;

/**
 * Enqueue within the budget, spooling when Redis cannot be reached; with `waitForResult`, wait for
 * the result if time allows; with `withdrawUnanswered`, take back what is not answered.
 */
export async function deliver(envelope: JobEnvelope, args: DeliveryTarget, options: DeliverOptions): Promise<Delivery> {
  const deadline = Date.now() + args.budgetMs;
  const config = args.queue;
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
        fate: 'spooled',
      };
    }
    const queue = client;
    const unanswered = (why: string, queued: string): Promise<Delivery> =>
      options.withdrawUnanswered
        ? takeBack(queue, envelope, why, options.withdrawUnanswered.graceMs)
        : Promise.resolve({ exitCode: 0, stdout: '', stderr: `baton: ${queued}\n`, fate: 'queued' });
    let outcome: JobOutcome;
    try {
      if (!(await withDeadline(queue.workerAvailable(), budgetLeft(), silent))) {
        return await unanswered(
          `no worker serves ${repo.root}, so the ${envelope.intent} event ${envelope.eventId} was not applied`,
          `no worker serves ${repo.root}; ${envelope.intent} event queued as ${envelope.eventId} and applied when one starts: baton worker --repo ${mainRepositoryOf(repo.root) ?? repo.root}`,
        );
      }
      if (!options.waitForResult) return { exitCode: 0, stdout: '', stderr: '', fate: 'queued' };
      // The wait ends by itself at the budget (XREAD BLOCK); the deadline is for a server that stopped answering.
      outcome = await withDeadline(queue.waitFor(envelope.eventId, Math.max(0, deadline - Date.now() - 50)), budgetLeft() + 250, silent);
      if (outcome.kind === 'timeout') {
        return await unanswered(
          `the ${envelope.intent} event ${envelope.eventId} was not applied within the hook budget (${args.budgetMs} ms)`,
          `${envelope.intent} event queued as ${envelope.eventId}; not applied within the hook budget (${args.budgetMs} ms), the worker will apply it`,
        );
      }
    } catch (error) {
      // The event is queued; Redis went away while we waited for its result (chaos suite).
      return {
        exitCode: 0,
        stdout: '',
        stderr: `baton: ${envelope.intent} event queued as ${envelope.eventId}; lost the connection to Redis while waiting for its result (${(error as Error).message}); the worker applies it once Redis is back\n`,
        fate: 'queued',
      };
    }
    return answered(envelope.eventId, outcome);
  } finally {
    await (client as HookQueue | null)?.close();
  }
}

/**
 * Gives up on a queued event that must not be applied later (`withdrawUnanswered`): withdrawn when
 * no worker has taken it; answered when it finished meanwhile, or when a worker that took it at that
 * moment answers within `graceMs`; otherwise left `queued` (it may still be applied), saying so.
 */
export async function takeBack(queue: HookQueue, envelope: JobEnvelope, why: string, graceMs: number): Promise<Delivery> {
  const withdrawal = await withDeadline(
    queue.withdraw(envelope.eventId),
    1_000,
    `Redis did not answer the withdrawal of ${envelope.eventId}`,
  );
  if (withdrawal.kind === 'withdrawn') {
    return {
      exitCode: 0,
      stdout: '',
      stderr: `baton: ${why}; it was withdrawn before any worker took it: it is never applied\n`,
      fate: 'withdrawn',
    };
  }
  if (withdrawal.kind === 'finished') return answered(envelope.eventId, withdrawal.outcome);
  if (withdrawal.kind === 'missing') {
    return {
      exitCode: 0,
      stdout: '',
      stderr: `baton: ${why}; it is no longer in the queue (removed by hand?): whether it was applied is unknown\n`,
      fate: 'queued',
    };
  }
  // A worker took it just now: it is being applied, and its answer is near.
  const late = await withDeadline(
    queue.waitFor(envelope.eventId, graceMs),
    graceMs + 250,
    `Redis did not answer while waiting for ${envelope.eventId}`,
  );
  if (late.kind !== 'timeout') return answered(envelope.eventId, late);
  return {
    exitCode: 0,
    stdout: '',
    stderr: `baton: ${why}; a worker took it at that moment and gave no result within ${graceMs} ms more: it may still be applied\n`,
    fate: 'queued',
  };
}

/** A delivery that got the worker's answer. */
function answered(eventId: string, outcome: Exclude<JobOutcome, { kind: 'timeout' }>): Delivery {
  if (outcome.kind === 'failed')
    return { exitCode: 1, stdout: '', stderr: `baton: the worker could not apply ${eventId}: ${outcome.reason}\n`, fate: 'answered' };
  const result = outcome.value;
  const failed = result.status === 'failed';
  return {
    exitCode: failed ? 1 : 0,
    stdout: `${JSON.stringify(result)}\n`,
    stderr: failed && result.error ? `baton: ${result.error.code}: ${result.error.message}\n` : '',
    fate: 'answered',
  };
}
