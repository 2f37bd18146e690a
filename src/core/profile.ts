import type { LATER_UPSTREAM_ERROR_CODES } from './profiles/codes.ts';

// The lifecycle profile of a repository: which agent-infra release baton's engine behaves as. One
// engine, whose later behaviours are rules switched by the profile (never a fork): every rule below
// is off under `agent-infra-0.9.2`, the default, so a repository that chose nothing behaves exactly
// as before. `agent-infra-0.11.3` is the newest upstream release whose behaviours baton implements
// (docs/differences.md "Profiles"). Chosen by `baton init --profile`, recorded in `.agents/baton.json`.

export const PROFILE_NAMES = ['agent-infra-0.9.2', 'agent-infra-0.11.3'] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];
export const DEFAULT_PROFILE: ProfileName = 'agent-infra-0.9.2';
export const LATER_PROFILE: ProfileName = 'agent-infra-0.11.3';

/** Upstream's activation deadline: a spawned child must start within it (60 s, #854/#870). */
export const UPSTREAM_ACTIVATION_DEADLINE_MS = 60_000;

/** The rules a profile switches; each is read by one place of the engine. */
export type ProfileRules = Readonly<{
  name: ProfileName;
  /** #828: only a `running` run's pending delegation holds the repository guard (off: any run's). */
  pausedRunReleasesGuard: boolean;
  /** #854/#870: the spawn claim starts an activation deadline (null: none). */
  activationDeadlineMs: number | null;
  /** #783: begin-or-resume takes a model policy, checked against the models the clients report. */
  modelSeparation: boolean;
  /** #993/#994: an activated delegation is recovered only from positive evidence that its child ended. */
  recoveryFromEvidence: boolean;
  /** A run file of the later upstream shape (schemaVersion 2) is read; what baton cannot honour in it is refused naming the field. */
  laterUpstreamRuns: boolean;
  /** baton (issue 43): the repository's reviewer-vendor policy (`.agents/baton.json` "reviewerVendor") is enforced. */
  reviewerVendorPolicy: boolean;
}>;

const RULES: Readonly<Record<ProfileName, ProfileRules>> = {
  'agent-infra-0.9.2': {
    name: 'agent-infra-0.9.2',
    pausedRunReleasesGuard: false,
    activationDeadlineMs: null,
    modelSeparation: false,
    recoveryFromEvidence: false,
    laterUpstreamRuns: false,
    reviewerVendorPolicy: false,
  },
  'agent-infra-0.11.3': {
    name: 'agent-infra-0.11.3',
    pausedRunReleasesGuard: true,
    activationDeadlineMs: UPSTREAM_ACTIVATION_DEADLINE_MS,
    modelSeparation: true,
    recoveryFromEvidence: true,
    laterUpstreamRuns: true,
    reviewerVendorPolicy: true,
  },
};

export function isProfileName(value: unknown): value is ProfileName {
  return typeof value === 'string' && (PROFILE_NAMES as readonly string[]).includes(value);
}

export function profileRules(name: ProfileName = DEFAULT_PROFILE): ProfileRules {
  return RULES[name];
}

export type ProfileCode = Extract<(typeof LATER_UPSTREAM_ERROR_CODES)[number], 'BATON_PROFILE_INVALID'>;

export type ParsedProfile = Readonly<{ ok: true; name: ProfileName }> | Readonly<{ ok: false; code: ProfileCode; message: string }>;

/** A profile name as given (a flag, or the recorded file): a known name, or BATON_PROFILE_INVALID naming the known ones. */
export function parseProfileName(value: unknown, source: string): ParsedProfile {
  if (isProfileName(value)) return { ok: true, name: value };
  return {
    ok: false,
    code: 'BATON_PROFILE_INVALID',
    message: `${source}: unknown profile ${JSON.stringify(value)}; baton knows ${PROFILE_NAMES.join(' and ')}`,
  };
}
