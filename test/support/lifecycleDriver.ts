import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { approvedReview } from './fixtures.ts';
import { jsonOf, runBaton } from './processes.ts';
import type { CliRun } from './processes.ts';

// Drives a task through the whole lifecycle the way an orchestrator and its subagents do:
// route → prepare → (native SubagentStart hook) → stage work → complete-stage → (SubagentStop hook)
// → advance, until the commit delegation completes the run. Everything goes through the real CLI.

export type DriverOptions = {
  root: string;
  taskRef: string;
  env: NodeJS.ProcessEnv;
  /** Extra args for every `baton task` call (e.g. --worker inline). */
  taskArgs?: readonly string[];
  client?: 'claude-code' | 'codex';
  /** Runs `baton` with another runtime (Bun, Deno) when given. */
  run?: (args: readonly string[], options: { env: NodeJS.ProcessEnv; input?: string; cwd?: string }) => Promise<CliRun>;
  onStep?: (line: string) => void;
};

export function nativePayload(
  client: 'claude-code' | 'codex',
  phase: 'SubagentStart' | 'SubagentStop',
  role: string,
  childId: string,
  cwd: string,
): string {
  const base = {
    session_id: 'parent-session',
    transcript_path: null,
    cwd,
    hook_event_name: phase,
    agent_id: childId,
    agent_type: `agent-infra-lifecycle-${role}`,
    ...(client === 'codex' ? { turn_id: 'turn-1', permission_mode: 'default', model: 'gpt-5-codex' } : {}),
  };
  return JSON.stringify(phase === 'SubagentStop' ? { ...base, stop_hook_active: false, last_assistant_message: 'done' } : base);
}

function stageWork(taskDir: string, root: string, stage: string, artifact: string): void {
  const inputOf: Record<string, string> = { 'review-analysis': 'analysis', 'review-plan': 'plan', 'review-code': 'code' };
  const input = inputOf[stage];
  if (input) {
    fs.writeFileSync(path.join(taskDir, artifact), approvedReview(`${input}.md`, 0));
  } else if (stage === 'commit') {
    fs.writeFileSync(path.join(root, 'CHANGELOG.md'), '- retry budget\n');
  } else {
    fs.writeFileSync(path.join(taskDir, artifact), `# ${stage}\n\nDone.\n`);
    if (stage === 'code') fs.writeFileSync(path.join(root, 'src', 'retry.ts'), 'export const retries = 3;\n');
  }
}

export async function driveLifecycle(options: DriverOptions): Promise<{ steps: string[]; final: Record<string, any> }> {
  const client = options.client ?? 'claude-code';
  const run = options.run ?? ((args, opts) => runBaton(args, opts));
  const extra = options.taskArgs ?? [];
  const task = async (...args: string[]) => {
    const result = await run(['task', options.taskRef, ...args, ...extra], { env: options.env, cwd: options.root });
    return { run: result, json: jsonOf(result) };
  };
  const hook = async (payload: string) => {
    const result = await run(['hook', client], { env: options.env, input: payload, cwd: options.root });
    expect(result.code, result.stderr).toBe(0);
    return result;
  };
  const steps: string[] = [];
  const begun = await task('begin-or-resume');
  expect(begun.json.status, begun.run.stderr).toBe('running');
  for (let step = 1; step <= 10; step += 1) {
    const routed = await task('route');
    expect(routed.json.status, JSON.stringify(routed.json)).toBe('running');
    const next = routed.json.next as { role: string; stage: string; round: number; artifact: string };
    const prepared = await task('prepare', '--client', client);
    expect(prepared.json.status, JSON.stringify(prepared.json)).toBe('running');
    const taskDir = path.join(options.root, '.agents', 'workspace', 'active', prepared.json.taskId as string);
    const childId = `child-${step}`;
    const started = await hook(nativePayload(client, 'SubagentStart', next.role, childId, options.root));
    expect(JSON.parse(started.stdout).status).toBe('running');
    stageWork(taskDir, options.root, next.stage, next.artifact);
    const completed =
      next.stage === 'commit'
        ? await task('stage-completed', '--agent', client === 'claude-code' ? 'claude' : 'codex')
        : await task('complete-stage', '--stage', next.stage, '--round', String(next.round), '--artifact', next.artifact, '--agent', client === 'claude-code' ? 'claude' : 'codex');
    expect(completed.json.status, JSON.stringify(completed.json)).toBe('running');
    const stopped = await hook(nativePayload(client, 'SubagentStop', next.role, childId, options.root));
    const sealed = JSON.parse(stopped.stdout);
    expect(sealed.status, stopped.stdout).toBe('running');
    const advanced = await task('advance');
    steps.push(`${next.stage} r${next.round} → ${advanced.json.status}`);
    options.onStep?.(steps.at(-1)!);
    if (advanced.json.status === 'completed') return { steps, final: advanced.json };
    expect(advanced.json.status, JSON.stringify(advanced.json)).toBe('running');
  }
  throw new Error(`lifecycle did not complete: ${steps.join(', ')}`);
}
