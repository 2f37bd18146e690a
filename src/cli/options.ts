import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';

// Option parsing shared by the commander-based commands (worker, dashboard, start, demo, runs,
// install-hooks).

export function portNumber(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value) || number > 65_535) throw new InvalidArgumentError('must be a port number (0 picks a free port)');
  return number;
}

export function positiveInteger(value: string): number {
  const number = Number(value);
  if (!/^[1-9]\d*$/.test(value) || !Number.isSafeInteger(number)) throw new InvalidArgumentError('must be a positive integer');
  return number;
}

/** Milliseconds, as a positive integer. */
export const milliseconds = positiveInteger;

/** For repeatable options (`--repo A --repo B`). */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * Parses `argv` with a command configured to report instead of exiting. Returns the exit code
 * when parsing ended the command (0 for --help, 2 for a usage error), or null to go on.
 */
export function parseCommand(program: Command, argv: readonly string[]): number | null {
  program.exitOverride().configureOutput({ writeErr: (text) => process.stderr.write(text) });
  try {
    program.parse([...argv], { from: 'user' });
    return null;
  } catch (error) {
    return (error as { exitCode?: number }).exitCode === 0 ? 0 : 2;
  }
}
