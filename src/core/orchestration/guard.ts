import type { DelegationReceipt } from '../types.ts';
import { pendingDelegations } from './scan.ts';
import type { PendingMatch } from './scan.ts';
import type { OrchestrationContext } from './steps.ts';

// The repository guard (one pending delegation per repository) and who holds it. Under 0.9.2 any
// run's pending delegation does, whatever the run's status, so a paused run with a pending
// delegation blocks every other task until someone aborts it. Under the later profile
// (`pausedRunReleasesGuard`, agent-infra #828) only a `running` run's does.

/** Whether a run of this status holds the guard with its pending delegation. */
export function holdsGuard(ctx: Pick<OrchestrationContext, 'rules'>, status: string): boolean {
  return !ctx.rules.pausedRunReleasesGuard || status === 'running';
}

/** The pending delegations that hold the repository guard and that `predicate` accepts. */
export function guardHolders(ctx: OrchestrationContext, predicate: (receipt: DelegationReceipt) => boolean): PendingMatch[] {
  return pendingDelegations(ctx, predicate).filter((match) => holdsGuard(ctx, match.run.status));
}
