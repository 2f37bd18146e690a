import type { ClientAdapter } from '../adapter.ts';
import { systemMessageNotice } from '../hook.ts';
import type { Profile } from '../installer.ts';

// GitHub Copilot CLI (docs/clients.md "Copilot CLI"): hooks in .github/copilot/settings.json (the
// grouped schema Claude Code uses, each with `--event`: Copilot names no event in its payload), agent
// profiles in .github/agents/<name>.agent.md, the orchestrator instructions in
// .github/copilot-instructions.md, skills in .github/skills/<name>/SKILL.md. Its payloads are
// camelCase (`agentId`, `toolArgs`), read in baton's names by `payload`; a spawn is refused with
// `permissionDecision: "deny"` on stdout, since exit 2 would block it without the reason.

const LIFECYCLE_AGENTS = '^agent-infra-lifecycle-(executor|reviewer)$';

/** Copilot's camelCase fields → the names baton's hook reads (src/hooks/payload.ts). */
const FIELD_NAMES: ReadonlyArray<readonly [from: string, to: string]> = [
  ['sessionId', 'session_id'],
  ['agentId', 'agent_id'],
  ['agentName', 'agent_name'],
  ['agentType', 'agent_type'],
  ['parentAgentId', 'parent_id'],
  ['toolName', 'tool_name'],
  ['toolArgs', 'tool_input'],
  ['toolResult', 'tool_response'],
  ['transcriptPath', 'transcript_path'],
];

/** `toolArgs` is an object in the releases seen; a JSON string is read as one too. */
function toolArgs(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** A Copilot payload in baton's field names; a name baton's already has (`cwd`) or that Copilot already sent snake_case stays. */
export function copilotPayload(payload: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const mapped: Record<string, unknown> = { ...payload };
  for (const [from, to] of FIELD_NAMES) {
    if (payload[from] === undefined || payload[to] !== undefined) continue;
    mapped[to] = from === 'toolArgs' ? toolArgs(payload[from]) : payload[from];
  }
  return mapped;
}

export const copilotCli = {
  id: 'copilot-cli',
  displayName: 'GitHub Copilot CLI',
  // Not in 0.9.2's matrix: the column baton's adapter gives it, as for Codex.
  capabilities: {
    instructions: 'integrated',
    skills: 'integrated',
    commands: 'compatible',
    hooks: 'experimental',
    subagents: 'experimental',
    orchestration: 'experimental',
    sandbox: 'compatible',
    verification: 'compatible',
  },
  stageAgents: ['copilot', 'copilot-cli'],
  vendor: 'github',
  hook: {
    // `task` (name, agent_type, prompt, description, mode): it has no fork or isolation option, and
    // its required `name` only labels the child (not a teammate), so nothing of it is refused.
    spawnTools: [{ name: 'task' }],
    // subagentStop's `transcriptPath` is the session's events.jsonl; the child's usage records carry its agentId.
    usageRecord: {
      fields: ['transcript_path'],
      format: 'copilot-events',
      ofChild: (payload) => (typeof payload.transcript_path === 'string' ? payload.transcript_path : undefined),
    },
    payload: copilotPayload,
    // Copilot honours a deny on stdout with exit 0 and shows the model the reason; exit 2 blocks too,
    // but the model is told only "hook exited with code 2" (docs/clients.md "Copilot CLI").
    denial: (reason: string) => `${JSON.stringify({ permissionDecision: 'deny', permissionDecisionReason: reason })}\n`,
    notice: systemMessageNotice,
  },
  install: {
    hooks: [
      { event: 'subagentStart', matcher: LIFECYCLE_AGENTS, args: ['--event', 'subagent-start'] },
      { event: 'subagentStop', matcher: LIFECYCLE_AGENTS, args: ['--event', 'subagent-stop'] },
      { event: 'preToolUse', matcher: '^task$', args: ['--event', 'pre-tool'] },
    ],
    instructions: {
      file: '.github/copilot-instructions.md',
      spawnAdvice:
        'Use the `task` tool with `agent_type` set to that name and `mode: "sync"`, so that it returns when the subagent has finished. Do not send it later messages (`write_agent`), and spawn one subagent per message.',
      handOverReason: 'a file written by hand is not checked, and the stage is recorded only with the artifact',
    },
    settingsFile: '.github/copilot/settings.json',
    agentFile: (name: string) => `.github/agents/${name}.agent.md`,
    agentProfile: (profile: Profile) =>
      `---\nname: ${profile.name}\ndescription: ${JSON.stringify(profile.description)}\n---\n\n${profile.instructions}`,
    skills: {
      file: (name: string) => `.github/skills/${name}/SKILL.md`,
      agentInfraFiles: (name: string) => [`.github/skills/${name}/SKILL.md`, `.agents/skills/${name}/SKILL.md`],
    },
    trust: 'the folder in $COPILOT_HOME/config.json (trustedFolders)',
    installer: async () => (await import('./install.ts')).installer,
  },
  demo: { payloadFields: {} },
} as const satisfies ClientAdapter<'copilot-cli'>;
