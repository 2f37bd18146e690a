// The codes of the behaviour baton takes from agent-infra after 0.9.2 (the later profile,
// src/core/profile.ts), spelt as upstream spells them, plus baton's own profile code. Kept apart from
// errorCodes.ts so the later profile's vocabulary is in one place; ERROR_CODES includes it.

export const LATER_UPSTREAM_ERROR_CODES = [
  // executor/reviewer model separation (agent-infra #783)
  'ORCHESTRATION_MODEL_POLICY_REQUIRED',
  'ORCHESTRATION_MODEL_POLICY_INVALID',
  'ORCHESTRATION_MODEL_SEPARATION_REQUIRED',
  'ORCHESTRATION_MODEL_POLICY_MISMATCH',
  'ORCHESTRATION_REQUESTED_MODEL_MISMATCH',
  // the activation deadline and the release of a never-activated delegation (#854, #870, #993)
  'DELEGATION_ACTIVATION_TIMEOUT',
  'ORCHESTRATION_PREPARED_RECOVERY_EARLY',
  'ORCHESTRATION_PREPARED_RECOVERY_UNSAFE',
  'ORCHESTRATION_PREPARED_RECOVERY_DRIFT',
  // recovery of an activated delegation from positive evidence only (#993, #994)
  'ORCHESTRATION_LIFECYCLE_RECOVERY_INCOMPLETE',
  'ORCHESTRATION_RECOVERY_UNSAFE',
  'RECOVERY_STOP_EVIDENCE_MISSING',
  // baton: a repository's recorded profile is not one baton knows
  'BATON_PROFILE_INVALID',
  // baton: an intent of the later profile asked for under another
  'BATON_INTENT_NOT_IN_PROFILE',
  // baton (issue 43): a review the repository's reviewer-vendor policy does not allow
  'BATON_REVIEWER_VENDOR_REQUIRED',
] as const;
