import * as z from 'zod/mini';
import './zodEnglish.ts';
import { DELEGATION_ROLES, DELEGATION_STAGES, RECONCILIATION_KINDS } from './types.ts';
import { KNOWN_CLIENT_IDS } from './clients.ts';
import { USAGE_RECORD_FORMATS } from '../clients/facts.ts';
import { MAX_ARTIFACT_BYTES } from './stageArtifact.ts';
import { EVENT_FLAG_SPECS, requiredFlags } from './intents.ts';
import type { LifecycleIntent } from './intents.ts';

// The events the engine applies: one per `baton task` intent (docs/lifecycle.md §10.4 plus baton's
// complete-stage, validate-stage and abort). The same schema validates CLI input, hook output and
// jobs taken off the queue, so a malformed job is rejected before it can touch a run.

const text = z.string().check(z.minLength(1));
// Any string: the engine resolves it, and refs that cannot name a task fail there with upstream's
// resolve-ref codes (INVALID_TASK_REF for '').
const taskRef = z.string();
// Upstream's numbers: any integer value (Number.isInteger), not only the safe range zod's int() allows.
const integer = z.number().check(z.refine(Number.isInteger, 'expected an integer'));
const positiveInteger = integer.check(z.refine((value) => value > 0, 'expected a positive integer'));
const client = z.enum(KNOWN_CLIENT_IDS);

export const lifecycleEventSchema = z
  .discriminatedUnion('intent', [
    z.strictObject({
      intent: z.literal('begin-or-resume'),
      taskRef,
      maxSteps: z.optional(positiveInteger),
      // later profile: the model policy (src/core/orchestration/modelPolicy.ts)
      executorModel: z.optional(text),
      reviewerModel: z.optional(text),
      sameModelReason: z.optional(text),
    }),
    z.strictObject({ intent: z.literal('route'), taskRef }),
    z.strictObject({ intent: z.literal('status'), taskRef }),
    z.strictObject({ intent: z.literal('prepare'), taskRef, client, requestedModel: z.optional(text) }),
    z.strictObject({
      intent: z.literal('hook-start'),
      taskRef,
      client: z.optional(client),
      nativeAgent: text,
      childId: text,
      parentId: text,
      spawnMode: text,
      actualModel: z.optional(text),
      fallbackReason: z.optional(text),
      // baton (hooks only): the child's record of its requests, kept on the receipt for a seal without a stop.
      usageRecord: z.optional(text),
      usageFormat: z.optional(z.enum(USAGE_RECORD_FORMATS)),
    }),
    z.strictObject({
      intent: z.literal('hook-stop'),
      taskRef,
      client: z.optional(client),
      nativeAgent: z.optional(text),
      childId: text,
      exitCode: z.optional(integer),
      // baton (hooks only): the client's own record of the child's requests, which the worker reads the
      // stage's cost from at the seal (docs/run-view.md "What a stage cost"); the hook never opens it.
      usageRecord: z.optional(text),
      usageFormat: z.optional(z.enum(USAGE_RECORD_FORMATS)),
    }),
    // Internal (PreToolUse hook only): claim the prepared delegation for one spawning tool call.
    z.strictObject({
      intent: z.literal('claim-spawn'),
      taskRef: z.literal('auto'),
      client,
      nativeAgent: text,
      toolCallId: text,
      /** ISO time after which the asking hook has given up: a later claim changes nothing. */
      notAfter: z.optional(text),
      /** The model the spawning tool call asks for (Claude Code's `tool_input.model`), when it names one. */
      model: z.optional(text),
    }),
    // Internal (PreToolUse hook only): a blocked spawn's claim, if it was applied after all, holds nothing.
    z.strictObject({ intent: z.literal('release-spawn'), taskRef: z.literal('auto'), client, toolCallId: text }),
    // Internal (the worker only): a delegation waited past its grace (docs/architecture.md "Reconciliation").
    z.strictObject({
      intent: z.literal('reconcile'),
      taskRef,
      receiptId: text,
      kind: z.enum(RECONCILIATION_KINDS),
      /** The receipt timestamp the clock ran from; a receipt that moved on since has another, and nothing happens. */
      since: text,
      graceMs: positiveInteger,
      // baton: the record the receipt names (SubagentStart's) and its child, for the cost of a seal without a stop.
      childId: z.optional(text),
      usageRecord: z.optional(text),
      usageFormat: z.optional(z.enum(USAGE_RECORD_FORMATS)),
    }),
    // Internal (hooks only): the client reported a child gone without a stop (orchestration/gone.ts).
    z.strictObject({
      intent: z.literal('child-gone'),
      taskRef: z.literal('auto'),
      client,
      childId: text,
      evidence: text,
      // baton: the gone child's own record, when the client's payload leads to it (as on hook-stop).
      usageRecord: z.optional(text),
      usageFormat: z.optional(z.enum(USAGE_RECORD_FORMATS)),
    }),
    z.strictObject({ intent: z.literal('stage-completed'), taskRef, agent: text }),
    z.strictObject({
      intent: z.literal('complete-stage'),
      taskRef,
      stage: z.enum(DELEGATION_STAGES),
      round: positiveInteger,
      artifact: text,
      agent: text,
      /** baton: the artifact's text (from `--content -`), written by the worker with the run update. */
      content: z.optional(z.string().check(z.maxLength(MAX_ARTIFACT_BYTES))),
    }),
    z.strictObject({
      intent: z.literal('validate-stage'),
      taskRef,
      stage: z.enum(DELEGATION_STAGES),
      round: positiveInteger,
      artifact: text,
      role: z.enum(DELEGATION_ROLES),
    }),
    z.strictObject({ intent: z.literal('advance'), taskRef }),
    z.strictObject({ intent: z.literal('pause'), taskRef, code: text, message: z.string(), recoverable: z.boolean() }),
    z.strictObject({ intent: z.literal('abort'), taskRef, reason: z.optional(text) }),
    z.strictObject({ intent: z.literal('recover-prepared'), taskRef }),
    z.strictObject({ intent: z.literal('recover-started'), taskRef }),
  ])
  .check(
    z.superRefine((event, context) => {
      // The flags one form of an intent requires that the schema leaves optional (the intent table says
      // which): native hook events carry no task, so `auto` correlates by client and needs it, and the
      // two forms of hook-stop need different fields.
      for (const flag of requiredFlags(event.intent, event.taskRef === 'auto')) {
        const field = EVENT_FLAG_SPECS[flag].field;
        if ((event as Record<string, unknown>)[field] === undefined) {
          context.addIssue({ code: 'custom', path: [field], message: `intent '${event.intent}' requires '--${flag}'` });
        }
      }
    }),
  );

