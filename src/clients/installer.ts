// What a client's installer module (src/clients/<id>/install.ts, loaded lazily through the adapter's
// `install.installer()`) gets from baton's installer (src/install/) and gives back: the settings file
// it may extend, the files it plans, and the parts of baton's wiring each file holds. Types only,
// plus the error a client's installer throws: a client folder imports nothing else of baton.


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
export type InstalledHook = Readonly<{ event: string; groupIndex: number; handlerIndex: number; matcher?: string; command: string; timeoutSec: number }>;

export type InstallContext = Readonly<{
  repoRoot: string;
  /** The repository's real path (what clients key their trust by). */
  realRoot: string;
  /** Real paths of the git directory and of agent-infra's `.agents/` (resolved when read). */
  readonly gitDir: string;
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
