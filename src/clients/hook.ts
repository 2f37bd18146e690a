// What `baton hook` reads of an agent client: its subagent-spawning tools and how each forks, and
// the format of what a hook says to the user. Loaded on every hook event: data and pure functions.

import type { UsageRecordFormat } from './facts.ts';

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
  /**
   * Input fields that make the spawn a teammate rather than a subagent (Claude Code's agent teams:
   * `team_name`, `name`): refused with DELEGATION_TEAMMATE_FORBIDDEN (docs/clients.md "Agent teams").
   */
  teammateFields?: readonly string[];
}>;

/**
 * A tool whose call ends a child without a stop event (Claude Code's TaskStop of a background
 * subagent): its PostToolUse is the client's own evidence that the child is gone, reconciled at once
 * (docs/architecture.md "Reconciliation"). `childIdFields` are read in order from the tool's response,
 * then its input; the first string is the child id as SubagentStart reported it.
 */
export type GoneTool = Readonly<{ name: string; childIdFields: readonly string[] }>;

/**
 * Where a stop payload names the client's own record of the child's model requests (its token usage
 * and models), and that record's format: the worker reads it at the seal, never the hook.
 */
export type UsageRecord = Readonly<{
  fields: readonly string[];
  format: UsageRecordFormat;
  /**
   * The record of a child the payload names only by its id (the PostToolUse of a gone tool), from
   * the payload's other fields; left out, such a seal records no cost.
   */
  ofChild?(payload: Readonly<Record<string, unknown>>, childId: string): string | undefined;
}>;

export type ClientHook = Readonly<{
  spawnTools: readonly SpawnTool[];
  /** The child's own record of its requests, named by its SubagentStop payload (none: a stage's cost is not recorded). */
  usageRecord?: UsageRecord;
  /** Its tools that end a child without a stop (none: the graces alone settle a child that vanished). */
  goneTools?: readonly GoneTool[];
  /** The stdout line of a hook that recorded its event and has something to tell the user (exit 0). */
  notice(text: string): string;
  /**
   * The payload in the field names baton reads (Claude Code's and Codex's snake_case), for a client
   * that names them otherwise (Copilot CLI's camelCase); left out, the payload is read as it is.
   */
  payload?(payload: Readonly<Record<string, unknown>>): Record<string, unknown>;
  /**
   * The stdout of a refused spawn, for a client that takes the refusal as hook output with exit 0
   * (Copilot CLI's `permissionDecision: "deny"`); left out, a refusal exits 2 with the reason on stderr.
   */
  denial?(reason: string): string;
  /**
   * Where the client puts the worktree it makes for one child (`isolation`), relative to the main
   * repository's root, by the child's id; left out, the client makes none.
   */
  childWorktree?(childId: string): readonly string[];
}>;

/**
 * Claude Code and Codex show `{"systemMessage": "…"}` to the user for every hook event (Copilot CLI
 * accepts it), and Codex marks a hook failed whose stdout is anything else (docs/hooks.md "Output contract").
 */
export function systemMessageNotice(text: string): string {
  return `${JSON.stringify({ systemMessage: text })}\n`;
}
