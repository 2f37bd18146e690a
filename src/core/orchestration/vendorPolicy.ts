import { CLIENT_ADAPTERS, isClientId } from '../../clients/registry.ts';
import { PROFILE_FILE } from '../profiles/file.ts';
import { DIFFERENT_VENDOR } from '../profiles/reviewerVendor.ts';
import { receiptVendor, vendorOf } from '../vendors.ts';
import type { DelegationReceipt, DelegationRole, DelegationStage, OrchestrationRun } from '../types.ts';
import type { Refusal } from './modelPolicy.ts';
import type { OrchestrationContext } from './steps.ts';

// The reviewer-vendor policy (issue 43; docs/clients.md "A reviewer from another vendor"), a
// repository's choice under the later profile, recorded beside the profile in `.agents/baton.json`:
// `"reviewerVendor": "different"` (a review runs in another vendor than its stage's executor), a
// client id (reviews run in that client) or a vendor (`"openai"`). Checked from facts: the
// reviewer's client and the model it requests (at prepare), asks for (at the spawn claim) or reports
// (at activation), against the executor's receipt (its client and the model its client reported,
// src/core/vendors.ts). A subagent review and a headless one (`baton task … review --client`) are
// the same receipt, so the same check. Refused with BATON_REVIEWER_VENDOR_REQUIRED.

/** The executor receipt whose work a review stage reviews (the latest of that stage), or null (no delegated executor). */
export function reviewedExecutor(run: OrchestrationRun, stage: DelegationStage): DelegationReceipt | null {
  if (!stage.startsWith('review-')) return null;
  const reviewed = stage.slice('review-'.length);
  return run.receipts.findLast((receipt) => receipt.role === 'executor' && receipt.stage === reviewed) ?? null;
}

/** The headless reviewers of another vendor than `vendor`, as the way on. */
function otherVendorClients(vendor: string | null): string[] {
  return CLIENT_ADAPTERS.filter((client) => client.headless && client.vendor !== vendor).map((client) => client.id);
}

export type ReviewerFacts = Readonly<{
  role: DelegationRole;
  stage: DelegationStage;
  client: string;
  /** The model requested, asked for at the spawn, or reported (null: none known, the client's vendor). */
  model: string | null | undefined;
  taskId: string;
}>;

/** The policy's refusal of a reviewer with these facts, or null (no policy, not a review, or allowed). */
export function vendorRefusal(ctx: OrchestrationContext, run: OrchestrationRun, reviewer: ReviewerFacts, source: string): Refusal | null {
  const policy = ctx.reviewerVendor;
  if (policy === null || reviewer.role !== 'reviewer') return null;
  const { vendor } = vendorOf(reviewer.client, reviewer.model);
  const recorded = `${PROFILE_FILE} "reviewerVendor": "${policy}"`;
  const running = `${reviewer.client}${reviewer.model ? ` on ${reviewer.model}` : ''} (${source})`;
  const refused = (message: string): Refusal => ({ code: 'BATON_REVIEWER_VENDOR_REQUIRED', message });
  if (policy !== DIFFERENT_VENDOR) {
    const allowed = isClientId(policy) ? reviewer.client === policy : vendor === policy;
    if (allowed) return null;
    const way = isClientId(policy) ? `baton task ${reviewer.taskId} review --client ${policy}` : `a reviewer of ${policy}`;
    return refused(
      `the ${reviewer.stage} would run in ${vendor ?? 'an unknown vendor'}: ${running}; the repository's policy (${recorded}) has reviews run by ${policy}: ${way}`,
    );
  }
  const executor = reviewedExecutor(run, reviewer.stage);
  if (!executor) return null;
  const executorVendor = receiptVendor(executor);
  if (executorVendor === null || vendor !== executorVendor) return null;
  const others = otherVendorClients(executorVendor);
  const way = others.length > 0 ? `; have another vendor review it: baton task ${reviewer.taskId} review --client ${others.join('|')}` : '';
  return refused(
    `the ${reviewer.stage} would run in ${vendor}, the vendor of its executor (delegation ${executor.id}: ${executor.client}${executor.actualModel ? ` on ${executor.actualModel}` : ''}): ${running}; the repository's policy (${recorded}) asks for a reviewer of another vendor${way}`,
  );
}
