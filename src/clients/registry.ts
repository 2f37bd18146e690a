import type { ClientAdapter } from './adapter.ts';
import { claudeCode } from './claude-code/index.ts';
import { codex } from './codex/index.ts';
import { copilotCli } from './copilot-cli/index.ts';
import type { ClientFacts } from './facts.ts';

// The registry: the agent clients baton drives a lifecycle with, one adapter each (adapter.ts), in
// the order help texts list them (the first is the default of `baton demo`). Adding a client is its
// folder plus its entry here; the hook, the installer, the demo, the help texts and the lifecycle
// rules (core/clients.ts) all read this list.
const ADAPTERS = [claudeCode, codex, copilotCli] as const;

/** The id of an agent client baton has an adapter for: the one client id of baton. */
export type ClientId = (typeof ADAPTERS)[number]['id'];
export const CLIENT_ADAPTERS: readonly ClientAdapter<ClientId>[] = ADAPTERS;

/** The column both unadapted clients have in 0.9.2's matrix: no hooks, subagents or orchestration. */
const NO_ORCHESTRATION = {
  instructions: 'integrated',
  skills: 'compatible',
  commands: 'integrated',
  hooks: 'unsupported',
  subagents: 'unsupported',
  orchestration: 'unsupported',
  sandbox: 'compatible',
  verification: 'compatible',
} as const;

/**
 * Clients 0.9.2's Agent Client registry knows that baton has no adapter for (docs/lifecycle.md §8):
 * `prepare --client` accepts their ids and refuses them as unable to orchestrate.
 */
const UNADAPTED_CLIENTS = [
  { id: 'gemini-cli', displayName: 'Gemini CLI', capabilities: NO_ORCHESTRATION, stageAgents: ['gemini-cli'], vendor: 'google' },
  { id: 'opencode', displayName: 'OpenCode', capabilities: NO_ORCHESTRATION, stageAgents: ['opencode'], vendor: 'opencode' },
] as const satisfies readonly ClientFacts[];

/** The lifecycle facts of every client 0.9.2's registry knows: baton's adapted clients, then the others. */
export const KNOWN_CLIENTS: readonly ClientFacts[] = [...CLIENT_ADAPTERS, ...UNADAPTED_CLIENTS];

/** The ids of the adapted clients, registry order. */
export const CLIENT_IDS: readonly ClientId[] = CLIENT_ADAPTERS.map((adapter) => adapter.id);

export function isClientId(value: unknown): value is ClientId {
  return typeof value === 'string' && (CLIENT_IDS as readonly string[]).includes(value);
}

/** The adapter of a client id (undefined for anything else). */
export function clientAdapter(id: string): ClientAdapter<ClientId> | undefined {
  return CLIENT_ADAPTERS.find((adapter) => adapter.id === id);
}

/** `a`, `a or b`, `a, b or c`: the client ids as help texts list them. */
export function clientIdList(ids: readonly string[] = CLIENT_IDS): string {
  return ids.length <= 1 ? (ids[0] ?? '') : `${ids.slice(0, -1).join(', ')} or ${ids.at(-1)}`;
}
