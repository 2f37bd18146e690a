// Agent client capability registry (docs/lifecycle.md §8): which coding-agent clients can run a
// lifecycle orchestration. Adapters must declare every capability; nothing is defaulted.
import { AGENT_CLIENT_IDS } from './types.ts';
import type { AgentClientId } from './types.ts';

export const CAPABILITY_IDS = [
  'instructions',
  'skills',
  'commands',
  'hooks',
  'subagents',
  'orchestration',
  'sandbox',
  'verification',
] as const;
export type CapabilityId = (typeof CAPABILITY_IDS)[number];

export const SUPPORT_LEVELS = ['compatible', 'integrated', 'verified', 'experimental', 'unsupported'] as const;
export type SupportLevel = (typeof SUPPORT_LEVELS)[number];

export type CapabilitySupport = Readonly<{ level: SupportLevel }>;

export type AgentClientAdapter = Readonly<{
  id: AgentClientId;
  displayName: string;
  capabilities: Readonly<Record<CapabilityId, CapabilitySupport>>;
}>;

export function isAgentClientId(value: string): value is AgentClientId {
  return (AGENT_CLIENT_IDS as readonly string[]).includes(value);
}

function isSupportLevel(value: unknown): value is SupportLevel {
  return typeof value === 'string' && (SUPPORT_LEVELS as readonly string[]).includes(value);
}

/**
 * Validate and freeze an adapter. Throws when the id is unknown, a capability is missing, a capability is
 * not one of CAPABILITY_IDS, or a level is not one of SUPPORT_LEVELS.
 */
export function defineAgentClientAdapter(adapter: {
  id: string;
  displayName: string;
  capabilities: Record<string, { level: string }>;
}): AgentClientAdapter {
  if (!isAgentClientId(adapter.id)) throw new Error(`Unknown Agent Client id '${adapter.id}'`);
  const declared = adapter.capabilities ?? {};
  for (const key of Object.keys(declared)) {
    if (!(CAPABILITY_IDS as readonly string[]).includes(key)) {
      throw new Error(`Agent Client adapter '${adapter.id}' declares unknown capability '${key}'`);
    }
  }
  const capabilities = {} as Record<CapabilityId, CapabilitySupport>;
  for (const capability of CAPABILITY_IDS) {
    const support = Object.hasOwn(declared, capability) ? declared[capability] : undefined;
    if (support === undefined) throw new Error(`Agent Client adapter '${adapter.id}' must declare capability '${capability}'`);
    if (!isSupportLevel(support?.level)) {
      throw new Error(`Agent Client adapter '${adapter.id}' has invalid support level '${String(support?.level)}' for capability '${capability}'`);
    }
    capabilities[capability] = Object.freeze({ level: support.level });
  }
  return Object.freeze({ id: adapter.id, displayName: adapter.displayName, capabilities: Object.freeze(capabilities) });
}

// The 0.9.2 matrix. Only subagents/orchestration are behaviourally relevant to baton; the other
// levels describe what each client's integration offers and are informational.
const ADAPTERS: ReadonlyMap<AgentClientId, AgentClientAdapter> = new Map(
  [
    defineAgentClientAdapter({
      id: 'claude-code',
      displayName: 'Claude Code',
      capabilities: {
        instructions: { level: 'integrated' },
        skills: { level: 'integrated' },
        commands: { level: 'integrated' },
        hooks: { level: 'integrated' },
        subagents: { level: 'experimental' },
        orchestration: { level: 'experimental' },
        sandbox: { level: 'compatible' },
        verification: { level: 'compatible' },
      },
    }),
    defineAgentClientAdapter({
      id: 'codex',
      displayName: 'Codex',
      capabilities: {
        instructions: { level: 'integrated' },
        skills: { level: 'integrated' },
        commands: { level: 'compatible' },
        hooks: { level: 'experimental' },
        subagents: { level: 'experimental' },
        orchestration: { level: 'experimental' },
        sandbox: { level: 'compatible' },
        verification: { level: 'compatible' },
      },
    }),
    defineAgentClientAdapter({
      id: 'gemini-cli',
      displayName: 'Gemini CLI',
      capabilities: {
        instructions: { level: 'integrated' },
        skills: { level: 'compatible' },
        commands: { level: 'integrated' },
        hooks: { level: 'unsupported' },
        subagents: { level: 'unsupported' },
        orchestration: { level: 'unsupported' },
        sandbox: { level: 'compatible' },
        verification: { level: 'compatible' },
      },
    }),
    defineAgentClientAdapter({
      id: 'opencode',
      displayName: 'OpenCode',
      capabilities: {
        instructions: { level: 'integrated' },
        skills: { level: 'compatible' },
        commands: { level: 'integrated' },
        hooks: { level: 'unsupported' },
        subagents: { level: 'unsupported' },
        orchestration: { level: 'unsupported' },
        sandbox: { level: 'compatible' },
        verification: { level: 'compatible' },
      },
    }),
  ].map((adapter) => [adapter.id, adapter] as const),
);

export function getAgentClientAdapter(id: string): AgentClientAdapter {
  const adapter = isAgentClientId(id) ? ADAPTERS.get(id) : undefined;
  if (!adapter) throw new Error(`No Agent Client adapter registered for '${id}'`);
  return adapter;
}

export function getAgentClientCapability(id: string, capability: CapabilityId): CapabilitySupport {
  const support = getAgentClientAdapter(id).capabilities[capability];
  if (!support) throw new Error(`Unknown Agent Client capability '${String(capability)}'`);
  return support;
}

/** 0.9.2 rule: a client can be delegated to iff neither `subagents` nor `orchestration` is unsupported. */
export function supportsOrchestration(id: AgentClientId): boolean {
  return (
    getAgentClientCapability(id, 'subagents').level !== 'unsupported' &&
    getAgentClientCapability(id, 'orchestration').level !== 'unsupported'
  );
}
