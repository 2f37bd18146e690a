import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import { afterEach, beforeEach } from 'vitest';
import { applyEventNow } from '../../src/core/engine.ts';
import { runFilePath } from '../../src/core/taskLayout.ts';
import { activeTaskDir, taskFilePath } from '../../src/core/taskLayout.ts';
import type { LifecycleEvent } from '../../src/core/events.ts';
import type { OrchestrationResult, OrchestrationRun, WorkspaceFingerprinter } from '../../src/core/types.ts';
import type { ProfileName } from '../../src/core/profile.ts';

// Task-directory fixtures in the formats of docs/lifecycle.md (conventions of docs/scenarios.md).

export const TASK_ID = 'TASK-20260101-000001';
export const TASK_ID_2 = 'TASK-20260101-000002';

export type Fixture = { root: string; taskDir(taskId?: string): string; cleanup(): void };

/**
 * A fresh directory with no `.git` in it or above it, for "outside any repository" checks. Not in
 * /tmp: Codex's workspace-write sandbox protects `.git` in each writable root, /tmp included, by
 * mounting over `/tmp/.git`, so while a real Codex runs (the agent tests, in parallel) every
 * directory below /tmp seems to be inside a repository. /var/tmp is no writable root of Codex's.
 */
export function dirOutsideAnyRepository(label = 'outside'): string {
  for (const base of ['/var/tmp', os.tmpdir()]) {
    let dir: string;
    try {
      dir = fs.realpathSync(fs.mkdtempSync(path.join(base, `baton-${label}-`)));
    } catch {
      continue;
    }
    let above = dir;
    while (!fs.existsSync(path.join(above, '.git')) && path.dirname(above) !== above) above = path.dirname(above);
    if (!fs.existsSync(path.join(above, '.git'))) return dir;
    fs.rmSync(dir, { recursive: true, force: true });
  }
  throw new Error('no directory outside every git repository is available (is there a .git in /var/tmp, /tmp or /?)');
}

