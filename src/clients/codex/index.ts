import type { ClientAdapter } from '../adapter.ts';
import { systemMessageNotice } from '../hook.ts';
import type { Profile } from '../installer.ts';

// Codex (docs/clients.md, docs/wiring.md "Codex"): hooks in .codex/hooks.json (each with `--event`,
// since baton names the event itself), agent profiles as TOML, the orchestrator instructions in
// AGENTS.md, skills in .agents/skills/<name>/SKILL.md; its installer writes the sandbox settings
// baton needs and, with --trust, Codex's trust.

const LIFECYCLE_AGENTS = '^agent-infra-lifecycle-(executor|reviewer)$';

/**
 * Codex's credentials: the login `codex login` stored, an API key, or a configured provider of the
 * user's own whose key variable is set (read as plain lines: the adapter loads no TOML parser).
 */
function codexLoggedIn(env: Readonly<Record<string, string | undefined>>, read: (file: string) => string | null, home: string): boolean {
  const codexHome = env.CODEX_HOME?.trim() ? env.CODEX_HOME : `${home}/.codex`;
  if (env.OPENAI_API_KEY || env.CODEX_API_KEY || read(`${codexHome}/auth.json`) !== null) return true;
  const config = read(`${codexHome}/config.toml`) ?? '';
  const provider = /^model_provider\s*=\s*"([^"]+)"/m.exec(config)?.[1];
  if (!provider || provider === 'openai') return false;
  const section = config.split(/^\[/m).find((part) => part.startsWith(`model_providers.${provider}]`));
  const envKey = section ? /^env_key\s*=\s*"([^"]+)"/m.exec(section)?.[1] : undefined;
  return envKey === undefined || Boolean(env[envKey]);
}

/** The child thread's rollout as SubagentStart names it: a rollout file named by the child's thread id, never another's. */
function childRollout(payload: Readonly<Record<string, unknown>>, childId: string): string | undefined {
  const file = payload.transcript_path;
  return typeof file === 'string' && file.endsWith(`-${childId}.jsonl`) ? file : undefined;
}

export const codex = {
  id: 'codex',
  displayName: 'Codex',
  // 0.9.2's capability matrix column (docs/lifecycle.md §8).
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
  stageAgents: ['codex'],
  vendor: 'openai',
  hook: {
    // v1 `spawn_agent` forks with `fork_context: true`; the v2 collaboration tools copy `fork_turns`
    // turns of the parent's conversation, all of them when it is left out.
    spawnTools: [
      { name: 'spawn_agent', freshHint: ' (fork_context: false)' },
      { name: 'collaborationspawn_agent', forkTurnsDefaultToAll: true, freshHint: ' (fork_turns: "none")' },
      { name: 'collaboration.spawn_agent', forkTurnsDefaultToAll: true, freshHint: ' (fork_turns: "none")' },
    ],
    // SubagentStop's `agent_transcript_path` is the child thread's rollout (null for an `--ephemeral` session).
    // SubagentStart's `transcript_path` is the child's rollout (kept on the receipt for a seal without a stop).
    usageRecord: { fields: ['agent_transcript_path'], format: 'codex-rollout', ofChild: childRollout },
    notice: systemMessageNotice,
  },
  install: {
    hooks: [
      { event: 'SubagentStart', matcher: LIFECYCLE_AGENTS, args: ['--event', 'subagent-start'] },
      { event: 'SubagentStop', matcher: LIFECYCLE_AGENTS, args: ['--event', 'subagent-stop'] },
      {
        event: 'PreToolUse',
        matcher: '^(spawn_agent|collaborationspawn_agent|collaboration\\.spawn_agent)$',
        args: ['--event', 'pre-tool'],
      },
      // A headless reviewer baton starts (`codex exec`, docs/clients.md "A reviewer from another
      // vendor"): its own session's start and stop. Codex runs only hooks it trusts, so they are
      // installed (and trusted) with the others; without BATON_HEADLESS_RECEIPT they record nothing.
      { event: 'SessionStart', args: ['--event', 'session-start'] },
      { event: 'Stop', args: ['--event', 'session-stop'] },
    ],
    instructions: {
      file: 'AGENTS.md',
      spawnAdvice:
        'Use `spawn_agent` with `agent_type` set to that name and no inherited context (`fork_turns: "none"`; with the older tool, `fork_context: false`), then `wait_agent` until it has finished. Do not send it follow-up input.',
      handOverReason: "Codex's sandbox keeps `.agents/` read-only",
    },
    settingsFile: '.codex/hooks.json',
    agentFile: (name: string) => `.codex/agents/${name}.toml`,
    // A TOML literal multi-line string: no escapes (the text never holds ''').
    agentProfile: (profile: Profile) =>
      `name = ${JSON.stringify(profile.name)}\ndescription = ${JSON.stringify(profile.description)}\ndeveloper_instructions = '''\n${profile.instructions}'''\n`,
    // Codex reads a repository's skills from .agents/skills/<name>/SKILL.md, where agent-infra keeps its own.
    skills: {
      file: (name: string) => `.agents/skills/${name}/SKILL.md`,
      agentInfraFiles: (name: string) => [`.agents/skills/${name}/SKILL.md`],
    },
    also: 'the sandbox settings baton needs',
    trust: "the project and baton's hooks in $CODEX_HOME/config.toml",
    options: [
      {
        flags: '--no-sandbox-config',
        description: "leave .codex/config.toml alone (baton's commands then need another way to reach Redis)",
      },
    ],
    installer: async () => (await import('./install.ts')).installer,
  },
  // Codex payloads carry the turn, the permission mode and the model (docs/hooks.md "Fields baton relies on").
  demo: { payloadFields: { turn_id: 'turn-1', permission_mode: 'default', model: 'gpt-5-codex' } },
  // `codex exec`: the profile as the session's developer instructions; its SessionStart and Stop
  // hooks are the installed ones (trusted with the others).
  headless: {
    command: 'codex',
    sessionHooksInstalled: true,
    loggedIn: codexLoggedIn,
    login: "run 'codex login' (or set OPENAI_API_KEY, or configure a model_provider with its env_key)",
    args: (input) => [
      'exec',
      '--ephemeral',
      '-c',
      `developer_instructions=${JSON.stringify(input.instructions)}`,
      ...(input.model ? ['-m', input.model] : []),
      input.prompt,
    ],
  },
} as const satisfies ClientAdapter<'codex'>;
