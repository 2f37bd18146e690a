// What baton's installer (src/install/) reads of an agent client, and what a client's installer
// module (src/clients/<id>/install.ts, loaded lazily through `install.installer()`) gets from it and
// gives back: the settings file it may extend, the files it plans, and the parts of baton's wiring
// each file holds. Types only, plus the error a client's installer throws: a client folder imports
// nothing else of baton.

import type { ClientFacts } from './facts.ts';

/** One hook `baton install-hooks` registers: the client's event name, its matcher (none: every one), and the arguments after `baton hook <id>`. */
export type HookRegistration = Readonly<{ event: string; matcher?: string; args: readonly string[] }>;

/** A lifecycle subagent profile (docs/lifecycle.md §10.1), before the client's file format. */
export type Profile = Readonly<{ name: string; description: string; instructions: string }>;

/** An install-hooks option only this client has (`--no-sandbox-config`); its installer reads the value. */
export type ClientOption = Readonly<{ flags: string; description: string }>;

/** A client as the installer sees it: its facts (id, names, stage agents) and its install part. */
export type InstallClient = ClientFacts & Readonly<{ install: ClientInstall }>;

/** The install part of an adapter. */
export type ClientInstall = Readonly<{
  /** The hooks install-hooks registers, in this order (the first one's command is the one it prints). */
  hooks: readonly HookRegistration[];
  instructions: Readonly<{
    /** The file holding the orchestrator instructions block (repo-relative). */
    file: string;
    /** How the orchestrator spawns one fresh lifecycle subagent in this client. */
    spawnAdvice: string;
    /** Why a subagent hands its artifact to baton instead of writing it with a file tool. */
    handOverReason: string;
  }>;
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

export type HookGroup = { matcher?: string; hooks: Record<string, unknown>[]; [key: string]: unknown };
/** A client's hooks settings file: only `hooks` has a shape baton checks; every other key is kept. */
export type HookSettings = { hooks?: Record<string, HookGroup[]>; [key: string]: unknown };

/**
 * Which part of baton's wiring a file holds, so that `baton uninstall` knows how to take it out again
 * (docs/adopting.md "Uninstall"): baton's own files (`profile`, `guidance`, `shim`) go; in the others
 * only baton's part goes (hook entries, the instructions block, the `.gitignore` line, what a client's
 * installer added); `user` files are the client's per-user state, outside the project, left alone.
 */
export type FilePart = 'settings' | 'profile' | 'instructions' | 'guidance' | 'client' | 'shim' | 'gitignore' | 'user';

export type PlannedFile = Readonly<{
  /** Relative to the repository, or absolute for a file outside it ($CODEX_HOME/config.toml). */
  path: string;
  content: string;
  /** `kept`: a file of baton's that the user edited since; left as it is. */
  outcome: 'created' | 'updated' | 'unchanged' | 'kept';
  mode?: number;
  /** Its text before (null: it does not exist). */
  before: string | null;
  part: FilePart;
}>;

/** One of baton's hook entries in the merged settings, where the client's file has it. */
export type InstalledHook = Readonly<{
  event: string;
  groupIndex: number;
  handlerIndex: number;
  matcher?: string;
  command: string;
  timeoutSec: number;
}>;

export type InstallContext = Readonly<{
  repoRoot: string;
  /** The checkout's real path. */
  realRoot: string;
  /**
   * The path Claude Code keys a workspace's trust by: realRoot, or for a linked worktree its main
   * repository's real path (measured with Claude Code 2.1.337: the trust of the worktree's own path
   * is not read there; its `baton task` commands then need approval).
   */
  trustRoot: string;
  /** Real paths of the git directory and of agent-infra's `.agents/` (resolved when read). */
  readonly gitDir: string;
  /** The real path of the common git directory: gitDir, or in a linked worktree its main repository's (objects, refs). */
  readonly commonDir: string;
  readonly agentsDir: string;
  /** The real path of the merged settings file, and baton's entries in it. */
  settingsFile: string;
  hooks: readonly InstalledHook[];
  /** `--trust`: record the trust the client's own prompt would. */
  trust: boolean;
  /** The command that records that trust, for the notices (`baton init --trust`). */
  trustCommand: string;
  /** The values of the client's own options (`ClientAdapter.install.options`), as commander names them. */
  options: Readonly<Record<string, unknown>>;
  env: Readonly<Record<string, string | undefined>>;
  /** A file's text, null when it does not exist (an unreadable one stops the install). */
  readText(file: string, label: string): string | null;
  /** A repository file to write (repo-relative). */
  planFile(relative: string, content: string, mode?: number): PlannedFile;
  /** A client's own file outside the repository: it keeps its permissions, a new one is private. */
  userFile(file: string, current: string | null, content: string): PlannedFile;
  /** A JSON (or JSONC) file's text changed to hold `value`, every byte outside what changes kept; null is a new file. */
  patchJson(text: string | null, value: unknown): string;
}>;

export type ClientInstaller = Readonly<{
  /** Settings of the client baton keeps besides its hook entries (Claude Code's allow rule for `baton task`). */
  settings?(settings: HookSettings, commandFor: (args: readonly string[]) => string): HookSettings;
  /** The inverse of `settings`, for a settings file changed since baton wrote it. */
  withoutSettings?(settings: HookSettings): HookSettings;
  /** The client's own files (trust, project config) and what the user must still do. */
  plan(context: InstallContext): { files: PlannedFile[]; notices: string[] };
  /**
   * The repository files `plan` writes, each with the inverse of baton's part of it, for a file the
   * user changed since (`baton uninstall`); a file without one is treated as baton's own.
   */
  projectFiles?(context: InstallContext): readonly Readonly<{ path: string; without(text: string): string }>[];
  /** What is still missing for the client to honour baton's hooks and permissions (`baton doctor`; install-hooks' notices). */
  trustProblems?(context: InstallContext): string[];
}>;

/** A client file baton cannot read or change safely; install-hooks stops with nothing written. */
export class ClientConfigError extends Error {}
