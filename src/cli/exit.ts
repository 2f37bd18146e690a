// How an entry point (cli/main.ts, and cli/hookMain.ts for the hook bundle) ends: the command's exit
// code, or 1 with the stack of an error nobody expected. Light: the hook bundle includes it.

export function exitWith(command: Promise<number>): void {
  command.then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`baton: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
