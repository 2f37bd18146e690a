import fs from 'node:fs';
import path from 'node:path';
import { CodedError } from '../errorCodes.ts';
import { DEFAULT_PROFILE, parseProfileName, profileRules } from '../profile.ts';
import { parseReviewerVendor } from './reviewerVendor.ts';
import type { ReviewerVendorPolicy } from './reviewerVendor.ts';
import type { RunReadOptions } from '../runStore.ts';
import type { ProfileName } from '../profile.ts';

// Where a repository records its profile: `.agents/baton.json` (committed with the project, so every
// clone, every worker and every CLI of the repository reads the same one). No file: the default.
// Beside it, the repository's policies of the later profile: `reviewerVendor` (vendorPolicy.ts).

export const PROFILE_FILE = path.join('.agents', 'baton.json');

export type ProfileRecord = Readonly<{ profile: ProfileName; reviewerVendor?: ReviewerVendorPolicy }>;

/** What the engine reads of the record: the profile, and the reviewer-vendor policy (null: none). */
export type RepositoryRecord = Readonly<{ profile: ProfileName; reviewerVendor: ReviewerVendorPolicy | null }>;

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
  return readRepositoryRecord(repoRoot).profile;
}

/** The repository's record; a file baton cannot read, or a policy it does not know, is BATON_PROFILE_INVALID. */
export function readRepositoryRecord(repoRoot: string): RepositoryRecord {
  const file = profileFile(repoRoot);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profile: DEFAULT_PROFILE, reviewerVendor: null };
    throw new ProfileError(`${file}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ProfileError(`${file}: not JSON (${(error as Error).message})`);
  }
  const record = typeof value === 'object' && value !== null ? (value as { profile?: unknown; reviewerVendor?: unknown }) : {};
  const parsed = parseProfileName(record.profile, `${file} "profile"`);
  if (!parsed.ok) throw new ProfileError(parsed.message);
  if (record.reviewerVendor === undefined) return { profile: parsed.name, reviewerVendor: null };
  const policy = parseReviewerVendor(record.reviewerVendor, `${file} "reviewerVendor"`);
  if (!policy.ok) throw new ProfileError(policy.message);
  return { profile: parsed.name, reviewerVendor: policy.policy };
}

/** The text of the record for `profile`, as `baton init --profile` writes it; `kept`: the other fields of the record it replaces. */
export function profileRecordText(profile: ProfileName, kept: Readonly<Record<string, unknown>> = {}): string {
  const { profile: _replaced, ...others } = kept;
  return `${JSON.stringify({ profile, ...others } satisfies ProfileRecord, null, 2)}\n`;
}

/** The fields of the repository's record as they are (an object), for a rewrite to keep; {} when there is none. */
export function recordFields(repoRoot: string): Record<string, unknown> {
  try {
    const value = JSON.parse(fs.readFileSync(profileFile(repoRoot), 'utf8')) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
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
