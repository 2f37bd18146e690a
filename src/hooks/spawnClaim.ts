import type { LifecycleEvent } from '../core/events.ts';
import type { ClientQueueConfig } from '../queue/endpoint.ts';
import { deliver } from '../queue/deliver.ts';
import { envelopeFor, eventIdForNative } from '../queue/eventIds.ts';
import type { RepoIdentity } from '../queue/eventIds.ts';
import type { HookClient } from './decide.ts';
import type { HookReport } from './report.ts';

// PreToolUse on a lifecycle spawn (docs/hooks.md "Spawn claim (PreToolUse)"): claim the prepared
// delegation for this tool call through the serialized worker and wait for its answer within the
// budget. Refused → exit 2 with the reason. No worker answering → exit 2 naming `baton worker` (the
// claim would only apply later). Redis down or not configured → the read-only check of the run
// files (spawnCheck.ts), said on stderr.

export type SpawnClaimRequest = Readonly<{
  root: string;
  repo: RepoIdentity;
  client: HookClient;
  budgetMs: number;
  verbose: boolean;
  /** null: no Redis configured for the repository. */
  config: ClientQueueConfig | null;
  nativeAgent: string;
  toolCallId: string;
  sessionId: string | undefined;
}>;

export async function claimSpawn(report: HookReport, claim: SpawnClaimRequest, noRedisAdvice: string): Promise<number> {
  const { root, client, nativeAgent, config } = claim;
  const fileCheck = async (why: string): Promise<number> => {
    const { checkSpawn } = await import('./spawnCheck.ts');
    const verdict = checkSpawn(root, client, nativeAgent);
    report.notice(`baton: ${why}; checked the run files instead (concurrent spawns are not serialized without the worker)`);
    if (verdict.allow) return 0;
    report.notice(verdict.reason);
    return 2;
  };
  if (!config) return fileCheck(`WARNING: ${noRedisAdvice}`);
  // A claim applied after this hook gave up (no worker yet) must not hold the delegation for a
  // tool call that was blocked: the worker refuses it past `notAfter`.
  const notAfter = new Date(Date.now() + claim.budgetMs).toISOString();
  const event: LifecycleEvent = { intent: 'claim-spawn', taskRef: 'auto', client, nativeAgent, toolCallId: claim.toolCallId, notAfter };
  const envelope = envelopeFor(event, claim.repo, 'hook', eventIdForNative([client, 'claim', claim.sessionId, claim.toolCallId]));
  const outcome = await deliver(envelope, { redis: config.redisUrl, prefix: config.prefix, budgetMs: claim.budgetMs }, { waitForResult: true });
  const result = parseResult(outcome.stdout);
  if (result) {
    if (claim.verbose) report.say(`baton: ${outcome.stdout}`);
    if (result.status !== 'failed') return 0;
    report.say(`baton: ${result.error?.code ?? 'BATON_EVENT_FAILED'}: ${result.error?.message ?? 'the spawn claim failed'}\n`);
    return 2;
  }
  if (/spooled/.test(outcome.stderr)) return fileCheck(outcome.stderr.trim().replace(/^baton: /, ''));
  report.say(
    `baton: the spawn of ${nativeAgent} was not claimed, so it is blocked: ${outcome.stderr.trim().replace(/^baton: /, '') || 'the worker did not answer'}. Start the repository's worker (baton worker --repo ${root}, or baton start) and spawn again.\n`,
  );
  return 2;
}

function parseResult(stdout: string): { status: string; error?: { code: string; message: string } | null } | null {
  if (!stdout.trim()) return null;
  try {
    const value = JSON.parse(stdout) as { status?: unknown };
    return typeof value.status === 'string' ? (value as { status: string; error?: { code: string; message: string } | null }) : null;
  } catch {
    return null;
  }
}
