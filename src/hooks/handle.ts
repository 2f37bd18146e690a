import fs from 'node:fs';
import path from 'node:path';
import type { ClientHook } from '../clients/hook.ts';
import { clientAdapter } from '../clients/registry.ts';
import { checkoutProblem, repositoryOf } from '../base/repoRoot.ts';
import { activeTaskDirs, runFilePath } from '../core/taskLayout.ts';
import { deliver } from '../queue/deliver.ts';
import { namedQueueConfig } from '../queue/endpoint.ts';
import type { JobEnvelope } from '../queue/envelope.ts';
import { envelopeFor } from '../queue/envelope.ts';
import { repoIdentity } from '../queue/checkoutId.ts';
import { decideHook, nativeEventId } from './decide.ts';
import type { HeadlessSession } from './decide.ts';
import { HOOK_INPUT_LIMIT, HOOK_MESSAGES, firstText, parseHookInput, record, text } from './payload.ts';
import { HookReport } from './report.ts';
import type { HookRun } from './report.ts';
import { claimSpawn } from './spawnClaim.ts';
import { profileModel } from './agentModel.ts';
import { otlpTracesUrl } from '../base/traceContext.ts';

// One native hook event, from the client's arguments and payload to the exit code and output
// (`baton hook`, docs/hooks.md): the payload and the pure decision (payload.ts, decide.ts), the
// checkout (a linked worktree is a checkout of its own), which Redis (queue/endpoint.ts), then
// the spawn claim (spawnClaim.ts) or the event's delivery (queue/deliver.ts). SubagentStart/Stop of
// a lifecycle agent become hook-start/hook-stop events (docs/lifecycle.md §10.3) added to the
// repository's queue without waiting for the worker; PreToolUse on the spawning tool claims the
// prepared delegation for that tool call and blocks the spawn (exit 2) when the claim is refused. It
// never hangs the agent: with Redis down the event is spooled locally; with no worker it stays
// queued; in both cases the hook says so.
//
// Output contract (docs/hooks.md "Output contract"): stdout is empty, or, when the user should know
// something (event spooled or queued with no worker), the client's notice (both
// clients: `{"systemMessage": "baton: …"}`); the same text goes to stderr. Exit 0: recorded, queued
// or spooled; exit 1: invalid input or an event baton refuses (a non-blocking error in both
// clients); exit 2 only on PreToolUse, with the reason on stderr (Claude Code and Codex block the
// tool call and show the reason to the model; Copilot CLI gets its `denial` on stdout, exit 0). Never 2 on SubagentStart/Stop: Claude Code would keep a
// stopping subagent running. The orchestration result stays in the job (dashboard, `baton runs`);
// `verbose` (BATON_HOOK_VERBOSE=1) waits for it and prints it on stderr.

export { HOOK_INPUT_LIMIT };
export type { HookRun };

export type HookRequest = Readonly<{
  client: string | undefined;
  /** `--event`: overrides the payload's event name. */
  event?: string;
  /** `--repo`: else the payload's `cwd`, else `cwd`. */
  repo?: string;
  redis?: string;
  budgetMs: number;
  verbose: boolean;
  cwd: string;
  /** The delegation a headless client was started for (BATON_HEADLESS_RECEIPT), read by the CLI. */
  headless?: HeadlessSession | null;
}>;

