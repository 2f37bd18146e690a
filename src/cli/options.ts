import { Command, InvalidArgumentError } from 'commander';
import parseDuration from 'ms';
import type { StringValue } from 'ms';
import { unusedOptionWarning } from './common.ts';

// Option parsing shared by the commander-based commands (worker, dashboard, start, demo, runs,
// install-hooks, fingerprint).

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

/** A duration such as `90s`, `10m`, `1.5h` (a bare number is milliseconds), as whole milliseconds. */
export function duration(value: string): number {
  let parsed: number | undefined;
  try {
    parsed = parseDuration(value as StringValue);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'number' || !Number.isFinite(parsed) || parsed < 1)
    throw new InvalidArgumentError('must be a duration such as 90s, 10m or 1h');
  return Math.round(parsed);
}

/** Milliseconds, as a positive integer. */
export const milliseconds = positiveInteger;

/** For repeatable options (`--repo A --repo B`). */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * Common options a command has no use for, each with the reason. Scripts pass `--repo` and
 * `--redis` to every command; such a command accepts them and says it ignores them, instead of
 * failing with "unknown option".
 */
export type UnusedOptions = Readonly<{ repo?: string; redis?: string }>;

const UNUSED_FLAGS = { repo: '--repo <dir>', redis: '--redis <url>' } as const;

/** Declares the unused options on `program` (shown in --help with their reason). */
export function acceptUnusedOptions(program: Command, unused: UnusedOptions): void {
  for (const [name, why] of Object.entries(unused) as [keyof UnusedOptions, string][]) {
    program.option(UNUSED_FLAGS[name], `accepted and ignored: ${why}`);
  }
}

/** After parsing: one warning on stderr per unused option given. */
export function warnUnusedOptions(program: Command, unused: UnusedOptions): void {
  const given = program.opts<Record<string, unknown>>();
  for (const [name, why] of Object.entries(unused) as [keyof UnusedOptions, string][]) {
    if (given[name] !== undefined) process.stderr.write(unusedOptionWarning(program.name(), name, why));
  }
}

/**
 * Parses `argv` with a command configured to report instead of exiting. Returns the exit code
 * when parsing ended the command (0 for --help, 2 for a usage error), or null to go on.
 */
export function parseCommand(program: Command, argv: readonly string[], unused: UnusedOptions = {}): number | null {
  acceptUnusedOptions(program, unused);
  program.exitOverride().configureOutput({ writeErr: (text) => process.stderr.write(text) });
  try {
    program.parse([...argv], { from: 'user' });
  } catch (error) {
    return (error as { exitCode?: number }).exitCode === 0 ? 0 : 2;
  }
  warnUnusedOptions(program, unused);
  return null;
}

/**
 * The error for a command `baton` does not have, with commander's "did you mean" suggestion from
 * `commands` (commander's own edit-distance match: `baton wroker` → "(Did you mean worker?)").
 */
export function unknownCommandMessage(name: string, commands: readonly string[]): string {
  const program = new Command('baton').exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  for (const command of commands) program.command(command);
  try {
    program.parse([name], { from: 'user' });
  } catch (error) {
    return (error as Error).message.replace(/^error: /, '').replace(/\n\(Did you mean/, ' (did you mean');
  }
  return `unknown command '${name}'`;
}
