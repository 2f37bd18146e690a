import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { approvedReview, nativePayload, stageWork } from '../../src/demo/driver.ts';
import { readRun } from './fixtures.ts';
import { jsonOf, runBaton } from './processes.ts';

// One lifecycle step at a time through the real CLI and real hook processes, for tests that look
// at a run between steps (the run view). A hook's effect is awaited on the run file, whatever the
// hook prints.

export { approvedReview };

export type StepContext = { root: string; taskDir: string; env: NodeJS.ProcessEnv; counts: Map<string, number> };

export function stepContext(root: string, taskDir: string, env: NodeJS.ProcessEnv): StepContext {
  return { root, taskDir, env, counts: new Map() };
}

function count(ctx: StepContext, intent: string): void {
  ctx.counts.set(intent, (ctx.counts.get(intent) ?? 0) + 1);
}

export async function task(ctx: StepContext, args: readonly string[]): Promise<Record<string, any>> {
  const run = await runBaton(['task', '01', ...args], { env: ctx.env, cwd: ctx.root });
  const result = jsonOf(run);
  if (!['route', 'status'].includes(args[0]!)) count(ctx, args[0]!);
  return result;
}

async function hook(
  ctx: StepContext,
  phase: 'SubagentStart' | 'SubagentStop',
  role: string,
  childId: string,
  expected: string,
): Promise<void> {
  const run = await runBaton(['hook', 'claude-code'], {
    env: ctx.env,
    cwd: ctx.root,
    input: nativePayload('claude-code', phase, role, childId, ctx.root),
  });
  expect(run.code, run.stderr).toBe(0);
  count(ctx, phase === 'SubagentStart' ? 'hook-start' : 'hook-stop');
  await until(() => readRun(ctx.taskDir).pendingDelegation?.status === expected, `${phase} of ${childId} → ${expected}`);
}

/** Polls (beforeAll-safe, unlike expect.poll) until `check` holds. */
export async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** prepare + SubagentStart: the delegation of the next stage is activated. */
export async function startStage(
  ctx: StepContext,
  childId: string,
): Promise<{ stage: string; round: number; role: string; artifact: string }> {
  const routed = await task(ctx, ['route']);
  expect(routed.status, JSON.stringify(routed)).toBe('running');
  const next = routed.next as { stage: string; round: number; role: string; artifact: string };
  expect((await task(ctx, ['prepare', '--client', 'claude-code'])).status).toBe('running');
  await hook(ctx, 'SubagentStart', next.role, childId, 'activated');
  return next;
}

/** The arguments of the `baton task` complete-stage a subagent of `next` runs (agent `claude`). */
export function completeStageArgs(next: Readonly<{ stage: string; round: number; artifact: string }>): string[] {
  return ['complete-stage', '--stage', next.stage, '--round', String(next.round), '--artifact', next.artifact, '--agent', 'claude'];
}

/** The subagent's work, complete-stage (or stage-completed for commit). */
export async function completeStage(ctx: StepContext, next: { stage: string; round: number; artifact: string }): Promise<void> {
  stageWork(ctx.taskDir, ctx.root, next.stage, next.artifact);
  const completed =
    next.stage === 'commit' ? await task(ctx, ['stage-completed', '--agent', 'claude']) : await task(ctx, completeStageArgs(next));
  expect(completed.status, JSON.stringify(completed)).toBe('running');
}

/** SubagentStop + advance. */
export async function finishStage(ctx: StepContext, next: { role: string }, childId: string): Promise<string> {
  await hook(ctx, 'SubagentStop', next.role, childId, 'sealed');
  return String((await task(ctx, ['advance'])).status);
}

export async function wholeStage(ctx: StepContext, childId: string): Promise<string> {
  const next = await startStage(ctx, childId);
  await completeStage(ctx, next);
  return finishStage(ctx, next, childId);
}

export function titledTask(taskDir: string, taskId: string, title: string): void {
  fs.writeFileSync(
    path.join(taskDir, 'task.md'),
    `---\nid: ${taskId}\ntitle: ${title}\ncurrent_step: requirement-analysis\n---\n\n# Task\n`,
  );
}
