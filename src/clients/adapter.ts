// The adapter interface: what baton knows about one agent client, so that each client lives in one
// folder, src/clients/<id>/, and the rest of baton reads it from the registry (registry.ts):
//
//   identity        id, display name, 0.9.2's capability levels (docs/lifecycle.md §8)
//   stage agents    the names its subagents report on complete-stage / stage-completed
//   hooks           the hooks install-hooks registers (event names, matchers, `--event` arguments),
//                   its subagent-spawning tools and how each forks, its hook-output format
//   instructions    the orchestrator instructions file and how to spawn and hand over in this client
//   install         its settings file, agent profile files and format, where it reads skills (baton
//                   init's stage guidance), its own install-hooks options, and an installer (trust,
//                   project config) loaded only by install-hooks, init, uninstall and doctor
//   demo            the fields its SubagentStart/SubagentStop payloads carry besides the common ones
//
// An adapter is data and pure functions and imports nothing else of baton: core reads the registry
// for the Agent Client facts of the lifecycle rules, and `baton hook` loads it on every event, so it
// must stay light. Whatever needs files or parsers (trust files, TOML) sits in the installer module of
// the client's folder, which `install()` imports lazily.

import type { ClientInstaller } from './installer.ts';

export const CAPABILITY_IDS = ['instructions', 'skills', 'commands', 'hooks', 'subagents', 'orchestration', 'sandbox', 'verification'] as const;
export type CapabilityId = (typeof CAPABILITY_IDS)[number];

export const SUPPORT_LEVELS = ['compatible', 'integrated', 'verified', 'experimental', 'unsupported'] as const;
export type SupportLevel = (typeof SUPPORT_LEVELS)[number];

/** A client of 0.9.2's Agent Client registry: who it is and the level of every capability. */
export type AgentClientProfile<Id extends string = string> = Readonly<{
  id: Id;
  displayName: string;
  capabilities: Readonly<Record<CapabilityId, SupportLevel>>;
}>;

/** One hook `baton install-hooks` registers: the client's event name, its matcher, and the arguments after `baton hook <id>`. */
export type HookRegistration = Readonly<{ event: string; matcher: string; args: readonly string[] }>;

/**
 * A subagent-spawning tool as PreToolUse names it (compared lower-cased), and what its input means
 * for forking (docs/hooks.md "Spawn claim (PreToolUse)"): the fork fields themselves
 * (`fork_context`, `fork_turns`) are read the same way for every tool.
 */
export type SpawnTool = Readonly<{
  name: string;
  /** Left out, `fork_turns` copies the whole parent conversation (Codex's multi-agent v2 tools). */
  forkTurnsDefaultToAll?: boolean;
  /** How to spawn fresh with this tool, appended to the refusal: ` (fork_turns: "none")`. */
  freshHint?: string;
}>;

/** A lifecycle subagent profile (docs/lifecycle.md §10.1), before the client's file format. */
export type Profile = Readonly<{ name: string; description: string; instructions: string }>;

/** An install-hooks option only this client has (`--no-sandbox-config`); its installer reads the value. */
export type ClientOption = Readonly<{ flags: string; description: string }>;

export type ClientAdapter<Id extends string = string> = AgentClientProfile<Id> &
  Readonly<{
    /** Agent names `complete-stage --agent` accepts from this client's subagents, the usual one first. */
    stageAgents: readonly [string, ...string[]];
    hooks: Readonly<{
      /** What install-hooks registers, in this order (the first one's command is the one it prints). */
      registrations: readonly HookRegistration[];
      spawnTools: readonly SpawnTool[];
      /** The stdout line of a hook that recorded its event and has something to tell the user (exit 0). */
      notice(text: string): string;
    }>;
    instructions: Readonly<{
      /** The file holding the orchestrator instructions block (repo-relative). */
      file: string;
      /** How the orchestrator spawns one fresh lifecycle subagent in this client. */
      spawnAdvice: string;
      /** Why a subagent hands its artifact to baton instead of writing it with a file tool. */
      handOverReason: string;
    }>;
    install: Readonly<{
      /** The settings file baton's hook entries are merged into (repo-relative). */
      settingsFile: string;
      /** Where a lifecycle subagent profile goes (repo-relative), and its text. */
      agentFile(name: string): string;
      agentProfile(profile: Profile): string;
      /**
       * Where the client reads a project's skills (repo-relative, per skill name): `baton init` writes
       * its stage guidance there (docs/adopting.md "The stage guidance"). `agentInfraFiles` are where
       * agent-infra's own skill of that name would be for this client: found, they stay in charge.
       * A client without it gets no guidance.
       */
      skills?: Readonly<{ file(name: string): string; agentInfraFiles(name: string): readonly string[] }>;
      /** What install-hooks writes for this client besides hooks, profiles and instructions, for its --help. */
      also?: string;
      /** What `--trust` records for this client, for its --help. */
      trust: string;
      options?: readonly ClientOption[];
      installer(): Promise<ClientInstaller>;
    }>;
    demo: Readonly<{ payloadFields: Readonly<Record<string, unknown>> }>;
  }>;

/**
 * Both clients show `{"systemMessage": "…"}` to the user for every hook event, and Codex marks a hook
 * failed whose stdout is anything else (docs/hooks.md "Output contract").
 */
export function systemMessageNotice(text: string): string {
  return `${JSON.stringify({ systemMessage: text })}\n`;
}
