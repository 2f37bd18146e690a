// Agent client capability registry (docs/lifecycle.md §8): which coding-agent clients can run a
// lifecycle orchestration. The clients and their levels come from the client registry
// (src/clients/registry.ts: baton's adapters, plus the 0.9.2 clients it has no adapter for), which is
// plain data; here they are checked (every capability declared, nothing defaulted) and queried.
import { CAPABILITY_IDS, SUPPORT_LEVELS } from '../clients/adapter.ts';
import type { AgentClientProfile, CapabilityId, SupportLevel } from '../clients/adapter.ts';
import { CLIENT_ADAPTERS, CLIENT_IDS, UNADAPTED_CLIENTS, clientAdapter, isClientId } from '../clients/registry.ts';
import type { ClientId } from '../clients/registry.ts';

export type CapabilitySupport = Readonly<{ level: SupportLevel }>;

/** Every client 0.9.2's registry knows: baton's adapted clients, then the others. */
const KNOWN_CLIENTS: readonly AgentClientProfile[] = [...CLIENT_ADAPTERS, ...UNADAPTED_CLIENTS];

export type AgentClientId = ClientId | (typeof UNADAPTED_CLIENTS)[number]['id'];

/** Every client id `prepare --client` accepts, registry order (a tuple, for z.enum). */
export const AGENT_CLIENT_IDS = KNOWN_CLIENTS.map((client) => client.id) as unknown as readonly [AgentClientId, ...AgentClientId[]];

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

const ADAPTERS: ReadonlyMap<AgentClientId, AgentClientAdapter> = new Map(
  KNOWN_CLIENTS.map((client) => {
    const capabilities = Object.fromEntries(CAPABILITY_IDS.map((capability) => [capability, { level: client.capabilities[capability] }]));
    return [client.id as AgentClientId, defineAgentClientAdapter({ id: client.id, displayName: client.displayName, capabilities })] as const;
  }),
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

/**
 * The clients baton runs a lifecycle with through native hooks: the registry's adapters, which are
 * exactly those of the matrix that support orchestration (test/core/clients.test.ts holds the two
 * together).
 */
export const LIFECYCLE_CLIENT_IDS = CLIENT_IDS;
export type LifecycleClientId = ClientId;

export const isLifecycleClientId = isClientId;

/** Agent names a client may report on stage completion, the usual one first (its adapter's; else its id). */
export function stageAgentNames(client: string): readonly string[] {
  return clientAdapter(client)?.stageAgents ?? [client];
}
