import { repositoryPendingDelegations } from '../core/orchestration.ts';
import { managedDelegationRole } from '../core/receipts.ts';

// The PreToolUse check (beyond upstream): SubagentStart cannot block in Claude Code, so the only
// moment the one-pending rule can stop an agent is before it calls the spawning tool. A lifecycle
// subagent may be spawned only when exactly one delegation of this client is prepared (not yet
// activated) in the repository and its role is the subagent's. Read-only: it looks at the run
// files and enqueues nothing.

export type SpawnVerdict = { allow: true } | { allow: false; reason: string };

export function checkSpawn(repoRoot: string, client: string, nativeAgent: string): SpawnVerdict {
  const role = managedDelegationRole(nativeAgent);
  if (!role) return { allow: true };
  const { matches } = repositoryPendingDelegations(repoRoot);
  const prepared = matches.filter((match) => match.receipt.client === client && match.receipt.status === 'prepared');
  const block = (reason: string): SpawnVerdict => ({ allow: false, reason: `baton: ${reason}` });
  if (prepared.length === 0) {
    const other = matches[0];
    const detail = other
      ? ` The pending delegation is ${other.receipt.id} of ${other.taskId} (${other.receipt.stage}, client ${other.receipt.client}, ${other.receipt.status}); finish it or run 'baton task ${other.taskId} abort'.`
      : " Run 'baton task <task> route' and 'baton task <task> prepare --client " + client + "' first.";
    return block(`no lifecycle delegation is prepared for ${nativeAgent} in ${repoRoot}, so this spawn would not be recorded.${detail}`);
  }
  if (prepared.length > 1) {
    return block(`${prepared.length} prepared delegations match ${client} in ${repoRoot} (${prepared.map((match) => match.taskId).join(', ')}); abort all but one before spawning.`);
  }
  const match = prepared[0]!;
  if (match.receipt.role !== role) {
    return block(
      `the prepared delegation ${match.receipt.id} of ${match.taskId} is ${match.receipt.stage} round ${match.receipt.round} for a ${match.receipt.role}; spawn agent-infra-lifecycle-${match.receipt.role}, not ${nativeAgent}.`,
    );
  }
  return { allow: true };
}
