import fs from 'node:fs';
import path from 'node:path';
import { CodedError } from '../errorCodes.ts';
import { DEFAULT_PROFILE, parseProfileName, profileRules } from '../profile.ts';
import type { RunReadOptions } from '../runStore.ts';
import type { ProfileName } from '../profile.ts';

// Where a repository records its profile: `.agents/baton.json` (committed with the project, so every
// clone, every worker and every CLI of the repository reads the same one). No file: the default.

export const PROFILE_FILE = path.join('.agents', 'baton.json');

export type ProfileRecord = Readonly<{ profile: ProfileName }>;

export function profileFile(repoRoot: string): string {
  return path.join(repoRoot, PROFILE_FILE);
}

export class ProfileError extends CodedError<'BATON_PROFILE_INVALID'> {
  constructor(message: string) {
    super('ProfileError', 'BATON_PROFILE_INVALID', message);
  }
}

/** The repository's profile; a file baton cannot read as one is BATON_PROFILE_INVALID (never a silent default). */
export function readRepositoryProfile(repoRoot: string): ProfileName {
  const file = profileFile(repoRoot);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return DEFAULT_PROFILE;
    throw new ProfileError(`${file}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ProfileError(`${file}: not JSON (${(error as Error).message})`);
  }
  const named = typeof value === 'object' && value !== null ? (value as { profile?: unknown }).profile : undefined;
  const parsed = parseProfileName(named, `${file} "profile"`);
  if (!parsed.ok) throw new ProfileError(parsed.message);
  return parsed.name;
}

/** The text of the record for `profile`, as `baton init --profile` writes it. */
export function profileRecordText(profile: ProfileName): string {
  return `${JSON.stringify({ profile } satisfies ProfileRecord, null, 2)}\n`;
}

/** How the repository's run files are read outside an event (run list, run page): as its profile reads them; an unreadable profile reads as the default. */
export function profileRunReadOptions(repoRoot: string): RunReadOptions {
  try {
    return { laterUpstream: profileRules(readRepositoryProfile(repoRoot)).laterUpstreamRuns };
  } catch (error) {
    if (error instanceof ProfileError) return {};
    throw error;
  }
}
