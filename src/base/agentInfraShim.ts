// The `agent-infra-internal` shim (`baton install-hooks --agent-infra-shim`) sets this variable for
// the `baton task` it runs, so that baton answers agent-infra's scripts and skills in 0.9.2's exact
// words (src/cli/agentInfraWords.ts). Named here, once, for the shim's writer and its reader.

export const AGENT_INFRA_SHIM_ENV = 'BATON_AGENT_INFRA_SHIM';

export function underAgentInfraShim(env: Record<string, string | undefined> = process.env): boolean {
  return env[AGENT_INFRA_SHIM_ENV] === '1';
}
