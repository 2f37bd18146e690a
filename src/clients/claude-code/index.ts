import type { ClientAdapter } from '../adapter.ts';
import { systemMessageNotice } from '../hook.ts';
import type { Profile } from '../installer.ts';

// Claude Code (docs/clients.md, docs/wiring.md "Claude Code"): hooks in .claude/settings.json, agent
// profiles as Markdown with frontmatter, the orchestrator instructions in CLAUDE.md, skills in
// .claude/skills/<name>/SKILL.md.

const LIFECYCLE_AGENTS = 'agent-infra-lifecycle-(executor|reviewer)';

/**
 * A subagent's transcript beside its session's (2.1.26 and 2.1.337 alike): `<dir>/<session>.jsonl`
 * → `<dir>/<session>/subagents/agent-<agent_id>.jsonl`. For TaskStop's PostToolUse, which names
 * only the session's transcript; a file that is not there is noted on the receipt.
 */
function subagentTranscript(payload: Readonly<Record<string, unknown>>, childId: string): string | undefined {
  const session = payload.transcript_path;
  if (typeof session !== 'string' || !session.endsWith('.jsonl') || !/^[A-Za-z0-9_-]+$/.test(childId)) return undefined;
  return `${session.slice(0, -'.jsonl'.length)}/subagents/agent-${childId}.jsonl`;
}

export const claudeCode = {
  id: 'claude-code',
  displayName: 'Claude Code',
  // 0.9.2's capability matrix column (docs/lifecycle.md §8).
  capabilities: {
    instructions: 'integrated',
    skills: 'integrated',
    commands: 'integrated',
    hooks: 'integrated',
    subagents: 'experimental',
    orchestration: 'experimental',
    sandbox: 'compatible',
    verification: 'compatible',
  },
  // Claude Code's skills report `claude`; `claude-code` is accepted too.
  stageAgents: ['claude', 'claude-code'],
  vendor: 'anthropic',
  hook: {
    // It forks only with `subagent_type: "fork"`, which is never a lifecycle agent; `isolation` is
    // refused for every tool.
    // `team_name` / `name` make the spawn an agent-team teammate (or a named agent others can message):
    // refused (docs/clients.md "Agent teams").
    spawnTools: [
      { name: 'task', teammateFields: ['team_name', 'name'] },
      { name: 'agent', teammateFields: ['team_name', 'name'] },
    ],
    // TaskStop of a background subagent sends no SubagentStop (anthropics/claude-code#92716); its
    // PostToolUse names the task, whose id is the subagent's agent_id (docs/clients.md).
    goneTools: [{ name: 'taskstop', childIdFields: ['task_id', 'shell_id'] }],
    // SubagentStop's `agent_transcript_path` is the subagent's own transcript (`transcript_path` is the parent's).
    usageRecord: { fields: ['agent_transcript_path'], format: 'claude-code-transcript', ofChild: subagentTranscript },
    notice: systemMessageNotice,
    // `isolation: "worktree"` (refused at PreToolUse): `<main>/.claude/worktrees/agent-<agent_id>`,
    // observed with 2.1.337 (docs/clients.md "Worktree isolation").
    childWorktree: (childId: string) => ['.claude', 'worktrees', `agent-${childId}`],
  },
  install: {
    hooks: [
      { event: 'SubagentStart', matcher: LIFECYCLE_AGENTS, args: [] },
      { event: 'SubagentStop', matcher: LIFECYCLE_AGENTS, args: [] },
      // The spawning tool ("Task", renamed "Agent"): the one place a spawn can still be blocked.
      { event: 'PreToolUse', matcher: 'Task|Agent', args: [] },
      // A background subagent killed with TaskStop: reconciled at once, not after --stop-grace.
      { event: 'PostToolUse', matcher: 'TaskStop', args: [] },
    ],
    instructions: {
      file: 'CLAUDE.md',
      spawnAdvice:
        'Use the Agent tool with `subagent_type` set to that name and `run_in_background: false` (Claude Code runs subagents in the background unless told otherwise). Do not set `isolation`, `team_name` or `name` (a teammate is not a fresh subagent), do not resume an earlier subagent (SendMessage), and spawn one subagent per message.',
      handOverReason: "Claude Code refuses a subagent's Write of report-like files such as `analysis.md`",
    },
    settingsFile: '.claude/settings.json',
    agentFile: (name: string) => `.claude/agents/${name}.md`,
    agentProfile: (profile: Profile) =>
      `---\nname: ${profile.name}\ndescription: ${JSON.stringify(profile.description)}\n---\n\n${profile.instructions}`,
    // Project skills; agent-infra installs its skills for Claude Code as commands, from .agents/skills.
    skills: {
      file: (name: string) => `.claude/skills/${name}/SKILL.md`,
      agentInfraFiles: (name: string) => [`.claude/commands/${name}.md`, `.agents/skills/${name}/SKILL.md`],
    },
    trust: 'the workspace in ~/.claude.json',
    installer: async () => (await import('./install.ts')).installer,
  },
  demo: { payloadFields: {} },
  // `claude -p`: the profile appended to the system prompt; the session hooks given on the command
  // line (--settings adds them to the project's), so no session of the user runs them.
  headless: {
    command: 'claude',
    sessionHooksInstalled: false,
    // An API key or token, a cloud provider, or the login `claude` stored.
    loggedIn: (env, read, home) =>
      Boolean(env.ANTHROPIC_API_KEY || env.ANTHROPIC_AUTH_TOKEN || env.CLAUDE_CODE_OAUTH_TOKEN) ||
      env.CLAUDE_CODE_USE_BEDROCK === '1' ||
      env.CLAUDE_CODE_USE_VERTEX === '1' ||
      read(`${env.CLAUDE_CONFIG_DIR?.trim() ? env.CLAUDE_CONFIG_DIR : `${home}/.claude`}/.credentials.json`) !== null,
    login: "run 'claude' and log in (or set ANTHROPIC_API_KEY)",
    args: (input) => [
      '-p',
      input.prompt,
      '--append-system-prompt',
      input.instructions,
      '--settings',
      JSON.stringify({
        hooks: {
          SessionStart: [{ hooks: [{ type: 'command', command: input.hookCommand('start'), timeout: 10 }] }],
          Stop: [{ hooks: [{ type: 'command', command: input.hookCommand('stop'), timeout: 10 }] }],
        },
      }),
      ...(input.model ? ['--model', input.model] : []),
    ],
  },
} as const satisfies ClientAdapter<'claude-code'>;
