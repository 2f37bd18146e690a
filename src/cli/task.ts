import { READ_ONLY_INTENTS } from '../core/intents.ts';
import { lifecycleEventSchema } from '../core/events.ts';
import { MAX_ARTIFACT_BYTES } from '../core/stageArtifact.ts';
import type { LifecycleEvent } from '../core/events.ts';
import type { WorkspaceFingerprinter } from '../core/types.ts';
import { envelopeFor } from '../queue/envelope.ts';
import { envelopeTaskRefSchema } from '../queue/envelopeSchema.ts';
import { eventIdForKey, randomEventId } from '../queue/eventIds.ts';
import { repoIdentity } from '../queue/checkoutId.ts';
import { failed, payloadInvalid } from '../core/results.ts';
import { resolveTaskRef } from '../core/taskRef.ts';
import type { RepoIdentity } from '../queue/checkoutId.ts';
import { HEARTBEAT_INTERVAL_MS, PREFIX_NEEDS_HASH_TAG_CODE, prefixProblem } from '../queue/keys.ts';
import type { QueueConfig } from '../queue/keys.ts';
import type { JobOutcome } from '../queue/client.ts';
import type { HookQueue } from '../queue/hookTransport.ts';
import { workerWithin } from '../queue/outcome.ts';
import { lookupRepoRoot, printJson as printJsonAsIs, redisUrlProblem, unusedOptionWarning } from './common.ts';
import { underAgentInfraShim } from '../base/agentInfraShim.ts';
import { inAgentInfraWords } from './agentInfraWords.ts';
import { namedQueueConfig, noRedisNamed } from '../queue/endpoint.ts';
import { DEFAULT_TASK_TIMEOUT_MS, TASK_USAGE, parseTaskCommand } from './taskArgs.ts';
import type { TaskCommonOptions } from './taskArgs.ts';

// `baton task <task-ref|auto> <intent> [--flag value]...`: read-only intents read the files
// directly; every other intent is a job on the repository's queue, applied by the worker, whose
// result is printed as one line of JSON (exit 1 when it failed, 2 for usage errors).

export { DEFAULT_TASK_TIMEOUT_MS } from './taskArgs.ts';
const CONNECT_TIMEOUT_MS = 2_000;

/** One result as one line of JSON; under the agent-infra shim, in 0.9.2's words (agentInfraWords.ts). */
function printJson(result: object): void {
  printJsonAsIs(underAgentInfraShim() ? inAgentInfraWords(result) : result);
}

/** route and status never capture a fingerprint; this seam proves it. */
const noFingerprints: WorkspaceFingerprinter = {
  capture: () => Promise.reject(new Error('read-only intents do not capture fingerprints')),
  diff: () => Promise.reject(new Error('read-only intents do not capture fingerprints')),
};

export async function run(argv: string[]): Promise<number> {
  const parsed = parseTaskCommand(argv);
  if (parsed.kind === 'help') {
    process.stdout.write(TASK_USAGE);
    return 0;
  }
  if (parsed.kind === 'usage-error') {
    printJson(payloadInvalid(parsed.message));
    process.stderr.write(TASK_USAGE);
    return 2;
  }
  if (parsed.options.contentFromStdin) {
    const content = await readArtifactContent();
    if (typeof content !== 'string') {
      printJson(payloadInvalid(content.error));
      return 2;
    }
    const withContent = lifecycleEventSchema.safeParse({ ...parsed.event, content });
    if (!withContent.success) {
      printJson(payloadInvalid(withContent.error.issues[0]?.message ?? 'invalid artifact content'));
      return 2;
    }
    parsed.event = withContent.data;
  }
  const root = lookupRepoRoot(parsed.options.repo);
  if (!root.ok) {
    printJson(failed(root.code, root.message));
    return 1;
  }
  const { taskRef } = parsed.event;
  if (!envelopeTaskRefSchema.safeParse(taskRef).success) {
    // '' or a ref longer than a job may carry cannot name a task: answer with the resolve-ref failure
    // upstream gives (INVALID_TASK_REF, SHORT_ID_CAPACITY_EXCEEDED …) without a round trip.
    const resolved = resolveTaskRef(taskRef, { repoRoot: root.root });
    if (!resolved.ok) {
      printJson(failed(resolved.code, resolved.message, resolved.taskId));
      return 1;
    }
  }
  const readOnly = READ_ONLY_INTENTS.has(parsed.event.intent);
  if (readOnly && parsed.options.redis !== undefined) {
    process.stderr.write(
      unusedOptionWarning('baton task', 'redis', `'${parsed.event.intent}' reads the run files directly; it does not use Redis`),
    );
  }
  const badUrl = readOnly ? null : redisUrlProblem(parsed.options.redis);
  if (badUrl !== null) {
    // Not BATON_REDIS_UNAVAILABLE ("start Redis"): no Redis can be reached at such an address.
    printJson(payloadInvalid(badUrl));
    return 2;
  }
  const result = readOnly
    ? (await (await import('../core/engine.ts')).applyEvent(parsed.event, { repoRoot: root.root, fingerprinter: noFingerprints })).result
    : await applyThroughQueue(parsed.event, repoIdentity(root.root), parsed.options);
  printJson(result);
  return result.status === 'failed' ? 1 : 0;
}

/** `--content -`: the whole of standard input, UTF-8, at most MAX_ARTIFACT_BYTES. */
async function readArtifactContent(): Promise<string | { error: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_ARTIFACT_BYTES) return { error: `--content -: standard input is larger than ${MAX_ARTIFACT_BYTES} bytes` };
    chunks.push(chunk);
  }
  const text = new TextDecoder('utf-8', { fatal: true });
  try {
    return text.decode(Buffer.concat(chunks));
  } catch {
    return { error: '--content -: standard input is not valid UTF-8' };
  }
}

