import * as z from 'zod/mini';

// The native hook payload (docs/hooks.md "Fields baton relies on"): how stdin becomes an object, and
// the strict check of the fields baton reads, applied only once an event is known to be managed.
// Upstream's messages (docs/lifecycle.md §10.3).

export const HOOK_INPUT_LIMIT = 64 * 1024;

export const HOOK_MESSAGES = {
  client: 'Lifecycle delegation hook requires a supported --client value',
  tooLarge: 'Lifecycle delegation hook input exceeds 64 KiB',
  invalidJson: 'Lifecycle delegation hook received invalid JSON',
  notObject: 'Lifecycle delegation hook payload is not a hook event object',
  unknownType: 'Managed lifecycle hook event has an unknown type',
} as const;

export type HookPayload = Readonly<Record<string, unknown>>;

// The payload of a managed event is validated with zod's small build (zod/mini, ~5 ms to load)
// rather than the full one (~30 ms): the hook starts for every agent event and must stay near the
// bare runtime start-up (bench/results/hook.md). test/fuzz/hook.test.ts checks it against the full
// zod schema. Payloads of agents baton does not manage are never validated: they exit 0 silently
// whatever their fields hold, as upstream does (docs/hooks.md "Fields baton relies on").
const optionalText = z.nullish(z.string());
const payloadSchema = z.looseObject({
  hook_event_name: optionalText,
  event: optionalText,
  session_id: optionalText,
  parent_id: optionalText,
  parent_session_id: optionalText,
  agent_id: optionalText,
  child_id: optionalText,
  thread_id: optionalText,
  agent_name: optionalText,
  agent_type: optionalText,
  agent: z.nullish(z.looseObject({ name: optionalText })),
  spawn_mode: optionalText,
  model: optionalText,
  model_fallback_reason: optionalText,
  turn_id: optionalText,
  cwd: optionalText,
  tool_name: optionalText,
  tool_use_id: optionalText,
  call_id: optionalText,
  tool_input: z.nullish(
    z.looseObject({ subagent_type: optionalText, agent_type: optionalText, agent: optionalText, name: optionalText, model: optionalText }),
  ),
});

function received(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'number' && Number.isNaN(value) ? 'NaN' : typeof value;
}

/** The first problem as `(path: message)`, worded as full zod words it; '' for a non-object payload. */
function describeProblem(value: unknown, issues: readonly z.core.$ZodIssue[]): string {
  const issue = issues[0];
  if (!issue || issue.path.length === 0) return '';
  const actual = issue.path.reduce<unknown>((at, key) => (at as Record<PropertyKey, unknown> | undefined)?.[key as PropertyKey], value);
  const detail = issue.code === 'invalid_type' ? `Invalid input: expected ${issue.expected}, received ${received(actual)}` : issue.message;
  return ` (${issue.path.join('.')}: ${detail})`;
}

/** Strict check of the fields baton reads, for an event known to be managed. */
export function validateManagedPayload(value: unknown): { ok: true } | { ok: false; message: string } {
  const parsed = payloadSchema.safeParse(value);
  if (parsed.success) return { ok: true };
  return { ok: false, message: `${HOOK_MESSAGES.notObject}${describeProblem(value, parsed.error.issues)}` };
}

export function parseHookInput(raw: Buffer): { ok: true; payload: HookPayload } | { ok: false; message: string } {
  if (raw.length > HOOK_INPUT_LIMIT) return { ok: false, message: HOOK_MESSAGES.tooLarge };
  const input = raw.toString('utf8');
  let value: unknown;
  try {
    value = input.trim() === '' ? {} : JSON.parse(input);
  } catch {
    return { ok: false, message: HOOK_MESSAGES.invalidJson };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, message: HOOK_MESSAGES.notObject };
  return { ok: true, payload: value as HookPayload };
}

/** A field read without validation: its value when it is a string, else undefined. */
export function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The first non-empty string of `values` (upstream's `a || b || c` over payload fields), else ''. */
export function firstText(...values: unknown[]): string {
  return values.find((value): value is string => typeof value === 'string' && value.length > 0) ?? '';
}
