// The Lua script BullMQ's Job.remove runs, from the installed BullMQ (see addJob.ts for why its
// CommonJS build). Types: ./bullmqInternals.d.ts.
import { removeJob } from 'bullmq/dist/cjs/scripts/removeJob-2.js';
import { hexDigest } from '../base/digest.ts';
import type { JobOutcome } from './outcome.ts';

// Withdrawing a job no worker has taken (docs/architecture.md "Queue semantics"), shared by the
// ioredis client (client.ts: `baton task --timeout`) and the hook's raw transport (hookTransport.ts:
// the claim of a spawn the hook blocks, docs/hooks.md "Spawn claim (PreToolUse)"). The hook imports
// this module only when it withdraws: the script is 12 KB of Lua no other hook path needs.

/**
 * What withdrawing a job found, decided atomically in Redis: `withdrawn`: no worker had taken it,
 * and now none can (never applied); `taken`: a worker took it (it is being applied, or will be once
 * a stalled worker's job is handed over), left in place; `finished`: it finished meanwhile, with
 * its outcome; `missing`: no such job (removed by someone else, or cleaned up after it finished), so
 * whether it was applied is unknown here.
 */
export type Withdrawal =
  | Readonly<{ kind: 'withdrawn' }>
  | Readonly<{ kind: 'taken' }>
  | Readonly<{ kind: 'finished'; outcome: Exclude<JobOutcome, { kind: 'timeout' }> }>
  | Readonly<{ kind: 'missing' }>;

/**
 * BullMQ's removeJob (what Job.remove runs) removes a job in any state but active-and-locked, so
 * alone it would remove a finished job, or one a stalled worker still holds after its lock lapsed,
 * and the caller could not tell. This check runs first, in the same script: a job that finished or
 * was ever taken (`processedOn`, set when a worker takes it and kept when a stall hands it back) is
 * left alone and named. KEYS and ARGV are removeJob's: job key, repeat key; job id, remove
 * children, queue key prefix.
 */
export const WITHDRAW_SCRIPT = `-- baton: withdraw only a job that no worker has taken (src/queue/withdraw.ts)
if redis.call("EXISTS", KEYS[1]) == 0 then return "missing" end
local batonProgress = redis.call("HMGET", KEYS[1], "finishedOn", "processedOn")
if batonProgress[1] then return "finished" end
if batonProgress[2] then return "taken" end
${removeJob.content}`;

/** sha1 of the script: what EVALSHA runs (ioredis runs a defined command by the same sha). */
export const WITHDRAW_SCRIPT_SHA = hexDigest('sha1', WITHDRAW_SCRIPT);

/** The script's keys and arguments for job `jobId` of the queue whose keys start with `queueKeyPrefix` (`<prefix>:<queue>:`). */
export function withdrawKeysAndArgs(queueKeyPrefix: string, jobId: string): { keys: [string, string]; args: [string, string, string] } {
  return { keys: [`${queueKeyPrefix}${jobId}`, `${queueKeyPrefix}repeat`], args: [jobId, '1', queueKeyPrefix] };
}

/** The raw commands (src/queue/resp.ts): EVALSHA, and EVAL with the script's text for a server that answers NOSCRIPT. */
export function withdrawCommands(queueKeyPrefix: string, jobId: string): { evalsha: string[]; evalScript: string[] } {
  const { keys, args } = withdrawKeysAndArgs(queueKeyPrefix, jobId);
  return {
    evalsha: ['EVALSHA', WITHDRAW_SCRIPT_SHA, '2', ...keys, ...args],
    evalScript: ['EVAL', WITHDRAW_SCRIPT, '2', ...keys, ...args],
  };
}

/** What the script's reply says; a finished job's outcome is read by the caller afterwards (finished jobs stay finished). */
export function withdrawalKind(reply: unknown, jobId: string): 'withdrawn' | 'taken' | 'finished' | 'missing' {
  if (reply === 1) return 'withdrawn';
  // 0: BullMQ found it locked by a worker (which the check makes unreachable, but means taken).
  if (reply === 'taken' || reply === 0) return 'taken';
  if (reply === 'finished' || reply === 'missing') return reply;
  throw new Error(`BullMQ's removeJob refused job ${jobId} (code ${String(reply)})`);
}

/** A withdrawal from the script's kind and, for a finished job, its outcome as read after the script. */
export function withdrawalOf(kind: ReturnType<typeof withdrawalKind>, outcome: JobOutcome | null): Withdrawal {
  if (kind !== 'finished') return { kind };
  return outcome && outcome.kind !== 'timeout' ? { kind: 'finished', outcome } : { kind: 'missing' };
}
