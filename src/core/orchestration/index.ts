// The orchestration functions of docs/lifecycle.md §7.3, applied to one repository. They read run files
// through a RunTransaction and stage their writes there; the caller decides how writes reach disk.
// Behaviour, codes and messages are agent-infra 0.9.2's, except docs/architecture.md's decisions:
// corrupt run files are reported (2), updatedAt uses the injected clock (3), a result reports the
// run's real status (4), running/completed runs carry no pause (5), and `abort` exists (6).
// One module per concern, as the lifecycle's events come: steps.ts (what every function is made of),
// run.ts, scan.ts, spawn.ts, prepare.ts, activate.ts, complete.ts, seal.ts, laterTurns.ts, advance.ts, reconcile.ts, gone.ts.

export { DEFAULT_MAX_STEPS } from './steps.ts';
export type { OrchestrationContext } from './steps.ts';
export { beginOrResume, route, status } from './run.ts';
export { nativeEventTarget, repositoryPendingDelegations } from './scan.ts';
export type { PendingMatch } from './scan.ts';
export { claimSpawn, releaseSpawn, spawnTarget } from './spawn.ts';
export type { SpawnRefusal } from './spawn.ts';
export { TURN_AFTER_CONSUMED_CODE } from './laterTurns.ts';
export { prepare } from './prepare.ts';
export { activate, activateMatching } from './activate.ts';
export { completeCommitStage, completeStage, validateStage } from './complete.ts';
export { sealExplicit, sealMatching } from './seal.ts';
export { reconcile } from './reconcile.ts';
export { childGone } from './gone.ts';
export { DEFAULT_GRACES, delegationClock, dueReconciliation, reconciliationNote } from '../reconciliation.ts';
export type { Graces, PendingReconciliation } from '../reconciliation.ts';
export { ABORT_PAUSE_CODE, abort, advance, pause, prematureAdvanceAdvice } from './advance.ts';
export { recoverPrepared } from './recoverPrepared.ts';
export { recoverStarted } from './recoverStarted.ts';
