import type { OrchestrationRun } from '../types.ts';

// A run file of the later upstream shape (agent-infra's schemaVersion 2), read under the later
// profile (rule `laterUpstreamRuns`, src/core/profile.ts). baton honours what it shares with its own
// runs (status, pause, steps, receipts) and keeps every other key in place; a field that would change
// what the run does and that baton cannot honour is refused, naming the field, before any intent acts
// on the run (reading it with `status` still works). Its per-role reasoning effort is refused where the
// policy is read (modelPolicy.ts). Under agent-infra-0.9.2 such a file is an unsupported schemaVersion.

type Check = Readonly<{ field: string; why: string; unhonoured: (run: Record<string, unknown>) => boolean }>;

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function pendingField(run: Record<string, unknown>, key: string): unknown {
  const pending = run.pendingDelegation;
  return typeof pending === 'object' && pending !== null ? (pending as Record<string, unknown>)[key] : undefined;
}

const CHECKS: readonly Check[] = [
  {
    field: 'recoveryHistory',
    why: "it records recoveries of upstream's own orchestrator (a client capability enabled after a pause), which baton has no counterpart for",
    unhonoured: (run) => Array.isArray(run.recoveryHistory) && run.recoveryHistory.length > 0,
  },
  {
    field: 'completionEvidence',
    why: "upstream's clean completion (the reviewed HEAD, its trees and pull request) is not how a baton run completes",
    unhonoured: (run) => present(run.completionEvidence),
  },
  {
    field: 'pendingDelegation.workspaceSnapshotScope',
    why: "the receipt's fingerprint covers one task; baton measures the repository, so its changes could not be measured against it",
    unhonoured: (run) =>
      present(pendingField(run, 'workspaceSnapshotScope')) && pendingField(run, 'workspaceSnapshotScope') !== 'repository',
  },
  {
    field: 'pendingDelegation.requestedReasoningEffort',
    why: 'baton cannot check a reasoning effort against what the clients report',
    unhonoured: (run) => present(pendingField(run, 'requestedReasoningEffort')),
  },
  {
    field: 'pendingDelegation.lifecycleProvenance',
    why: "it binds the receipt to upstream's Codex lifecycle adapter, whose evidence baton does not receive",
    unhonoured: (run) => present(pendingField(run, 'lifecycleProvenance')),
  },
  {
    field: 'pendingDelegation.hostEvidence',
    why: "it binds the receipt to upstream's Codex lifecycle adapter, whose evidence baton does not receive",
    unhonoured: (run) => present(pendingField(run, 'hostEvidence')),
  },
];

/** The first field of `run` that baton cannot honour, said as an error message; null when it honours them all. */
export function unhonouredUpstreamField(run: OrchestrationRun, profile: string): string | null {
  const record = run as unknown as Record<string, unknown>;
  const check = CHECKS.find((candidate) => candidate.unhonoured(record));
  if (!check) return null;
  return `orchestration.json ${check.field}: profile ${profile} reads this later upstream run but cannot honour ${check.field} (${check.why}); the file was left unchanged`;
}
