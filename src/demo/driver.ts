import fs from 'node:fs';
import path from 'node:path';
import { CLIENT_IDS, clientAdapter } from '../clients/registry.ts';
import type { ClientId } from '../clients/registry.ts';
import { activeTaskDir } from '../core/taskLayout.ts';

// Drives one task through the whole lifecycle the way an orchestrator and its fresh subagents do:
// route → prepare → (native SubagentStart hook) → stage work → complete-stage → (SubagentStop hook)
// → advance, until the commit delegation completes the run. How intents and hooks are delivered is
// the caller's (`DriverIO`): `baton demo` sends intents through the queue in process and spawns
// real `baton hook` processes; the tests spawn `baton task` too.

export type JsonResult = Record<string, any>;

export type DriverIO = Readonly<{
  /** Applies `baton task <ref> <args…>` and returns its one-line JSON result. */
  task(args: readonly string[]): Promise<JsonResult>;
  /** Runs the native hook command with `payload` on stdin. */
  hook(payload: string): Promise<{ code: number | null; stdout: string; stderr: string }>;
}>;

export type StageReport = Readonly<{
  index: number;
  stage: string;
  round: number;
  role: string;
  artifact: string;
  status: string;
  ms: number;
  /** What happened, in order, for one line of progress. */
  actions: readonly string[];
}>;

export type DriveOptions = Readonly<{
  root: string;
  taskRef: string;
  io: DriverIO;
  client?: ClientId;
  onStage?: (report: StageReport) => void;
  maxStages?: number;
}>;

export class LifecycleDriveError extends Error {}

/** The native SubagentStart/SubagentStop payload a client sends (docs/lifecycle.md §10.2). */
export function nativePayload(
  client: ClientId,
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
    ...clientAdapter(client)?.demo.payloadFields,
  };
  return JSON.stringify(phase === 'SubagentStop' ? { ...base, stop_hook_active: false, last_assistant_message: 'done' } : base);
}

/** An approved review naming its input (the Chinese summary form of the upstream tests). */
export function approvedReview(input: string, manualValidation = 0): string {
  return `# 审查\n\n- **审查输入**：\`${input}\`\n\n## 审查摘要\n\n- **总体结论**：通过\n- **发现（AI 可处理）**：0 阻塞项，0 主要，0 次要 / **人工校验**：${manualValidation}\n`;
}

/** What a fake subagent does for a stage: write the artifact (and, for code and commit, touch the repository). */
export function stageWork(taskDir: string, root: string, stage: string, artifact: string): string[] {
  const inputOf: Record<string, string> = { 'review-analysis': 'analysis', 'review-plan': 'plan', 'review-code': 'code' };
  const input = inputOf[stage];
  if (input) {
    fs.writeFileSync(path.join(taskDir, artifact), approvedReview(`${input}.md`, 0));
    return [artifact];
  }
  if (stage === 'commit') {
    fs.writeFileSync(path.join(root, 'CHANGELOG.md'), '- retry budget\n');
    return ['CHANGELOG.md'];
  }
  fs.writeFileSync(path.join(taskDir, artifact), `# ${stage}\n\nDone.\n`);
  if (stage === 'code') {
    fs.mkdirSync(path.join(root, 'src'), { recursive: true });
    fs.writeFileSync(path.join(root, 'src', 'retry.ts'), 'export const retries = 3;\n');
    return [artifact, 'src/retry.ts'];
  }
  return [artifact];
}

function expectStatus(what: string, result: JsonResult, expected: string): void {
  if (result?.status !== expected) throw new LifecycleDriveError(`${what}: expected status '${expected}', got ${JSON.stringify(result)}`);
}

export async function driveLifecycle(options: DriveOptions): Promise<{ steps: string[]; final: JsonResult; stages: StageReport[] }> {
  const client = options.client ?? CLIENT_IDS[0]!;
  const agent = clientAdapter(client)!.stageAgents[0];
  const { io } = options;
  // A native hook only enqueues (docs/hooks.md): it exits 0 with an empty stdout, the output both
  // clients accept. Whether its event applied shows in the next intent, which the same serialized
  // queue applies after it (complete-stage needs the activation, advance needs the seal).
  const hook = async (payload: string, what: string): Promise<void> => {
    const run = await io.hook(payload);
    if (run.code !== 0) throw new LifecycleDriveError(`${what} hook exited ${run.code}: ${run.stderr.trim()}`);
    if (run.stdout !== '')
      throw new LifecycleDriveError(`${what} hook wrote to stdout, which the clients parse as hook output: ${JSON.stringify(run.stdout)}`);
  };
  expectStatus('begin-or-resume', await io.task(['begin-or-resume']), 'running');
  const steps: string[] = [];
  const stages: StageReport[] = [];
  for (let index = 1; index <= (options.maxStages ?? 10); index += 1) {
    const started = performance.now();
    const routed = await io.task(['route']);
    expectStatus('route', routed, 'running');
    const next = routed.next as { role: string; stage: string; round: number; artifact: string };
    const prepared = await io.task(['prepare', '--client', client]);
    expectStatus('prepare', prepared, 'running');
    const taskDir = activeTaskDir(options.root, prepared.taskId as string);
    const childId = `child-${index}`;
    await hook(nativePayload(client, 'SubagentStart', next.role, childId, options.root), 'SubagentStart');
    const written = stageWork(taskDir, options.root, next.stage, next.artifact);
    const completed =
      next.stage === 'commit'
        ? await io.task(['stage-completed', '--agent', agent])
        : await io.task([
            'complete-stage',
            '--stage',
            next.stage,
            '--round',
            String(next.round),
            '--artifact',
            next.artifact,
            '--agent',
            agent,
          ]);
    expectStatus(next.stage === 'commit' ? 'stage-completed' : 'complete-stage', completed, 'running');
    await hook(nativePayload(client, 'SubagentStop', next.role, childId, options.root), 'SubagentStop');
    const advanced = await io.task(['advance']);
    if (advanced.status !== 'completed') expectStatus('advance', advanced, 'running');
    const status = String(advanced.status);
    steps.push(`${next.stage} r${next.round} → ${status}`);
    const report: StageReport = {
      index,
      stage: next.stage,
      round: next.round,
      role: next.role,
      artifact: next.artifact,
      status,
      ms: performance.now() - started,
      actions: [
        'prepare',
        'SubagentStart hook',
        `wrote ${written.join(', ')}`,
        next.stage === 'commit' ? 'stage-completed' : 'complete-stage',
        'SubagentStop hook',
        `advance → ${status}`,
      ],
    };
    stages.push(report);
    options.onStage?.(report);
    if (status === 'completed') return { steps, final: advanced, stages };
    expectStatus('advance', advanced, 'running');
  }
  throw new LifecycleDriveError(`lifecycle did not complete: ${steps.join(', ')}`);
}
