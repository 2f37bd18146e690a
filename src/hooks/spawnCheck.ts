import { repositoryPendingDelegations, spawnTarget } from '../core/orchestration/index.ts';
import { managedDelegationRole } from '../core/receipts.ts';

// The read-only PreToolUse check, used only when the worker cannot be asked (Redis down or not
// configured): SubagentStart cannot block in Claude Code, so the only moment the one-pending rule
// can stop an agent is before it calls the spawning tool. A lifecycle subagent may be spawned only
// when exactly one delegation of this client is prepared in the repository and its role is the
// subagent's. It reads the run files and records nothing, so unlike the worker's claim it cannot
// tell two concurrent spawns apart (docs/hooks.md "Spawn claim (PreToolUse)"). Loaded lazily by
// spawnClaim.ts: it needs the engine's scan, which the hook's fast path does not load.

export type SpawnVerdict = { allow: true } | { allow: false; reason: string };

/**
 * `toolCallId` is the call being checked: its own spooled claim may already have been drained and
 * applied by a worker that reaches Redis (the claim is idempotent for the same call), so a claim by
 * that very call does not block it.
 */
export function checkSpawn(repoRoot: string, client: string, nativeAgent: string, toolCallId?: string): SpawnVerdict {
  if (!managedDelegationRole(nativeAgent)) return { allow: true };
  const target = spawnTarget(repositoryPendingDelegations(repoRoot).matches, repoRoot, client, nativeAgent);
  if ('code' in target) return { allow: false, reason: `baton: ${target.code}: ${target.message}` };
  if (target.receipt.spawnClaim && target.receipt.spawnClaim.toolCallId !== toolCallId) {
    return {
      allow: false,
      reason: `baton: DELEGATION_SPAWN_CLAIMED: delegation ${target.receipt.id} was already claimed by tool call ${target.receipt.spawnClaim.toolCallId}; one prepared delegation starts one subagent`,
    };
  }
  return { allow: true };
}
