import path from 'node:path';
import { parseReviewSummary } from '../core/reviewSummary.ts';
import { nextCommands, outdatedPause } from '../core/nextSteps.ts';
import type { NextCommands } from '../core/nextSteps.ts';
import type { RunLogEntry } from './runLog.ts';
import type { DelegationReceipt, DelegationStage, OrchestrationRun, ReceiptStatus, ReconciliationKind } from '../core/types.ts';
import { reconciliationNote } from '../core/reconciliation.ts';
import { DELEGATION_STAGES } from '../core/types.ts';
import { receiptVendor } from '../core/vendors.ts';

// What the run page shows, computed from a run, its job log and its review artifacts: the seven
// stages as a pipeline with their rounds, the receipt timeline with the jobs that made each step,
// what to type to go on, and the commit authorization. Pure: the caller reads the files.

export type StageRound = Readonly<{
  receiptId: string;
  round: number;
  role: string;
  status: ReceiptStatus;
  client: string;
  agent: string | null;
  requestedModel: string | null;
  actualModel: string | null;
  /** The vendor it ran in (the receipt's `vendor`, else from its client and reported model; src/core/vendors.ts). */
  vendor: string | null;
  childId: string | null;
  preparedAt: string;
  /** Agent time: activation → seal (or → now/consumption when the seal is missing). */
  durationMs: number | null;
  changedPaths: readonly string[];
  artifact: string;
  /** The review's overall verdict (review stages), when its artifact has a summary. */
  verdict: string | null;
}>;

export type StageState = 'done' | 'current' | 'next' | 'upcoming';

export type StageView = Readonly<{ stage: DelegationStage; state: StageState; rounds: readonly StageRound[] }>;

export type TimelineStep = Readonly<{
  receiptId: string;
  stage: DelegationStage;
  round: number;
  role: string;
  status: ReceiptStatus;
  at: string | null;
  fingerprint: string | null;
  childId: string | null;
  parentId: string | null;
  job: Readonly<{ id: string; queue: string; intent: string }> | null;
  /** The worker made this step itself (docs/architecture.md "Reconciliation"): what it did and why. */
  reconciled: string | null;
}>;

export type RunView = Readonly<{
  stages: readonly StageView[];
  timeline: readonly TimelineStep[];
  commands: NextCommands;
  /** How things are now, when the pause message describes a receipt that has moved on since (outdatedPause). */
  pauseOutdated: string | null;
  commit: Readonly<{ state: 'not issued' | 'issued' | 'consumed'; issuedAt: string | null; consumedAt: string | null }>;
}>;

export type RunViewInput = Readonly<{
  run: OrchestrationRun;
  taskDir: string;
  /** Where the run is between delegations (routing), when known. */
  position?: Readonly<{ stage: string | null; round: number | null }>;
  log: readonly RunLogEntry[];
  /** How a person names the task on the command line (short id when there is one). */
  taskRef: string;
  readText(file: string): string | null;
  now?: () => number;
}>;

const TIMELINE_ORDER: readonly ReceiptStatus[] = ['prepared', 'activated', 'stage-completed', 'sealed', 'consumed'];

function millis(at: string | null): number | null {
  if (!at) return null;
  const value = Date.parse(at);
  return Number.isNaN(value) ? null : value;
}

function verdictOf(receipt: DelegationReceipt, input: RunViewInput): string | null {
  return reviewVerdict(receipt, input.taskDir, input.readText);
}

/** A review round's overall verdict, from its artifact's summary (null: not a finished review, or no summary). */
export function reviewVerdict(receipt: DelegationReceipt, taskDir: string, readText: (file: string) => string | null): string | null {
  if (receipt.role !== 'reviewer' || !['stage-completed', 'sealed', 'consumed'].includes(receipt.status)) return null;
  try {
    const text = readText(path.join(taskDir, receipt.artifact));
    if (text === null) return null;
    const parsed = parseReviewSummary(text);
    return parsed.ok ? parsed.summary.verdict : null;
  } catch {
    return null;
  }
}

function roundOf(receipt: DelegationReceipt, input: RunViewInput): StageRound {
  const start = millis(receipt.activatedAt);
  const end =
    millis(receipt.sealedAt) ?? (receipt.status === 'activated' || receipt.status === 'stage-completed' ? (input.now ?? Date.now)() : null);
  return {
    receiptId: receipt.id,
    round: receipt.round,
    role: receipt.role,
    status: receipt.status,
    client: receipt.client,
    agent: receipt.agent,
    requestedModel: receipt.requestedModel,
    actualModel: receipt.actualModel,
    vendor: receiptVendor(receipt),
    childId: receipt.childId,
    preparedAt: receipt.createdAt,
    durationMs: start !== null && end !== null ? Math.max(0, end - start) : null,
    changedPaths: receipt.changedPaths,
    artifact: receipt.artifact,
    verdict: verdictOf(receipt, input),
  };
}

