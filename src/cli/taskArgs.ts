import { DELEGATION_ROLES, DELEGATION_STAGES } from '../core/types.ts';
import { KNOWN_CLIENT_IDS } from '../core/clients.ts';
import { CLIENT_ADAPTERS, clientIdList } from '../clients/registry.ts';
import { lifecycleEventSchema } from '../core/events.ts';
import {
  CONTENT_INTENTS,
  EVENT_FLAGS,
  EVENT_FLAG_SPECS,
  INTERNAL_INTENTS,
  LIFECYCLE_INTENTS,
  intentFlags,
  intentUsageLines,
  requiredFlags,
} from '../core/intents.ts';
import type { EventFlag } from '../core/intents.ts';
import type { LifecycleEvent } from '../core/events.ts';
import type { LifecycleIntent } from '../core/intents.ts';

// The grammar of `baton task <task-ref|auto> <intent> [--flag value]...`, kept from agent-infra's
// `task-orchestration` (docs/lifecycle.md §10.4) so scripts work by swapping the command: only known
// flags, each at most once, each with a value that does not start with `--`. Messages are upstream's.
// Hand-written rather than commander: the exact messages and the value-only flag rule are the contract.

/** How long `baton task` waits for the worker's result unless `--timeout` says otherwise. */
export const DEFAULT_TASK_TIMEOUT_MS = 30_000;

/** `--client` (prepare) and `--agent` (complete-stage) name different things; the help says which. */
function clientAndAgentLines(): string[] {
  const agents = CLIENT_ADAPTERS.map((client) => `${client.stageAgents[0]} for ${client.id}`).join(', ');
  return [
    `  --client C  the agent client the lifecycle runs in, as baton hook and install-hooks name it: ${clientIdList()}`,
    `  --agent A   the name a subagent gives when it completes its stage: ${agents}`,
  ];
}

export const TASK_USAGE = `Usage: baton task <task-ref|auto> <intent> [--flag value]...

Apply a lifecycle intent to a task and print the result as one line of JSON. route and status read
the run files; every other intent is a job that the repository's worker applies.

Intents:
${intentUsageLines().join('\n')}

--client and --agent name different things:
${clientAndAgentLines().join('\n')}

Options:
  --repo DIR             repository (default: the nearest ancestor of the working directory holding .git)
  --redis URL            Redis URL (default: $REDIS_URL, then the Redis the repository's worker
                         recorded, then redis://127.0.0.1:6379)
  --timeout MS           how long to wait for the worker's result (default: ${DEFAULT_TASK_TIMEOUT_MS})
  --worker queue|inline  queue: a running 'baton worker' applies the intent; inline: this command
                         serves the repository queue itself until its job is done (default: queue)
  --idempotency-key K    event id for this intent: repeating the command with the same key applies it once
  -h, --help             display help for command
`;

const COMMON_FLAGS = ['repo', 'redis', 'timeout', 'worker', 'idempotency-key'] as const;
/** Known to 0.9.2's parser, used by no intent: accepted and ignored, as upstream does. */
const IGNORED_FLAGS = ['before-fingerprint'] as const;
/** Accepted by 0.9.2's hook-stop, refused by baton: a caller-supplied list could dodge the reviewer write gate. */
const REFUSED_FLAGS = ['after-fingerprint', 'changed-paths'] as const;

const KNOWN_FLAGS: ReadonlySet<string> = new Set<string>([...EVENT_FLAGS, ...COMMON_FLAGS, ...IGNORED_FLAGS, ...REFUSED_FLAGS]);
const HELP_FLAGS: ReadonlySet<string> = new Set(['--help', '-h']);

export type TaskCommonOptions = {
  repo?: string;
  redis?: string;
  timeoutMs?: number;
  worker: 'queue' | 'inline';
  idempotencyKey?: string;
  /** `complete-stage --content -`: the artifact's text comes on standard input (read by the caller). */
  contentFromStdin?: boolean;
};

export type ParsedTaskCommand =
  | { kind: 'help' }
  | { kind: 'usage-error'; message: string }
  | { kind: 'ok'; event: LifecycleEvent; options: TaskCommonOptions };

class UsageError extends Error {}

function usage(message: string): never {
  throw new UsageError(message);
}

// Upstream reads numbers with Number() and checks Number.isInteger, so any integer-valued spelling
// counts: `1e3`, `05`, `0.0`, `0x10`.
function integer(value: string, message: string): number {
  const number = Number(value);
  // A safe integer only: 2**53 + 1 parses to a neighbour, so the value would not be the one typed.
  if (!Number.isSafeInteger(number)) usage(message);
  return number;
}

function positiveInteger(value: string, message: string): number {
  const number = integer(value, message);
  if (number <= 0) usage(message);
  return number;
}

function parseFlags(tokens: readonly string[]): Map<string, string> {
  const flags = new Map<string, string>();
  for (let index = 0; index < tokens.length; index += 1) {
    const token = tokens[index]!;
    // Upstream names any token in an option position an option: `route foo` → "unknown option 'foo'".
    const name = token.slice(2);
    if (!token.startsWith('--') || !KNOWN_FLAGS.has(name)) usage(`unknown option '${token}'`);
    if (flags.has(name)) usage(`duplicate option '${token}'`);
    const value = tokens[index + 1];
    if (value === undefined || value === '' || value.startsWith('--')) usage(`option '${token}' requires a value`);
    flags.set(name, value);
    index += 1;
  }
  return flags;
}

