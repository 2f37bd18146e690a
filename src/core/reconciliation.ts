import type { DelegationReceipt, Reconciliation, ReconciliationKind } from './types.ts';

// The clocks of pending delegations (baton addition, docs/architecture.md "Reconciliation"): what a
// receipt waits for, since which of its timestamps, when the worker acts, and how that is said.
// Pure functions of a receipt; orchestration/reconcile.ts applies them.

export const STALLED_PAUSE_CODE = 'BATON_DELEGATION_STALLED';
export const NOT_STARTED_PAUSE_CODE = 'BATON_DELEGATION_NOT_STARTED';

export type Graces = Readonly<{
  /** After `complete-stage` (seal) or activation (pause): how long to wait for the child. */
  stopGraceMs: number;
  /** After `prepare` (or the spawn claim): how long to wait for SubagentStart. */
  spawnGraceMs: number;
}>;

/** The defaults of `--stop-grace` and `--spawn-grace` (docs/architecture.md "Reconciliation" says why). */
export const DEFAULT_GRACES: Graces = Object.freeze({ stopGraceMs: 10 * 60_000, spawnGraceMs: 5 * 60_000 });

export type PendingReconciliation = Readonly<{ kind: ReconciliationKind; since: string; graceMs: number; dueAt: number }>;

/** What the clock of `receipt` waits for, from when, and when the worker acts; null when nothing is awaited or it was done. */
export function dueReconciliation(receipt: DelegationReceipt, graces: Graces): PendingReconciliation | null {
  const clock = receiptClock(receipt);
  if (!clock) return null;
  const graceMs = clock.kind === 'not-started' ? graces.spawnGraceMs : graces.stopGraceMs;
  const started = Date.parse(clock.since);
  if (!Number.isFinite(started)) return null;
  if (receipt.reconciliations?.some((done) => done.kind === clock.kind && done.since === clock.since)) return null;
  return { kind: clock.kind, since: clock.since, graceMs, dueAt: started + graceMs };
}

export function receiptClock(receipt: DelegationReceipt): { kind: ReconciliationKind; since: string } | null {
  switch (receipt.status) {
    case 'prepared':
      // A claimed spawn restarts the wait: its SubagentStart follows the tool call.
      return { kind: 'not-started', since: receipt.spawnClaim?.claimedAt ?? receipt.createdAt };
    case 'activated':
      return receipt.activatedAt ? { kind: 'stalled', since: receipt.activatedAt } : null;
    case 'stage-completed': {
      // Receipts completed before baton recorded the time (or by agent-infra) start from activation.
      const since = receipt.stageCompletedAt ?? receipt.activatedAt;
      return since ? { kind: 'sealed', since } : null;
    }
    default:
      return null;
  }
}

export function awaited(kind: ReconciliationKind): string {
  return kind === 'not-started' ? 'SubagentStart' : kind === 'stalled' ? 'complete-stage' : 'SubagentStop';
}

/** `10 min`, `90 s`: how long a grace was, for messages. */
export function graceText(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1_000 === 0) return `${ms / 1_000} s`;
  return `${ms} ms`;
}

/** `45 s`, `3 min`, `2 h 5 min`: how long a wait has lasted, for people. */
function elapsedText(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  return minutes < 60 ? `${minutes} min` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

const ACTION: Readonly<Record<ReconciliationKind, string>> = {
  sealed: 'sealed by baton',
  stalled: 'run paused by baton',
  'not-started': 'given up by baton',
};

/**
 * The clock of a pending delegation, for the run page and `baton runs`:
 * "waiting for SubagentStop since 3 min; sealed by baton at 10 min". Null when it awaits nothing.
 */
export function delegationClock(receipt: DelegationReceipt, graces: Graces, nowMs: number): string | null {
  const clock = receiptClock(receipt);
  if (!clock) return null;
  const since = Date.parse(clock.since);
  if (!Number.isFinite(since)) return null;
  const done = receipt.reconciliations?.find((mark) => mark.kind === clock.kind && mark.since === clock.since);
  const graceMs = done?.graceMs ?? (clock.kind === 'not-started' ? graces.spawnGraceMs : graces.stopGraceMs);
  const evidence = done ? markEvidence(done) : null;
  const when = evidence
    ? `${ACTION[clock.kind]} on the client's report (${evidence}, ${done!.at})`
    : done
      ? `${ACTION[clock.kind]} at ${graceText(graceMs)} (${done.at})`
      : `${ACTION[clock.kind]} at ${graceText(graceMs)}`;
  return `waiting for ${awaited(clock.kind)} since ${elapsedText(nowMs - since)}; ${when}`;
}

/** What a reconciliation did and when: "sealed by baton: no SubagentStop within 10 min (2026-…Z)". */
export function reconciliationNote(mark: Reconciliation): string {
  const evidence = markEvidence(mark);
  if (evidence) return `${ACTION[mark.kind]}: the client reported the child gone (${evidence}) (${mark.at})`;
  return `${ACTION[mark.kind]}: no ${awaited(mark.kind)} within ${graceText(mark.graceMs)} (${mark.at})`;
}

/**
 * A mark made from the client's own report that the child is gone (orchestration/gone.ts), not from a
 * grace: `graceMs` is 0 and `evidence` names what the client said (`TaskStop`, `interrupt_agent`).
 */
export type EvidenceMark = Reconciliation & Readonly<{ evidence: string }>;

/** The evidence of a mark made from the client's report; null for a grace's mark. */
export function markEvidence(mark: Reconciliation): string | null {
  const evidence = (mark as Partial<EvidenceMark>).evidence;
  return typeof evidence === 'string' ? evidence : null;
}
