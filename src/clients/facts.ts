// The lifecycle facts of an agent client: who it is, its column of 0.9.2's capability matrix
// (docs/lifecycle.md §8) and the agent names its subagents report. The part of an adapter the
// lifecycle rules read (src/core/clients.ts), and the help texts.

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

/** A client of 0.9.2's Agent Client registry, as the lifecycle rules see it. */
export type ClientFacts<Id extends string = string> = Readonly<{
  id: Id;
  displayName: string;
  capabilities: Readonly<Record<CapabilityId, SupportLevel>>;
  /** Agent names `complete-stage --agent` accepts from this client's subagents, the usual one first. */
  stageAgents: readonly [string, ...string[]];
  /**
   * baton: who serves the client's models when its model is not known (src/core/vendors.ts): the
   * maker of its own models (anthropic, openai, google), or the platform that picks one (github).
   */
  vendor: string;
}>;

/**
 * The formats of the clients' own records of a child's model requests, which the worker reads a
 * stage's cost from at its seal (src/core/usageRecords.ts; docs/run-view.md "What a stage cost"):
 * Claude Code's subagent transcript, Codex's session rollout of the child thread, Copilot CLI's
 * session events (the child's entries carry its `agentId`).
 */
export const USAGE_RECORD_FORMATS = ['claude-code-transcript', 'codex-rollout', 'copilot-events'] as const;
export type UsageRecordFormat = (typeof USAGE_RECORD_FORMATS)[number];
