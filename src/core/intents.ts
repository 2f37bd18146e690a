// The intent table: each `baton task` intent once, with its flags, which of them are required (for a
// task ref and for `auto`, the two forms of one intent), whether it changes a run, whether only
// baton's hooks send it, and its usage lines. The CLI's flag tables, required-flag checks and usage
// text, and the engine's read-only and fingerprint sets are derived from it. The event schema in
// events.ts holds the value types, and checks that it names the intents of this table: an intent
// added to one does not compile until it is placed in the other.

/** How a flag's value is read; the CLI owns the parsing and upstream's messages for each kind. */
export type FlagValue = 'text' | 'integer' | 'positive-integer' | 'stage' | 'role' | 'boolean' | 'stdin';

/** `baton task` flags that carry an event field (the common options are the CLI's own). */
export const EVENT_FLAG_SPECS = {
  'max-steps': { field: 'maxSteps', value: 'positive-integer' },
  // later profile (agent-infra #783): the run's model policy, given to begin-or-resume
  'executor-model': { field: 'executorModel', value: 'text' },
  'reviewer-model': { field: 'reviewerModel', value: 'text' },
  'same-model-reason': { field: 'sameModelReason', value: 'text' },
  client: { field: 'client', value: 'text' },
  'requested-model': { field: 'requestedModel', value: 'text' },
  'native-agent': { field: 'nativeAgent', value: 'text' },
  'child-id': { field: 'childId', value: 'text' },
  'parent-id': { field: 'parentId', value: 'text' },
  'spawn-mode': { field: 'spawnMode', value: 'text' },
  'actual-model': { field: 'actualModel', value: 'text' },
  'fallback-reason': { field: 'fallbackReason', value: 'text' },
  'exit-code': { field: 'exitCode', value: 'integer' },
  agent: { field: 'agent', value: 'text' },
  code: { field: 'code', value: 'text' },
  message: { field: 'message', value: 'text' },
  recoverable: { field: 'recoverable', value: 'boolean' },
  stage: { field: 'stage', value: 'stage' },
  round: { field: 'round', value: 'positive-integer' },
  artifact: { field: 'artifact', value: 'text' },
  role: { field: 'role', value: 'role' },
  reason: { field: 'reason', value: 'text' },
  /** `--content -`: the artifact's text comes on standard input; the caller reads it into `content`. */
  content: { field: 'content', value: 'stdin' },
} as const satisfies Record<string, { field: string; value: FlagValue }>;
export type EventFlag = keyof typeof EVENT_FLAG_SPECS;
export const EVENT_FLAGS = Object.keys(EVENT_FLAG_SPECS) as EventFlag[];

export type IntentSpec = {
  /** The flags this intent reads; any other event flag is accepted and ignored, as upstream does. */
  readonly flags: readonly EventFlag[];
  /** Required with a task ref, in the order upstream reports the first missing one. */
  readonly required: readonly EventFlag[];
  /** Read only in the `auto` form: with a task ref upstream ignores them (even an unknown client). */
  readonly autoOnly?: readonly EventFlag[];
  /** Required with `auto` (a native hook event); the same as `required` unless the forms differ. */
  readonly requiredWithAuto?: readonly EventFlag[];
  /** Never changes a run: the CLI may answer it by reading files, and a failure pauses nothing. */
  readonly readOnly?: true;
  /** Sent only by baton's own hooks or worker; `baton task` does not offer it. */
  readonly internal?: true;
  /** Applying it captures a workspace fingerprint (slow on big trees). */
  readonly capturesFingerprint?: true;
  /** Its lines under "intents:" in `baton task --help` (none for internal intents). */
  readonly usage: readonly string[];
  /** Who runs it, as `baton install-hooks` tells the agents. */
  readonly audience: IntentAudience;
};

export type IntentAudience = 'orchestrator' | 'subagent' | 'hooks' | 'recovery' | 'worker';