export function tempRepo(options: { gitDir?: boolean } = {}): Fixture {
  const root =
    options.gitDir === false ? dirOutsideAnyRepository('no-repo') : fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-repo-')));
  if (options.gitDir !== false) fs.mkdirSync(path.join(root, '.git'));
  return {
    root,
    taskDir: (taskId = TASK_ID) => activeTaskDir(root, taskId),
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

/**
 * A repository with one task (`TASK_ID`) for each test of the file, removed after it: `use` gets
 * each new one (its fixture and the task's directory).
 */
export function useTaskPerTest(use: (made: Readonly<{ fixture: Fixture; dir: string }>) => void): void {
  let current: Fixture | null = null;
  beforeEach(() => {
    current = tempRepo();
    use({ fixture: current, dir: writeTask(current) });
  });
  afterEach(() => current?.cleanup());
}

export function taskMd(taskId: string = TASK_ID, step = 'requirement-analysis', body = '# Task\n'): string {
  return `---\nid: ${taskId}\ncurrent_step: ${step}\n---\n\n${body}`;
}

export function writeTask(fixture: Fixture, taskId: string = TASK_ID, content: string = taskMd(taskId)): string {
  const dir = fixture.taskDir(taskId);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(taskFilePath(dir), content);
  return dir;
}

/** Writes an artifact and gives it an mtime `ageSeconds` in the past (the review mtime rule, §3.3). */
export function writeArtifact(dir: string, name: string, content: string, ageSeconds = 0): void {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  const when = new Date(Date.now() - ageSeconds * 1000);
  fs.utimesSync(file, when, when);
}

/** An approved review (Chinese form, as in the upstream tests) naming its input. */
export function approvedReview(input: string, manualValidation: number | null = 0): string {
  const mv = manualValidation === null ? '' : ` / **人工校验**：${manualValidation}`;
  return `# 审查\n\n- **审查输入**：\`${input}\`\n\n## 审查摘要\n\n- **总体结论**：通过\n- **发现（AI 可处理）**：0 阻塞项，0 主要，0 次要${mv}\n`;
}

export function reviewWithVerdict(
  input: string,
  verdict: string,
  findings = '0 blockers, 1 majors, 0 minors / **Manual validation**: 0',
): string {
  return `# Review\n\n- **Review Input**: \`${input}\`\n\n## Review Summary\n\n- **Overall Verdict**: ${verdict}\n- **Findings (AI-actionable)**: ${findings}\n`;
}

/** Artifacts of a task whose analysis, plan and code are all approved (next: commit). */
export function writeApprovedThroughCode(dir: string, manualValidation: number | null = 0): void {
  writeArtifact(dir, 'analysis.md', '# Analysis\n', 60);
  writeArtifact(dir, 'review-analysis.md', approvedReview('analysis.md'), 50);
  writeArtifact(dir, 'plan.md', '# Plan\n', 40);
  writeArtifact(dir, 'review-plan.md', approvedReview('plan.md'), 30);
  writeArtifact(dir, 'code.md', '# Code\n', 20);
  writeArtifact(dir, 'review-code.md', approvedReview('code.md', manualValidation), 10);
}

/** The result of a command that failed before it found a run (upstream's shape): nothing changed. */
export function failedResult(code: string, message: string, taskId: string = TASK_ID): OrchestrationResult {
  return { status: 'failed', changed: false, taskId, run: null, next: null, error: { code, message } } as OrchestrationResult;
}

export function readRun(dir: string): OrchestrationRun {
  return JSON.parse(fs.readFileSync(runFilePath(dir), 'utf8')) as OrchestrationRun;
}

export function fakeFingerprinter(
  options: { capture?: () => string; diff?: () => string[] } = {},
): WorkspaceFingerprinter & { captures: number } {
  const fingerprinter = {
    captures: 0,
    async capture() {
      fingerprinter.captures += 1;
      return (options.capture ?? (() => 'before-tree'))();
    },
    async diff() {
      return (options.diff ?? (() => []))();
    },
  };
  return fingerprinter;
}

/**
 * A workspace the test edits by hand, fingerprinted as git would see it: a capture is an id of its
 * content (the same content, the same id), and diff lists the paths whose content differs between
 * two captures, in path order. Run files and artifacts the engine writes to the fixture are not in it.
 */
export function memoryWorkspace(initial: Record<string, string> = {}) {
  const files = new Map(Object.entries(initial));
  const trees = new Map<string, ReadonlyMap<string, string>>();
  const fingerprinter: WorkspaceFingerprinter & { captures: number } = {
    captures: 0,
    async capture() {
      fingerprinter.captures += 1;
      const entries = [...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const id = `tree-${createHash('sha1').update(JSON.stringify(entries)).digest('hex').slice(0, 12)}`;
      trees.set(id, new Map(entries));
      return id;
    },
    async diff(_root, before, after) {
      const [a, b] = [trees.get(before), trees.get(after)];
      if (!a || !b) throw new Error(`unknown fingerprint ${a ? after : before}`);
      return [...new Set([...a.keys(), ...b.keys()])].filter((name) => a.get(name) !== b.get(name)).sort();
    },
  };
  return {
    fingerprinter,
    write: (name: string, content: string) => void files.set(name, content),
    remove: (name: string) => void files.delete(name),
  };
}

export type EngineHarness = {
  apply(event: LifecycleEvent): Promise<OrchestrationResult>;
  fingerprinter: WorkspaceFingerprinter & { captures: number };
  ids: string[];
};

/** Applies events in process with a fixed clock and a queue of ids (then `id-N`). */
export function engineHarness(
  fixture: Fixture,
  options: {
    now?: string;
    ids?: string[];
    fingerprinter?: WorkspaceFingerprinter & { captures: number };
    /** The lifecycle profile (default: the one the fixture repository records, else agent-infra-0.9.2). */
    profile?: ProfileName;
  } = {},
): EngineHarness {
  const ids = [...(options.ids ?? [])];
  let counter = 0;
  const fingerprinter = options.fingerprinter ?? fakeFingerprinter();
  return {
    ids,
    fingerprinter,
    apply: (event) =>
      applyEventNow(event, {
        repoRoot: fixture.root,
        fingerprinter,
        now: () => options.now ?? '2026-01-01T00:00:00.000Z',
        newId: () => ids.shift() ?? `id-${(counter += 1)}`,
        ...(options.profile ? { profile: options.profile } : {}),
      }),
  };
}

export function uniquePrefix(label = 't'): string {
  return `bt-${label}-${randomUUID().slice(0, 8)}`;
}

type NativeClient = 'claude-code' | 'codex' | 'copilot-cli';

/** A native SubagentStart of a fresh lifecycle child of `role` (parent-1), with `extra` fields (actualModel, fallbackReason, parentId). */
export function startEvent(
  client: NativeClient,
  role: 'executor' | 'reviewer',
  childId: string,
  extra: Readonly<{ actualModel?: string; fallbackReason?: string; parentId?: string }> = {},
): LifecycleEvent {
  return {
    intent: 'hook-start',
    taskRef: 'auto',
    client,
    nativeAgent: `agent-infra-lifecycle-${role}`,
    childId,
    parentId: 'parent-1',
    spawnMode: 'fresh',
    ...extra,
  };
}

/** The PreToolUse spawn claim of a lifecycle child of `role` by tool call toolu_1. */
export function claimEvent(client: NativeClient, role: 'executor' | 'reviewer', model?: string): LifecycleEvent {
  return {
    intent: 'claim-spawn',
    taskRef: 'auto',
    client,
    nativeAgent: `agent-infra-lifecycle-${role}`,
    toolCallId: 'toolu_1',
    ...(model ? { model } : {}),
  };
}