type PrintableResult = { status: string } & Record<string, unknown>;

export async function applyThroughQueue(event: LifecycleEvent, repo: RepoIdentity, options: TaskCommonOptions): Promise<PrintableResult> {
  // `--redis` > $REDIS_URL > the endpoint the repository's worker recorded > the private Redis of `baton start`.
  const named = namedQueueConfig({ redisOption: options.redis, repoRoot: repo.root });
  if (!named) return failed('BATON_REDIS_UNAVAILABLE', noRedisNamed('baton task', repo.root));
  const config = named.queue;
  // The hook's transport: the raw RESP client for plain Redis URLs (no ioredis to load: this
  // command runs for every lifecycle step), ioredis for Cluster and Sentinel.
  const { connectHookQueue } = await import('../queue/hookTransport.ts');
  const { drainSpool } = await import('../queue/spool.ts');
  const problem = prefixProblem(config.redisUrl, config.prefix);
  if (problem) return failed(PREFIX_NEEDS_HASH_TAG_CODE, problem.slice(PREFIX_NEEDS_HASH_TAG_CODE.length + 2));
  let client: HookQueue;
  try {
    client = await connectHookQueue(config, repo, CONNECT_TIMEOUT_MS);
  } catch (error) {
    return failed(
      'BATON_REDIS_UNAVAILABLE',
      `cannot reach Redis (${(error as Error).message}); run 'baton start' in the repository (it finds Redis or starts a private one), or point --redis / REDIS_URL at a Redis (see docs/usage.md "baton start")`,
    );
  }
  let inlineWorker: Awaited<ReturnType<typeof startInlineWorker>> | null = null;
  const eventId = options.idempotencyKey !== undefined ? eventIdForKey(options.idempotencyKey) : randomEventId();
  try {
    await drainSpool(repo.root, (envelope) => client.enqueue(envelope));
    if (options.worker === 'inline') inlineWorker = await startInlineWorker(config, repo);
    else if (!(await workerWithin(client, HEARTBEAT_INTERVAL_MS + 500))) {
      return failed(
        'BATON_WORKER_UNAVAILABLE',
        `no baton worker serves ${repo.root}; start one with 'baton worker --repo ${repo.root}' (or 'baton start' in it), or add '--worker inline' to apply this command here`,
      );
    }
    await client.enqueue(envelopeFor(event, repo, 'cli', eventId));
    const timeoutMs = options.timeoutMs ?? DEFAULT_TASK_TIMEOUT_MS;
    const outcome = await client.waitFor(eventId, timeoutMs);
    if (outcome.kind !== 'timeout') return resultOf(outcome, eventId);
    // Giving up must not leave the command to be applied later, unnoticed (a frozen worker, a queue
    // paused from the dashboard). What the withdrawal found is decided in Redis, atomically with it.
    const withdrawal = await client.withdraw(eventId);
    if (withdrawal.kind === 'finished') return resultOf(withdrawal.outcome, eventId);
    const late = `no result within ${timeoutMs} ms`;
    const status = `see 'baton task ${event.taskRef === 'auto' ? '<ref>' : event.taskRef} status'`;
    if (withdrawal.kind === 'withdrawn')
      return failed('BATON_TIMEOUT', `${late}; job ${eventId} was withdrawn before any worker took it: nothing was applied`);
    if (withdrawal.kind === 'taken') {
      return failed(
        'BATON_TIMEOUT',
        `${late}; a worker took job ${eventId} before it could be withdrawn, so it is being applied (not withdrawn): ${status} for its outcome`,
      );
    }
    return failed(
      'BATON_TIMEOUT',
      `${late}; job ${eventId} is no longer queued (removed, e.g. from the dashboard, or cleaned up after it finished): it may or may not have been applied, ${status}`,
    );
  } catch (error) {
    if (/\bNOPERM\b/.test((error as Error).message)) {
      // A locked-down team Redis whose ACL does not cover this prefix or a command: not an outage.
      return failed(
        'BATON_REDIS_NO_PERMISSION',
        `the Redis user may not do what baton needs under prefix '${config.prefix}' (${(error as Error).message}); check the prefix, or grant the ACL rule (see docs/teams.md "ACL: a user that sees only baton's keys")`,
      );
    }
    // Redis went away mid-command (found by test/chaos/redisRestart.test.ts: the command used to
    // crash with a stack trace instead of printing its one-line JSON result).
    const retry =
      options.idempotencyKey !== undefined
        ? 're-run the same command (same --idempotency-key) to get its result without applying it twice'
        : "see 'baton task <ref> status'; pass --idempotency-key to make a retried command apply at most once";
    return failed(
      'BATON_REDIS_UNAVAILABLE',
      `lost the connection to Redis (${(error as Error).message}) while applying job ${eventId}; it may or may not have been applied: ${retry}`,
    );
  } finally {
    await inlineWorker?.close();
    await client.close();
  }
}

function resultOf(outcome: Exclude<JobOutcome, { kind: 'timeout' }>, eventId: string): PrintableResult {
  if (outcome.kind === 'completed') return outcome.value;
  return failed('BATON_JOB_FAILED', `the worker could not apply job ${eventId}: ${outcome.reason}`);
}

/** `--worker inline`: serve the repository queue in this process until our job is done. */
async function startInlineWorker(config: QueueConfig, repo: RepoIdentity) {
  const { startBatonWorker } = await import('../workers/worker.ts');
  const { createFingerprinter } = await import('../fingerprint/index.ts');
  return startBatonWorker({ queue: config, repos: [repo.root], createFingerprinter: () => createFingerprinter() });
}