/** Handles one hook event; `readInput` is called once the client is known (stdin, at most a little over the limit). */
export async function handleHook(request: HookRequest, readInput: () => Promise<Buffer>): Promise<HookRun> {
  const report = new HookReport();
  const adapter = request.client === undefined ? undefined : clientAdapter(request.client);
  if (!adapter) {
    report.say(`${HOOK_MESSAGES.client}\n`);
    return report.finish(1);
  }
  const client = adapter.id;
  const parsed = parseHookInput(await readInput());
  if (!parsed.ok) {
    report.say(`${parsed.message}\n`);
    return report.finish(1);
  }
  // In baton's field names (Copilot CLI's camelCase payload read as the others' snake_case).
  const input = { payload: adapter.hook.payload?.(parsed.payload) ?? parsed.payload };
  const decision = decideHook(client, input.payload, request.event, { headless: request.headless ?? null });
  if (decision.kind === 'ignore') return report.finish(0);
  if (decision.kind === 'error') {
    report.say(`${decision.message}\n`);
    return report.finish(1);
  }
  if (decision.kind === 'spawn-refused') {
    report.say(`${decision.reason}\n`);
    return blocked(report.finish(2), adapter.hook);
  }
  const start = request.repo ?? (firstText(input.payload.cwd) || request.cwd);
  const repository = repositoryOf(start);
  if (!repository) {
    report.say(`baton hook: ${start} is not inside a git repository; the event was not recorded\n`);
    return blocked(report.finish(decision.kind === 'spawn-check' ? 2 : 1), adapter.hook);
  }
  const { root } = repository;
  const isolated = decision.kind === 'event' ? isolationWorktree(adapter.hook, root, repository.main, decision.event) : null;
  if (isolated) {
    report.say(`${isolated}\n`);
    return report.finish(1, adapter.hook);
  }
  const problem = checkoutProblem(root);
  if (problem) {
    report.say(`baton hook: ${problem}; the event was not recorded\n`);
    return blocked(report.finish(decision.kind === 'spawn-check' ? 2 : 1), adapter.hook);
  }
  // Which Redis, resolved once here and handed down as it is (null: none configured).
  const queue = namedQueueConfig({ redisOption: request.redis, repoRoot: root })?.queue ?? null;
  const repo = repoIdentity(root);
  if (decision.kind === 'spawn-check') {
    // The spawning call's model, else the one the agent's own profile sets (agentModel.ts).
    const model = decision.model ?? profileModel(root, client, decision.nativeAgent);
    const claim = {
      root,
      repo,
      client,
      budgetMs: request.budgetMs,
      verbose: request.verbose,
      queue,
      ...decision,
      ...(model ? { model } : {}),
      sessionId: text(input.payload.session_id),
    };
    return blocked(report.finish(await claimSpawn(report, claim, noRedisAdvice(root)), adapter.hook), adapter.hook);
  }
  const pending = pendingDelegationOf(root, client);
  if (decision.headlessReceipt !== undefined && decision.headlessReceipt !== (pending?.id ?? null)) {
    // A headless reviewer whose delegation was released (timed out, aborted): its session is no child of anything.
    report.say(
      `baton: this session was started for delegation ${decision.headlessReceipt}, which is not the pending delegation of ${client} here; the event was not recorded\n`,
    );
    return report.finish(0, adapter.hook);
  }
  // Traces (docs/architecture.md "Traces"): only an OTLP endpoint in the environment loads anything.
  const tracesUrl = otlpTracesUrl(process.env);
  const spans = tracesUrl ? await import('./otlpSpan.ts') : null;
  const span = spans?.startHookSpan() ?? null;
  const envelope = envelopeFor(decision.event, repo, 'hook', nativeEventId(decision, pending?.id ?? null), new Date(), span?.traceparent);
  let exitCode: number;
  if (!queue) exitCode = await spoolUnconfigured(report, envelope);
  else {
    const outcome = await deliver(envelope, { queue, budgetMs: request.budgetMs }, { waitForResult: request.verbose });
    // The result goes to stderr, never stdout: stdout is the client's hook-output channel.
    if (outcome.stdout) report.say(`baton: ${outcome.stdout}`);
    if (outcome.stderr) report.notice(outcome.stderr);
    exitCode = outcome.exitCode;
  }
  if (spans && span && tracesUrl) {
    const body = spans.hookSpanRequest(
      span,
      { name: `baton.hook ${envelope.intent}`, endMs: performance.timeOrigin + performance.now(), ok: exitCode === 0 },
      {
        'baton.checkout': repo.id,
        'baton.client': client,
        'baton.intent': envelope.intent,
        'baton.event_id': envelope.eventId,
        'baton.task': pending?.taskId ?? envelope.taskRef,
        'baton.stage': pending?.stage,
        'baton.exit_code': exitCode,
      },
    );
    // A quarter of the budget at most; an unreachable collector never fails or holds up the event.
    const problem = await spans.postSpans(tracesUrl, body, Math.min(1_000, request.budgetMs / 4));
    if (problem && request.verbose) report.say(`baton: the hook's span was not exported to ${tracesUrl}: ${problem}\n`);
  }
  return report.finish(exitCode, adapter.hook);
}