export function describeRun(input: RunViewInput): RunView {
  const { run } = input;
  const all = [...run.receipts, ...(run.pendingDelegation ? [run.pendingDelegation] : [])];
  const stages: StageView[] = DELEGATION_STAGES.map((stage) => {
    const rounds = all.filter((receipt) => receipt.stage === stage).map((receipt) => roundOf(receipt, input));
    let state: StageState = 'upcoming';
    if (run.pendingDelegation?.stage === stage) state = 'current';
    else if (run.status !== 'completed' && !run.pendingDelegation && input.position?.stage === stage) state = 'next';
    else if (rounds.some((round) => round.status === 'consumed')) state = 'done';
    return { stage, state, rounds };
  });

  // The first job that left each receipt in each status made that step.
  const jobFor = new Map<string, RunLogEntry>();
  for (const entry of input.log) {
    if (!entry.receipt) continue;
    const key = `${entry.receipt.id} ${entry.receipt.status}`;
    if (!jobFor.has(key)) jobFor.set(key, entry);
  }
  const timeline: TimelineStep[] = [];
  for (const receipt of all) {
    const reached = receipt.status === 'aborted' || receipt.status === 'expired' ? receipt.status : null;
    const lastIndex = reached ? TIMELINE_ORDER.length - 1 : TIMELINE_ORDER.indexOf(receipt.status);
    const statuses: ReceiptStatus[] = [];
    for (const [index, status] of TIMELINE_ORDER.entries()) {
      if (index > lastIndex) break;
      if (reached && !stepHappened(receipt, status)) continue;
      statuses.push(status);
    }
    if (reached) statuses.push(reached);
    for (const status of statuses) {
      const job = jobFor.get(`${receipt.id} ${status}`) ?? null;
      timeline.push({
        receiptId: receipt.id,
        stage: receipt.stage,
        round: receipt.round,
        role: receipt.role,
        status,
        at: timeOf(receipt, status) ?? job?.appliedAt ?? null,
        fingerprint: status === 'prepared' ? receipt.beforeFingerprint : status === 'sealed' ? receipt.afterFingerprint : null,
        childId: status === 'activated' ? receipt.childId : null,
        parentId: status === 'activated' ? receipt.parentId : null,
        job: job ? { id: job.jobId, queue: job.queue, intent: job.intent } : null,
        reconciled: reconciledStep(receipt, status),
      });
    }
  }

  const { issuedAt, consumedAt } = run.commitAuthorization;
  return {
    stages,
    timeline,
    commands: nextCommands(run, input.taskRef),
    pauseOutdated: outdatedPause(run),
    commit: { state: consumedAt ? 'consumed' : issuedAt ? 'issued' : 'not issued', issuedAt, consumedAt },
  };
}

/** Which steps an aborted receipt went through before it was aborted (its fields say so). */
function stepHappened(receipt: DelegationReceipt, status: ReceiptStatus): boolean {
  switch (status) {
    case 'prepared':
      return true;
    case 'activated':
      return receipt.activatedAt !== null;
    case 'stage-completed':
      return receipt.agent !== null;
    case 'sealed':
      return receipt.sealedAt !== null;
    default:
      return false;
  }
}

function timeOf(receipt: DelegationReceipt, status: ReceiptStatus): string | null {
  switch (status) {
    case 'prepared':
      return receipt.createdAt;
    case 'activated':
      return receipt.activatedAt;
    case 'sealed':
      return receipt.sealedAt;
    case 'consumed':
      return receipt.consumedAt;
    default:
      return null;
  }
}

/** The step a reconciliation made: the seal, the give-up (aborted), or the stalled pause (on activation). */
const RECONCILED_STEP: Readonly<Record<ReconciliationKind, ReceiptStatus>> = {
  sealed: 'sealed',
  'not-started': 'aborted',
  stalled: 'activated',
};

function reconciledStep(receipt: DelegationReceipt, status: ReceiptStatus): string | null {
  const mark = receipt.reconciliations?.find((done) => RECONCILED_STEP[done.kind] === status);
  return mark ? reconciliationNote(mark) : null;
}
