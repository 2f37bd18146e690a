import type { ClientFacts } from '../clients/facts.ts';
import { KNOWN_CLIENTS, isClientId } from '../clients/registry.ts';

// The lifecycle rules about agent clients (docs/lifecycle.md §8), read from the client registry
// (src/clients/registry.ts: baton's adapters, plus the 0.9.2 clients it has no adapter for): which
// ids `prepare --client` knows, which of them can orchestrate, which agent names a stage accepts.
// The registry's data is typed (every capability declared with a level), so nothing is re-checked here.

/** Every client id `prepare --client` accepts, registry order (a tuple, for z.enum). */
export const KNOWN_CLIENT_IDS = KNOWN_CLIENTS.map((client) => client.id) as unknown as readonly [string, ...string[]];

/** The lifecycle facts of a client 0.9.2's registry knows, or undefined. */
export function knownClient(id: string): ClientFacts | undefined {
  return KNOWN_CLIENTS.find((client) => client.id === id);
}

/** 0.9.2 rule: a client can be delegated to iff neither `subagents` nor `orchestration` is unsupported. */
export function supportsOrchestration(id: string): boolean {
  const capabilities = knownClient(id)?.capabilities;
  return capabilities !== undefined && capabilities.subagents !== 'unsupported' && capabilities.orchestration !== 'unsupported';
}

/**
 * The clients baton runs a lifecycle with through native hooks: the registry's adapters, which are
 * exactly those of the matrix that support orchestration (test/core/clients.test.ts holds the two
 * together). Only their delegations count for the one-pending rule.
 */
export const isLifecycleClient = isClientId;

/** Agent names a client may report on stage completion, the usual one first (its own id for an unknown client). */
export function stageAgentNames(client: string): readonly string[] {
  return knownClient(client)?.stageAgents ?? [client];
}