export type LifecycleEvent = z.infer<typeof lifecycleEventSchema>;

// The schema and the intent table (intents.ts) name the same intents: neither compiles without the other.
type SchemaIntent = LifecycleEvent['intent'];
export const SAME_INTENTS: [SchemaIntent, LifecycleIntent] extends [LifecycleIntent, SchemaIntent] ? true : never = true;

// The two forms of a hook event as separate variants: `auto` (a native hook, correlated by client)
// and a task ref. The schema's refinements above guarantee the fields each form needs; these guards
// carry that guarantee to the type checker, so the engine reads the fields without assertions.
type HookStart = Extract<LifecycleEvent, { intent: 'hook-start' }>;
type HookStop = Extract<LifecycleEvent, { intent: 'hook-stop' }>;
type Client = NonNullable<HookStart['client']>;
export type AutoHookStart = HookStart & { taskRef: 'auto'; client: Client };
export type AutoHookStop = HookStop & { taskRef: 'auto'; client: Client; nativeAgent: string };
export type ExplicitHookStop = HookStop & { exitCode: number };

export function isAutoHookStart(event: HookStart): event is AutoHookStart {
  return event.taskRef === 'auto' && event.client !== undefined;
}

export function isAutoHookStop(event: HookStop): event is AutoHookStop {
  return event.taskRef === 'auto' && event.client !== undefined && event.nativeAgent !== undefined;
}

export function isExplicitHookStop(event: HookStop): event is ExplicitHookStop {
  return event.taskRef !== 'auto' && event.exitCode !== undefined;
}
