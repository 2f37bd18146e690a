import type { ChainableCommander, Redis } from 'ioredis';
import { hexDigest } from '../base/digest.ts';
// The Lua script BullMQ's Queue.add runs for a plain job, from the installed BullMQ itself (its
// CommonJS build: the ESM one is not loadable as a deep import). Types: ./bullmqInternals.d.ts.
import { addStandardJob } from 'bullmq/dist/cjs/scripts/addStandardJob-9.js';
import { version as BULLMQ_VERSION } from 'bullmq/dist/cjs/version.js';

// Adding a job the way BullMQ's Queue.add does, without loading BullMQ. Loading BullMQ (~1.8 MB of
// bundled JavaScript, with the Lua of every script) costs a hook 30–70 ms on every agent event,
// more than everything else the hook does after start-up (bench/results/hook.md). A job added here
// is the job Queue.add would add: same script (BullMQ's own addStandardJob, run by its sha), same
// keys, same msgpack arguments, same queue meta; test/queue/addJob.test.ts adds jobs both ways and
// compares what lands in Redis, so a BullMQ upgrade that changes the format fails that test.
//
// Only what baton's jobs use is supported: a custom job id, no delay, priority, parent, repeat or
// deduplication (those take other scripts), options passed through as Queue.add would encode them.

export const JOB_SCRIPT_COMMAND = 'batonAddStandardJob';

/** Set by scripts/build.mjs in the bundles: the sha below, computed at build time. */
declare const BATON_ADD_JOB_SCRIPT_SHA: string | undefined;

/**
 * sha1 of the script: what EVALSHA runs (and what ioredis and BullMQ run it by). The bundles carry
 * it computed at build time, so a hook hashes no 26 KB of Lua and loads no node:crypto.
 */
export const ADD_JOB_SCRIPT_SHA =
  typeof BATON_ADD_JOB_SCRIPT_SHA === 'string' ? BATON_ADD_JOB_SCRIPT_SHA : hexDigest('sha1', addStandardJob.content);

type Scripted = { [JOB_SCRIPT_COMMAND](...args: (string | Buffer)[]): Promise<unknown> };

/**
 * Registers the script on a connection (once; ioredis then runs it by sha, loading it if needed) and
 * on a pipeline made before that (ioredis copies script commands into a pipeline when creating it).
 */
function scripted(redis: Redis, pipeline: ChainableCommander): Scripted {
  const holder = redis as unknown as Partial<Scripted>;
  if (!holder[JOB_SCRIPT_COMMAND])
    redis.defineCommand(JOB_SCRIPT_COMMAND, { numberOfKeys: addStandardJob.keys, lua: addStandardJob.content });
  const target = pipeline as unknown as Partial<Scripted>;
  if (!target[JOB_SCRIPT_COMMAND]) target[JOB_SCRIPT_COMMAND] = holder[JOB_SCRIPT_COMMAND];
  return target as Scripted;
}

export type PlainJob = Readonly<{
  prefix: string;
  queueName: string;
  name: string;
  data: unknown;
  jobId: string;
  /** Job options as given to Queue.add (e.g. JOB_OPTIONS); undefined values are dropped. */
  opts: Readonly<Record<string, unknown>>;
  timestamp?: number;
}>;

/** What adding `job` sends, independent of the Redis client: the queue meta, then the script's keys and arguments. */
export type PlainJobCommands = Readonly<{
  meta: Readonly<{ key: string; fields: Readonly<Record<string, string | number>> }>;
  keys: readonly string[];
  args: readonly (string | Buffer)[];
}>;

export function plainJobCommands(job: PlainJob): PlainJobCommands {
  if (job.jobId === '0' || job.jobId.startsWith('0:') || `${Number.parseInt(job.jobId, 10)}` === job.jobId || job.jobId.includes(':')) {
    throw new Error(`job id '${job.jobId}' is not allowed by BullMQ`);
  }
  const base = `${job.prefix}:${job.queueName}:`;
  const keys = ['wait', 'paused', 'meta', 'id', 'completed', 'delayed', 'active', 'events', 'marker'].map((key) => `${base}${key}`);
  // Queue.add → Job: options merged as { attempts: 0, ...opts, jobId }, undefined values dropped.
  const opts: Record<string, unknown> = { attempts: 0 };
  for (const [key, value] of Object.entries({ ...job.opts, jobId: job.jobId })) if (value !== undefined) opts[key] = value;
  for (const unsupported of ['delay', 'priority', 'parent', 'repeat', 'repeatJobKey', 'deduplication', 'debounce', 'telemetry', 'lifo']) {
    if (opts[unsupported] !== undefined) throw new Error(`addPlainJob does not support the '${unsupported}' option`);
  }
  const args = [base, job.jobId, job.name, job.timestamp ?? Date.now(), null, null, null, null, null, null];
  return {
    meta: { key: `${base}meta`, fields: { 'opts.maxLenEvents': 10_000, version: `bullmq:${BULLMQ_VERSION}` } },
    keys,
    args: [packMsgpack(args), JSON.stringify(job.data ?? {}), packMsgpack(opts)],
  };
}

