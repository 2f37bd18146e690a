import type { LifecycleEvent } from '../core/events.ts';
import { deliver } from '../queue/deliver.ts';
import type { DeliveryTarget } from '../queue/deliver.ts';
import type { QueueConfig } from '../queue/keys.ts';
import { envelopeFor } from '../queue/envelope.ts';
import { eventIdForNative } from '../queue/eventIds.ts';
import type { RepoIdentity } from '../queue/checkoutId.ts';
import type { ClientId } from '../clients/registry.ts';
import type { HookReport } from './report.ts';

// PreToolUse on a lifecycle spawn (docs/hooks.md "Spawn claim (PreToolUse)"): claim the prepared
// delegation for this tool call through the serialized worker and wait for its answer within the
// budget. Refused → exit 2 with the reason. No worker answering → exit 2 naming `baton worker`.
// Redis down or not configured → the read-only check of the run files (spawnCheck.ts), said on
// stderr.
//
// A blocked tool call never holds the delegation. When the hook gives up on its claim (no worker,
// or no answer within the budget), it withdraws the claim from the queue atomically: removed if no
// worker has taken it (then it is never applied), else answered by its outcome. A worker that took
// it at that very moment gets a short grace to answer; if it applied the claim, the spawn is
// allowed after all. If no answer comes even then, or the claim cannot be withdrawn (spooled, Redis
// gone), the spawn is blocked and a release event follows the claim through the same queue: the
// worker applies it after the claim (even a stalled one: with a global concurrency of 1 nothing
// passes it) and frees the delegation. The claim's `notAfter` is the backstop (a claim retried from
// the dashboard after its release).

/** How long a hook waits for the answer of a claim a worker took just as the hook gave up on it. */
export const CLAIM_GRACE_MS = 1_000;

export type SpawnClaimRequest = Readonly<{
  root: string;
  repo: RepoIdentity;
  client: ClientId;
  budgetMs: number;
  verbose: boolean;
  /** Which Redis (null: none configured for the repository). */
  queue: QueueConfig | null;
  nativeAgent: string;
  toolCallId: string;
  /** The model the spawning tool call asks for, when it names one. */
  model?: string;
  sessionId: string | undefined;
}>;

export async function claimSpawn(report: HookReport, claim: SpawnClaimRequest, noRedisAdvice: string): Promise<number> {
  const { root, client, nativeAgent, queue } = claim;
  const fileCheck = async (why: string): Promise<number> => {
    const { checkSpawn } = await import('./spawnCheck.ts');
    const verdict = checkSpawn(root, client, nativeAgent, claim.toolCallId);
    report.notice(`baton: ${why}; checked the run files instead (concurrent spawns are not serialized without the worker)`);
    if (verdict.allow) return 0;
    report.notice(verdict.reason);
    return 2;
  };
  if (!queue) return fileCheck(`WARNING: ${noRedisAdvice}`);
  // Backstop: a claim a worker applies after the hook stopped waiting for it changes nothing.
  const notAfter = new Date(Date.now() + claim.budgetMs + CLAIM_GRACE_MS).toISOString();
  const event: LifecycleEvent = {
    intent: 'claim-spawn',
    taskRef: 'auto',
    client,
    nativeAgent,
    toolCallId: claim.toolCallId,
    notAfter,
    ...(claim.model ? { model: claim.model } : {}),
  };
  const envelope = envelopeFor(event, claim.repo, 'hook', eventIdForNative([client, 'claim', claim.sessionId, claim.toolCallId]));
  const target: DeliveryTarget = { queue, budgetMs: claim.budgetMs };
  const outcome = await deliver(envelope, target, { waitForResult: true, withdrawUnanswered: { graceMs: CLAIM_GRACE_MS } });
  const result = parseResult(outcome.stdout);
  if (result) {
    if (claim.verbose) report.say(`baton: ${outcome.stdout}`);
    if (result.status !== 'failed') return 0;
    report.say(`baton: ${result.error?.code ?? 'BATON_EVENT_FAILED'}: ${result.error?.message ?? 'the spawn claim failed'}\n`);
    return 2;
  }
  const why = outcome.stderr.trim().replace(/^baton: /, '') || 'the worker did not answer';
  if (outcome.fate === 'spooled') {
    const verdict = await fileCheck(why);
    // The spooled claim reaches the worker later; a blocked call's claim must not hold then. Its
    // release is spooled right behind it (Redis was just found unreachable: no second wait).
    if (verdict !== 0) await releaseClaim(claim, target, true);
    return verdict;
  }
  // Withdrawn, or failed by the worker (a failed job changes nothing): the claim was never applied.
  const holds =
    outcome.fate === 'withdrawn' || outcome.fate === 'answered'
      ? ', so nothing holds the delegation'
      : `; its release was ${await releaseClaim(claim, target)} behind the claim, so the claim does not hold the delegation once the worker applies both`;
  report.say(
    `baton: the spawn of ${nativeAgent} was not claimed, so it is blocked: ${why}${holds}. Start the repository's worker (baton worker --repo ${root}, or baton start) and spawn again.\n`,
  );
  return 2;
}

/** How long the release may wait for Redis before it is spooled: the hook has used its budget already. */
const RELEASE_BUDGET_MS = 1_000;

/**
 * Sends the release of this tool call's claim behind the claim: through the queue, or the spool
 * (drained in order before anything else is added, so the release still comes after the claim).
 */
async function releaseClaim(claim: SpawnClaimRequest, target: DeliveryTarget, spoolOnly = false): Promise<'queued' | 'spooled'> {
  const event: LifecycleEvent = { intent: 'release-spawn', taskRef: 'auto', client: claim.client, toolCallId: claim.toolCallId };
  const envelope = envelopeFor(event, claim.repo, 'hook', eventIdForNative([claim.client, 'release', claim.sessionId, claim.toolCallId]));
  if (spoolOnly) {
    const { spoolEvent } = await import('../queue/spool.ts');
    spoolEvent(claim.root, envelope);
    return 'spooled';
  }
  const sent = await deliver(envelope, { ...target, budgetMs: Math.min(target.budgetMs, RELEASE_BUDGET_MS) }, { waitForResult: false });
  return sent.fate === 'spooled' ? 'spooled' : 'queued';
}

function parseResult(stdout: string): { status: string; error?: { code: string; message: string } | null } | null {
  if (!stdout.trim()) return null;
  try {
    const value = JSON.parse(stdout) as { status?: unknown };
    return typeof value.status === 'string' ? (value as { status: string; error?: { code: string; message: string } | null }) : null;
  } catch {
    return null;
  }
}
