import path from 'node:path';
import type { OrchestrationResult, ReceiptStatus } from '../core/types.ts';
import { batonEntryIn } from '../base/batonDir.ts';

// The job log of a run: one JSON line per queue job the worker applied to the task, so the run view
// can link each receipt transition to the job that made it (bull-board shows the job). The worker
// appends (workers/jobRecords.ts); anyone reads. Lives next to the journal in `<gitdir>/baton/runlog/`,
// not in orchestration.json, whose bytes stay agent-infra's.

export type RunLogEntry = Readonly<{
  v: 1;
  jobId: string;
  queue: string;
  intent: string;
  source: string;
  taskId: string;
  enqueuedAt: string;
  appliedAt: string;
  status: string;
  errorCode: string | null;
  /** The receipt this job left behind and its status: the pending one, else the newest of the history. */
  receipt: Readonly<{ id: string; status: ReceiptStatus }> | null;
}>;

/** The job log of a task, in a checkout's baton directory (`batonDir`). */
export function runLogFile(stateDir: string, taskId: string): string {
  return path.join(batonEntryIn(stateDir, 'runLog'), `${taskId.replace(/[^A-Za-z0-9_.-]/g, '_')}.jsonl`);
}

/** The entry for a job that changed a run, or null when the result names no task or changed nothing. */
export function runLogEntryFor(
  job: Readonly<{ jobId: string; queue: string; intent: string; source: string; enqueuedAt: string; appliedAt: string }>,
  result: OrchestrationResult,
): RunLogEntry | null {
  if (!result.taskId || (!result.changed && result.status !== 'failed')) return null;
  const run = result.run;
  const latest = run?.pendingDelegation ?? run?.receipts.at(-1) ?? null;
  return {
    v: 1,
    ...job,
    taskId: result.taskId,
    status: result.status,
    errorCode: result.error?.code ?? null,
    receipt: latest ? { id: latest.id, status: latest.status } : null,
  };
}

/** Parses a job log; lines that are not entries (a torn last line after a kill) are skipped. */
export function parseRunLog(text: string | null): RunLogEntry[] {
  if (!text) return [];
  const entries: RunLogEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const value = JSON.parse(line) as RunLogEntry;
      if (value && value.v === 1 && typeof value.jobId === 'string' && typeof value.taskId === 'string') entries.push(value);
    } catch {
      // torn line
    }
  }
  return entries;
}