/**
 * A lifecycle subagent's start or stop from the worktree its client made for it alone (Claude Code's
 * `isolation: "worktree"`: `ClientHook.childWorktree`, docs/clients.md "Worktree isolation"),
 * which its PreToolUse hook should have refused (not installed there, or it failed): not a task's
 * checkout, so the event is not queued there; why, for the user. Null for any other checkout (a whole
 * session in `claude --worktree` runs in a worktree of its own, named otherwise).
 */
function isolationWorktree(
  hook: ClientHook,
  root: string,
  main: string | null,
  event: { intent: string; childId?: string },
): string | null {
  if (!hook.childWorktree || !main || !event.childId || (event.intent !== 'hook-start' && event.intent !== 'hook-stop')) return null;
  if (root !== path.join(main, ...hook.childWorktree(event.childId))) return null;
  return `baton: DELEGATION_ISOLATION_FORBIDDEN: subagent ${event.childId} runs in the worktree the client made for it (${root}), not in the task's checkout ${main}: its stage cannot be measured there and the event was not recorded. Its spawn should have been refused at PreToolUse (check that baton's PreToolUse hook is installed: baton doctor). Stop it and spawn it without isolation.`;
}

/**
 * A blocked spawn (exit 2, the reason on stderr) as the client takes it: a client with a `denial`
 * output (Copilot CLI) gets the reason on stdout with exit 0, which it shows the model.
 */
function blocked(run: HookRun, hook: ClientHook): HookRun {
  if (run.exitCode !== 2 || !hook.denial) return run;
  return { ...run, exitCode: 0, stdout: hook.denial(run.stderr.trim()) };
}

/**
 * The one pending delegation of `client` in the repository (its receipt id, and for the hook's span
 * its task and stage), read without validation (the hook's fast path loads no schema library); null
 * when there is none or several. Only an input to the event id and the span: the worker validates
 * everything it applies.
 */
export function pendingDelegationOf(root: string, client: string): { id: string; taskId?: string; stage?: string } | null {
  const found: Array<{ id: string; taskId?: string; stage?: string }> = [];
  for (const { dir } of activeTaskDirs(root)) {
    try {
      const pending = record(record(JSON.parse(fs.readFileSync(runFilePath(dir), 'utf8'))).pendingDelegation);
      if (pending.client === client && typeof pending.id === 'string')
        found.push({ id: pending.id, taskId: text(pending.taskId), stage: text(pending.stage) });
    } catch {
      // No run, or not readable: the worker reports it.
    }
  }
  return found.length === 1 ? found[0]! : null;
}

function noRedisAdvice(root: string): string {
  return `no Redis is configured for ${root}: no --redis, no endpoint recorded by a worker (.git/baton/endpoint.json) and no REDIS_URL. Start the repository's worker (baton start, or baton worker --repo ${root}) or set REDIS_URL for the agent`;
}

/** Nothing says which Redis the worker uses: guessing could feed a queue nobody serves (docs/hooks.md "Which Redis"). */
async function spoolUnconfigured(report: HookReport, envelope: JobEnvelope): Promise<number> {
  const { spoolEvent } = await import('../queue/spool.ts');
  const file = spoolEvent(envelope.repo.root, envelope);
  report.notice(
    `baton: WARNING: ${noRedisAdvice(envelope.repo.root)}. The ${envelope.intent} event was spooled to ${file}; it is applied once a worker runs.`,
  );
  return 0;
}
