import type { LifecycleEvent } from '../../src/core/events.ts';
import { TASK_ID } from './fixtures.ts';

// The lifecycle events the tests apply (through the engine) or expect (from the parsers) again and
// again, with the values most of them use: Claude Code's managed executor child-1 (parent
// parent-1), matched by the engine (`auto`), working on the analysis of TASK_ID round 1. A test names
// only the fields it changes; taskArgv gives an event as the arguments of `baton task`.

type Of<I extends LifecycleEvent['intent']> = Extract<LifecycleEvent, { intent: I }>;
type Client = NonNullable<Of<'hook-start'>['client']>;
type Role = 'executor' | 'reviewer';

/** The name of a managed lifecycle subagent. */
export const managedAgent = (role: Role = 'executor') => `agent-infra-lifecycle-${role}`;

/** Where a native event of a managed child comes from: its client and agent (`auto`: the engine finds the task). */
function fromManagedChild(options: { role?: Role; client?: Client }) {
  return { taskRef: 'auto', client: options.client ?? 'claude-code', nativeAgent: managedAgent(options.role) } as const;
}

/** A native SubagentStart (`auto`, spawn mode fresh). */
export function nativeStart(
  options: { role?: Role; childId?: string; parentId?: string; client?: Client; actualModel?: string; fallbackReason?: string } = {},
): Of<'hook-start'> {
  return {
    intent: 'hook-start',
    ...fromManagedChild(options),
    childId: options.childId ?? 'child-1',
    parentId: options.parentId ?? 'parent-1',
    spawnMode: 'fresh',
    ...(options.actualModel === undefined ? {} : { actualModel: options.actualModel }),
    ...(options.fallbackReason === undefined ? {} : { fallbackReason: options.fallbackReason }),
  };
}

/** A native SubagentStop (`auto`). */
export function nativeStop(options: { role?: Role; childId?: string; client?: Client } = {}): Of<'hook-stop'> {
  return {
    intent: 'hook-stop',
    ...fromManagedChild(options),
    childId: options.childId ?? 'child-1',
  };
}

/** A PreToolUse claim of the prepared delegation by one spawning tool call. */
export function claimSpawn(
  toolCallId: string,
  options: { role?: Role; client?: Client; notAfter?: string; model?: string } = {},
): Of<'claim-spawn'> {
  return {
    intent: 'claim-spawn',
    ...fromManagedChild(options),
    toolCallId,
    ...(options.notAfter === undefined ? {} : { notAfter: options.notAfter }),
    ...(options.model === undefined ? {} : { model: options.model }),
  };
}

/** A subagent's complete-stage (default: the analysis of TASK_ID round 1, by claude-code). */
export function completeStage(
  options: Partial<Pick<Of<'complete-stage'>, 'taskRef' | 'stage' | 'round' | 'artifact' | 'agent'>> = {},
): Of<'complete-stage'> {
  return {
    intent: 'complete-stage',
    taskRef: options.taskRef ?? TASK_ID,
    stage: options.stage ?? 'analysis',
    round: options.round ?? 1,
    artifact: options.artifact ?? 'analysis.md',
    agent: options.agent ?? 'claude-code',
  };
}

/** `event` as the arguments of `baton task`: its task ref, its intent, then a flag per field (`childId` → `--child-id`). */
export function taskArgv(event: LifecycleEvent): string[] {
  const { intent, taskRef, ...fields } = event;
  const flag = (name: string) => `--${name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
  return [taskRef, intent, ...Object.entries(fields).flatMap(([name, value]) => [flag(name), String(value)])];
}

/** A complete-stage (see completeStage) as `baton task` flags, after the task ref. */
export function completeStageFlags(options: { stage?: string; round?: number; artifact?: string; agent?: string } = {}): string[] {
  return taskArgv(completeStage(options as Parameters<typeof completeStage>[0])).slice(1);
}
