// How baton starts a client headless, as the reviewer of a delegation another client's run prepared
// (`baton task <ref> review --client <id>`, src/cli/headlessReview.ts; docs/clients.md "A reviewer
// from another vendor"). Data and pure functions: the CLI resolves the command, checks the login and
// runs the process.

/** What a headless reviewer is started with. */
export type HeadlessInput = Readonly<{
  /** The one task the reviewer gets: which review, of which task, round and artifact. */
  prompt: string;
  /** The reviewer profile's instructions (the installed agent profile's body). */
  instructions: string;
  /** The profile's model, else the one the receipt requests; null: the client's own default. */
  model: string | null;
  /** `baton hook <id> --event session-start|session-stop` as the installed hooks run it. */
  hookCommand: (phase: 'start' | 'stop') => string;
}>;

export type ClientHeadless = Readonly<{
  /** The command on PATH that starts the client (a variable named after the client overrides it, docs/clients.md). */
  command: string;
  /** The arguments of one headless run (the client's own non-interactive mode). */
  args(input: HeadlessInput): string[];
  /**
   * Whether its session hooks come from the installed hooks file (Codex runs only hooks it trusts,
   * so they are installed with the others) rather than from the command line (`hookCommand` used).
   */
  sessionHooksInstalled: boolean;
  /**
   * Whether the client has credentials it would use without asking, from its environment and its
   * files (`read` gives a file's text or null; `home` is the user's home directory).
   */
  loggedIn(env: Readonly<Record<string, string | undefined>>, read: (file: string) => string | null, home: string): boolean;
  /** How to log in, for the error that says it is not. */
  login: string;
}>;
