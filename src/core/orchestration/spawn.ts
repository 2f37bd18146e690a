import type { ErrorCode } from '../errorCodes.ts';
import { failed } from '../results.ts';
import { claimDelegationSpawn, managedDelegationRole, releaseDelegationSpawn } from '../receipts.ts';
import type { OrchestrationResult } from '../types.ts';
import { reportRun, resolve, save, withUpdates } from './steps.ts';
import type { OrchestrationContext } from './steps.ts';
import { pendingDelegations } from './scan.ts';
import { guardHolders } from './guard.ts';
import { withActivationDeadline } from './activationDeadline.ts';
import { separationRefusal } from './modelPolicy.ts';
import { vendorRefusal } from './vendorPolicy.ts';
import type { PendingMatch } from './scan.ts';

// The spawn check and claim (PreToolUse, baton addition, docs/hooks.md "Spawn claim (PreToolUse)").

export type SpawnRefusal = Readonly<{ code: ErrorCode; message: string; taskId: string | null }>;

/**
 * Which prepared delegation a lifecycle spawn of `nativeAgent` by `client` may start, or why none:
 * the one-pending rule as seen before the spawning tool runs. Shared by the read-only file check
 * (Redis down) and the worker's claim.
 */
export function spawnTarget(
  matches: readonly PendingMatch[],
  repoRoot: string,
  client: string,
  nativeAgent: string,
): PendingMatch | SpawnRefusal {
  const role = managedDelegationRole(nativeAgent);
  if (!role) return { code: 'DELEGATION_IGNORED', message: `subagent '${nativeAgent}' is not lifecycle-managed`, taskId: null };
  const prepared = matches.filter((match) => match.receipt.client === client && match.receipt.status === 'prepared');
  if (prepared.length === 0) {
    const other = matches[0];
    const detail = other
      ? ` The pending delegation is ${other.receipt.id} of ${other.taskId} (${other.receipt.stage}, client ${other.receipt.client}, ${other.receipt.status}); finish it or run 'baton task ${other.taskId} abort'.`
      : ` Run 'baton task <task> route' and 'baton task <task> prepare --client ${client}' first.`;
    return {
      code: 'ORCHESTRATION_DELEGATION_MISSING',
      message: `no lifecycle delegation is prepared for ${nativeAgent} in ${repoRoot}, so this spawn would not be recorded.${detail}`,
      taskId: other?.taskId ?? null,
    };
  }
  if (prepared.length > 1) {
    return {
      code: 'ORCHESTRATION_DELEGATION_AMBIGUOUS',
      message: `${prepared.length} prepared delegations match ${client} in ${repoRoot} (${prepared.map((match) => match.taskId).join(', ')}); abort all but one before spawning.`,
      taskId: null,
    };
  }
  const match = prepared[0]!;
  if (match.receipt.role !== role) {
    return {
      code: 'DELEGATION_ROLE_MISMATCH',
      message: `the prepared delegation ${match.receipt.id} of ${match.taskId} is ${match.receipt.stage} round ${match.receipt.round} for a ${match.receipt.role}; spawn agent-infra-lifecycle-${match.receipt.role}, not ${nativeAgent}.`,
      taskId: match.taskId,
    };
  }
  return match;
}

function isRefusal(value: PendingMatch | SpawnRefusal): value is SpawnRefusal {
  return 'code' in value;
}

/**
 * PreToolUse through the serialized worker: exactly one tool call claims the prepared delegation,
 * so of several spawns in one assistant message only one passes. Refusals change nothing (the run
 * is not paused: nothing has started yet).
 */
export function claimSpawn(
  ctx: OrchestrationContext,
  client: string,
  event: { nativeAgent: string; toolCallId: string; notAfter?: string | undefined; model?: string | undefined },
): OrchestrationResult {
  if (event.notAfter !== undefined && Date.parse(ctx.now()) > Date.parse(event.notAfter)) {
    return failed(
      'DELEGATION_SPAWN_CLAIM_EXPIRED',
      `the spawn claim of tool call ${event.toolCallId} arrived after its hook gave up (${event.notAfter}); that spawn was blocked, nothing was claimed`,
    );
  }
  const target = spawnTarget(
    guardHolders(ctx, () => true),
    ctx.repoRoot,
    client,
    event.nativeAgent,
  );
  if (isRefusal(target)) return failed(target.code, target.message, target.taskId);
  // Later profile: a reviewer spawned on the executor's model is blocked before it starts (modelPolicy.ts).
  const separation = separationRefusal(
    ctx,
    target.run,
    target.receipt,
    event.model,
    'asked by the spawning call, or set by its agent profile',
  );
  if (separation) return failed(separation.code, separation.message, target.taskId);
  // Later profile: the reviewer-vendor policy against the model the spawning call asks for (vendorPolicy.ts).
  const vendor = vendorRefusal(
    ctx,
    target.run,
    { ...target.receipt, model: event.model ?? null, taskId: target.taskId },
    'asked by the spawning call',
  );
  if (vendor) return failed(vendor.code, vendor.message, target.taskId);
  const outcome = claimDelegationSpawn(target.receipt, event, { now: ctx.now });
  if (!outcome.ok) {
    const hint =
      outcome.code === 'DELEGATION_SPAWN_CLAIMED'
        ? ` If that spawn never started, run 'baton task ${target.taskId} abort' and prepare again.`
        : '';
    return failed(outcome.code, `${outcome.message}${hint}`, target.taskId);
  }
  if ('unchanged' in outcome) return reportRun(target.taskId, target.run, false);
  const task = resolve(ctx, target.taskId);
  if (!task.ok) return task.result;
  const updated = withUpdates(ctx, target.run, { pendingDelegation: withActivationDeadline(ctx, outcome.receipt) });
  save(ctx, task.value, updated);
  return reportRun(target.taskId, updated, true);
}

/**
 * The hook blocked the spawn of tool call `toolCallId` although its claim may have been applied
 * (docs/hooks.md "Spawn claim (PreToolUse)"): that claim holds nothing. Comes through the same
 * queue after the claim; with no such claim (never applied, or another call holds it) nothing changes.
 */
export function releaseSpawn(ctx: OrchestrationContext, client: string, event: { toolCallId: string }): OrchestrationResult {
  const [match] = pendingDelegations(ctx, (receipt) => receipt.client === client && receipt.spawnClaim?.toolCallId === event.toolCallId);
  if (!match)
    return failed(
      'ORCHESTRATION_DELEGATION_MISSING',
      `no pending delegation is claimed by tool call ${event.toolCallId}; nothing to release`,
    );
  const outcome = releaseDelegationSpawn(match.receipt, event);
  if (!outcome.ok) return failed(outcome.code, outcome.message, match.taskId);
  const task = resolve(ctx, match.taskId);
  if (!task.ok) return task.result;
  const updated = withUpdates(ctx, match.run, { pendingDelegation: outcome.receipt });
  save(ctx, task.value, updated);
  ctx.warnings.push(`released the claim of tool call ${event.toolCallId} on delegation ${match.receipt.id}: its spawn was blocked`);
  return reportRun(match.taskId, updated, true);
}
