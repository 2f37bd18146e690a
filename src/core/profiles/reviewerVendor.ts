import { CLIENT_ADAPTERS, isClientId } from '../../clients/registry.ts';
import { MODEL_VENDORS } from '../vendors.ts';

// The reviewer-vendor policy as `.agents/baton.json` records it (`"reviewerVendor"`): what values it
// takes; src/core/orchestration/vendorPolicy.ts enforces it.

/** `different`, a client id of baton's (`codex`) or a model vendor (`openai`). */
export type ReviewerVendorPolicy = string;

export const DIFFERENT_VENDOR = 'different';

type Parsed =
  | Readonly<{ ok: true; policy: ReviewerVendorPolicy }>
  | Readonly<{ ok: false; code: 'BATON_PROFILE_INVALID'; message: string }>;

/** A recorded `reviewerVendor`: `different`, a client id of baton's or a model vendor; anything else is BATON_PROFILE_INVALID. */
export function parseReviewerVendor(value: unknown, source: string): Parsed {
  if (value === DIFFERENT_VENDOR || isClientId(value) || (MODEL_VENDORS as readonly unknown[]).includes(value))
    return { ok: true, policy: value as string };
  return {
    ok: false,
    code: 'BATON_PROFILE_INVALID',
    message: `${source}: unknown reviewer-vendor policy ${JSON.stringify(value)}; baton knows "${DIFFERENT_VENDOR}", a client (${CLIENT_ADAPTERS.map((client) => client.id).join(', ')}) or a vendor (${MODEL_VENDORS.join(', ')})`,
  };
}

/** What a policy asks, in words (baton doctor, the run page). */
export function reviewerVendorText(policy: ReviewerVendorPolicy): string {
  if (policy === DIFFERENT_VENDOR)
    return `different (a review runs in another vendor than its stage's executor, else BATON_REVIEWER_VENDOR_REQUIRED)`;
  const by = isClientId(policy) ? 'the client' : 'the vendor';
  return `${policy} (reviews run by ${by} ${policy}, else BATON_REVIEWER_VENDOR_REQUIRED)`;
}