/** Reads one flag's value as the intent table says; the messages are upstream's. */
function flagValue(flag: EventFlag, value: string): string | number | boolean {
  switch (EVENT_FLAG_SPECS[flag].value) {
    case 'integer':
      return integer(value, `--${flag} must be an integer`);
    case 'positive-integer':
      return positiveInteger(value, `--${flag} must be a positive integer`);
    case 'stage':
      if (!(DELEGATION_STAGES as readonly string[]).includes(value)) usage(`--stage must be one of ${DELEGATION_STAGES.join(', ')}`);
      return value;
    case 'role':
      if (!(DELEGATION_ROLES as readonly string[]).includes(value)) usage('--role must be executor or reviewer');
      return value;
    case 'boolean':
      if (value !== 'true' && value !== 'false') usage(`--${flag} must be true or false`);
      return value === 'true';
    case 'text':
    case 'stdin':
      return value;
  }
}

function buildEvent(taskRef: string, intent: LifecycleIntent, flags: Map<string, string>): Record<string, unknown> {
  const event: Record<string, unknown> = { intent, taskRef };
  for (const flag of intentFlags(intent, taskRef === 'auto')) {
    const value = flags.get(flag);
    // `--content -` is an instruction, not a value: the caller puts the text read from stdin there.
    if (value === undefined || EVENT_FLAG_SPECS[flag].value === 'stdin') continue;
    event[EVENT_FLAG_SPECS[flag].field] = flagValue(flag, value);
  }
  const client = event.client;
  if (typeof client === 'string' && !(KNOWN_CLIENT_IDS as readonly string[]).includes(client)) usage(`unknown client '${client}'`);
  return event;
}

function commonOptions(flags: Map<string, string>): TaskCommonOptions {
  const worker = flags.get('worker') ?? 'queue';
  if (worker !== 'queue' && worker !== 'inline') usage('--worker must be queue or inline');
  const options: TaskCommonOptions = { worker };
  const timeout = flags.get('timeout');
  if (timeout !== undefined) options.timeoutMs = positiveInteger(timeout, '--timeout must be a positive integer (milliseconds)');
  const repo = flags.get('repo');
  if (repo !== undefined) options.repo = repo;
  const redis = flags.get('redis');
  if (redis !== undefined) options.redis = redis;
  const key = flags.get('idempotency-key');
  if (key !== undefined) options.idempotencyKey = key;
  return options;
}

/**
 * `--help`/`-h` asks for help where an argument or an option name stands, not as an option's value:
 * `pause --message -h` pauses with the message "-h", as upstream does.
 */
function asksForHelp(argv: readonly string[]): boolean {
  if (argv.slice(0, 2).some((token) => HELP_FLAGS.has(token))) return true;
  for (let index = 2; index < argv.length; index += 1) {
    const token = argv[index]!;
    if (HELP_FLAGS.has(token)) return true;
    const value = argv[index + 1];
    if (token.startsWith('--') && KNOWN_FLAGS.has(token.slice(2)) && value !== undefined && value !== '' && !value.startsWith('--'))
      index += 1;
  }
  return false;
}

export function parseTaskCommand(argv: readonly string[]): ParsedTaskCommand {
  if (asksForHelp(argv)) return { kind: 'help' };
  try {
    // Positions decide, as upstream: `task --client x` is the task ref '--client' with intent 'x'.
    const [taskRef, intent, ...rest] = argv;
    if (taskRef === undefined || intent === undefined) usage('task ref and intent are required');
    if (!(LIFECYCLE_INTENTS as readonly string[]).includes(intent) || INTERNAL_INTENTS.has(intent as LifecycleIntent))
      usage(`unknown intent '${intent}'`);
    const flags = parseFlags(rest);
    for (const refused of REFUSED_FLAGS) {
      if (flags.has(refused))
        usage(`option '--${refused}' is not accepted: baton captures the workspace fingerprint and changed paths itself`);
    }
    const typedIntent = intent as LifecycleIntent;
    for (const flag of requiredFlags(typedIntent, taskRef === 'auto')) {
      if (!flags.has(flag)) usage(`intent '${intent}' requires '--${flag}'`);
    }
    const options = commonOptions(flags);
    const content = flags.get('content');
    if (content !== undefined) {
      if (!CONTENT_INTENTS.has(typedIntent)) usage("option '--content' is only accepted by complete-stage");
      if (content !== '-') usage("--content must be '-': the artifact's content is read from standard input");
      options.contentFromStdin = true;
    }
    const parsed = lifecycleEventSchema.safeParse(buildEvent(taskRef, typedIntent, flags));
    if (!parsed.success) usage(parsed.error.issues[0]?.message ?? 'invalid arguments');
    return { kind: 'ok', event: parsed.data, options };
  } catch (error) {
    if (error instanceof UsageError) return { kind: 'usage-error', message: error.message };
    throw error;
  }
}