/**
 * Queues the commands that add `job` on `pipeline` (created from `redis`): the queue meta a Queue
 * writes when constructed, then the add script. The script's reply is the job id (an existing job
 * with that id is left alone and its id returned), or a negative BullMQ error code.
 */
export function addPlainJob(redis: Redis, pipeline: ChainableCommander, job: PlainJob): void {
  const { meta, keys, args } = plainJobCommands(job);
  pipeline.hset(meta.key, meta.fields);
  scripted(redis, pipeline)[JOB_SCRIPT_COMMAND](...keys, ...args);
}

/** The same as raw commands (src/queue/resp.ts): HSET meta, then EVALSHA (see `addJobByScript` for NOSCRIPT). */
export function plainJobRawCommands(job: PlainJob): { meta: (string | number | Buffer)[]; evalsha: (string | number | Buffer)[] } {
  const { meta, keys, args } = plainJobCommands(job);
  return {
    meta: ['HSET', meta.key, ...Object.entries(meta.fields).flat()],
    evalsha: ['EVALSHA', ADD_JOB_SCRIPT_SHA, keys.length, ...keys, ...args],
  };
}

/** EVALSHA's command turned into EVAL with the script's text: for a server that answered NOSCRIPT. */
export function evalInsteadOfEvalsha(evalsha: readonly (string | number | Buffer)[]): (string | number | Buffer)[] {
  return ['EVAL', addStandardJob.content, ...evalsha.slice(2)];
}

// ---------------------------------------------------------------------------------------------
// The msgpack BullMQ sends (msgpackr with useRecords: false, encodeUndefinedAsNil: true) for the
// values used above: nil, booleans, numbers, strings, arrays and plain objects.

export function packMsgpack(value: unknown): Buffer {
  const parts: Buffer[] = [];
  const header = (bytes: number[]) => parts.push(Buffer.from(bytes));
  const write = (item: unknown): void => {
    if (item === null || item === undefined) header([0xc0]);
    else if (item === true || item === false) header([item ? 0xc3 : 0xc2]);
    else if (typeof item === 'number') writeNumber(item);
    else if (typeof item === 'string') {
      const bytes = Buffer.from(item, 'utf8');
      const length = bytes.length;
      if (length < 32) header([0xa0 | length]);
      else if (length < 0x100) header([0xd9, length]);
      else if (length < 0x10000) header([0xda, length >> 8, length & 0xff]);
      else header([0xdb, ...uint32(length)]);
      parts.push(bytes);
    } else if (Array.isArray(item)) {
      lengthHeader(item.length, 0x90, 0xdc, 0xdd);
      for (const element of item) write(element);
    } else if (typeof item === 'object') {
      const entries = Object.entries(item as Record<string, unknown>);
      // msgpackr writes every map with a 16-bit length (it reserves the header before counting).
      if (entries.length < 0x10000) header([0xde, entries.length >> 8, entries.length & 0xff]);
      else header([0xdf, ...uint32(entries.length)]);
      for (const [key, element] of entries) {
        write(key);
        write(element);
      }
    } else throw new Error(`cannot encode a ${typeof item} as msgpack`);
  };
  const lengthHeader = (length: number, fix: number, sixteen: number, thirtyTwo: number) => {
    if (length < 16) header([fix | length]);
    else if (length < 0x10000) header([sixteen, length >> 8, length & 0xff]);
    else header([thirtyTwo, ...uint32(length)]);
  };
  const writeNumber = (number: number) => {
    if (number >>> 0 === number) {
      if (number < 0x80) header([number]);
      else if (number < 0x100) header([0xcc, number]);
      else if (number < 0x10000) header([0xcd, number >> 8, number & 0xff]);
      else header([0xce, ...uint32(number)]);
    } else if (number >> 0 === number) {
      if (number >= -0x20) header([0x100 + number]);
      else if (number >= -0x80) header([0xd0, number & 0xff]);
      else if (number >= -0x8000) header([0xd1, (number >> 8) & 0xff, number & 0xff]);
      else header([0xd2, ...uint32(number >>> 0)]);
    } else {
      const buffer = Buffer.alloc(9);
      buffer[0] = 0xcb;
      buffer.writeDoubleBE(number, 1);
      parts.push(buffer);
    }
  };
  write(value);
  return Buffer.concat(parts);
}

function uint32(value: number): number[] {
  return [(value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff];
}