export const INTENTS = {
  'begin-or-resume': {
    audience: 'orchestrator',
    flags: ['max-steps', 'executor-model', 'reviewer-model', 'same-model-reason'],
    required: [],
    usage: [
      'begin-or-resume [--max-steps N]',
      '           [--executor-model M --reviewer-model M [--same-model-reason R]]   (profile agent-infra-0.11.3: required)',
    ],
  },
  route: { audience: 'orchestrator', flags: [], required: [], readOnly: true, usage: ['route'] },
  status: { audience: 'orchestrator', flags: [], required: [], readOnly: true, usage: ['status'] },
  prepare: {
    audience: 'orchestrator',
    flags: ['client', 'requested-model'],
    required: ['client'],
    capturesFingerprint: true,
    usage: ['prepare --client C [--requested-model M]'],
  },
  'hook-start': {
    audience: 'hooks',
    flags: ['client', 'native-agent', 'child-id', 'parent-id', 'spawn-mode', 'actual-model', 'fallback-reason'],
    required: ['native-agent', 'child-id', 'parent-id', 'spawn-mode'],
    autoOnly: ['client'],
    requiredWithAuto: ['client', 'native-agent', 'child-id', 'parent-id', 'spawn-mode'],
    usage: [
      'hook-start --native-agent A --child-id ID --parent-id ID --spawn-mode fresh [--client C (required with auto)]',
      '           [--actual-model M] [--fallback-reason R]',
    ],
  },
  'hook-stop': {
    audience: 'hooks',
    flags: ['client', 'native-agent', 'child-id', 'exit-code'],
    required: ['child-id', 'exit-code'],
    autoOnly: ['client', 'native-agent'],
    requiredWithAuto: ['client', 'native-agent', 'child-id'],
    capturesFingerprint: true,
    usage: [
      'hook-stop  auto: --client C --native-agent A --child-id ID',
      '           <task-ref>: --child-id ID --exit-code N   (baton captures the fingerprint and changed paths)',
    ],
  },
  'claim-spawn': { audience: 'hooks', flags: [], required: [], internal: true, usage: [] },
  'release-spawn': { audience: 'hooks', flags: [], required: [], internal: true, usage: [] },
  reconcile: { audience: 'worker', flags: [], required: [], internal: true, capturesFingerprint: true, usage: [] },
  'child-gone': { audience: 'hooks', flags: [], required: [], internal: true, capturesFingerprint: true, usage: [] },
  'stage-completed': { audience: 'subagent', flags: ['agent'], required: ['agent'], usage: ['stage-completed --agent A'] },
  'complete-stage': {
    audience: 'subagent',
    flags: ['stage', 'round', 'artifact', 'agent', 'content'],
    required: ['stage', 'round', 'artifact', 'agent'],
    usage: [
      'complete-stage --stage S --round N --artifact F --agent A [--content -]',
      '               (--content -: baton writes F from standard input, checked, with the stage completion)',
    ],
  },
  'validate-stage': {
    audience: 'subagent',
    flags: ['stage', 'round', 'artifact', 'role'],
    required: ['stage', 'round', 'artifact', 'role'],
    usage: ['validate-stage --stage S --round N --artifact F --role executor|reviewer'],
  },
  advance: { audience: 'orchestrator', flags: [], required: [], usage: ['advance'] },
  pause: {
    audience: 'recovery',
    flags: ['code', 'message', 'recoverable'],
    required: ['code', 'message', 'recoverable'],
    usage: ['pause --code X --message Y --recoverable true|false'],
  },
  abort: { audience: 'recovery', flags: ['reason'], required: [], usage: ['abort [--reason R]'] },
  'recover-prepared': {
    audience: 'recovery',
    flags: [],
    required: [],
    capturesFingerprint: true,
    usage: ['recover-prepared   (profile agent-infra-0.11.3: release a delegation not activated by its deadline)'],
  },
  'recover-started': {
    audience: 'recovery',
    flags: [],
    required: [],
    usage: ['recover-started    (profile agent-infra-0.11.3: release a delegation whose child stopped before completing its stage)'],
  },
} as const satisfies Record<string, IntentSpec>;

export type LifecycleIntent = keyof typeof INTENTS;

const specs: Readonly<Record<LifecycleIntent, IntentSpec>> = INTENTS;

/** Every intent, in the table's order (the order of the usage text and the install instructions). */
export const LIFECYCLE_INTENTS = Object.keys(INTENTS) as LifecycleIntent[];

function intentsWhere(test: (spec: IntentSpec) => boolean): ReadonlySet<LifecycleIntent> {
  return new Set(LIFECYCLE_INTENTS.filter((intent) => test(specs[intent])));
}

/** Intents only baton's own hooks send; `baton task` does not offer them. */
export const INTERNAL_INTENTS = intentsWhere((spec) => spec.internal === true);

/** Intents that never change a run: the CLI may answer them by reading files, without the queue. */
export const READ_ONLY_INTENTS = intentsWhere((spec) => spec.readOnly === true);

/** Intents whose application captures a workspace fingerprint (slow on big trees). */
export const FINGERPRINT_INTENTS = intentsWhere((spec) => spec.capturesFingerprint === true);

/** Who runs each intent (the install instructions' intent → audience table). */
export const INTENT_AUDIENCE = Object.fromEntries(LIFECYCLE_INTENTS.map((intent) => [intent, specs[intent].audience])) as Readonly<
  Record<LifecycleIntent, IntentAudience>
>;

/** The flags `baton task <ref> <intent>` must be given; `auto` selects the native hook form. */
export function requiredFlags(intent: LifecycleIntent, auto: boolean): readonly EventFlag[] {
  const spec = specs[intent];
  return auto ? (spec.requiredWithAuto ?? spec.required) : spec.required;
}

/** The flags `baton task <ref> <intent>` reads into the event, in the order their values are checked. */
export function intentFlags(intent: LifecycleIntent, auto: boolean): readonly EventFlag[] {
  const spec = specs[intent];
  return auto ? spec.flags : spec.flags.filter((flag) => !spec.autoOnly?.includes(flag));
}

/** The intents that take `--content -`. */
export const CONTENT_INTENTS = intentsWhere((spec) => spec.flags.includes('content'));

/** The "intents:" section of `baton task --help`, one block per offered intent. */
export function intentUsageLines(): string[] {
  return LIFECYCLE_INTENTS.flatMap((intent) => specs[intent].usage.map((line) => `  ${line}`));
}
