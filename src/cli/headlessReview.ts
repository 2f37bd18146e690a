import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { batonPath } from '../base/batonDir.ts';
import { clientAdapter } from '../clients/registry.ts';
import type { ClientAdapter } from '../clients/adapter.ts';
import type { ClientHeadless } from '../clients/headless.ts';
import type { ErrorCode } from '../core/errorCodes.ts';
import type { LifecycleEvent } from '../core/events.ts';
import { lifecycleAgentName } from '../core/receipts.ts';
import { failed, payloadInvalid } from '../core/results.ts';
import type { DelegationReceipt, OrchestrationResult, WorkspaceFingerprinter } from '../core/types.ts';
import { frontmatterModel } from '../hooks/agentModel.ts';
import { repoIdentity } from '../queue/checkoutId.ts';
import { lookupRepoRoot, printJson } from './common.ts';
import { clientProblem, resolvedCommand } from './headlessClient.ts';
import { duration } from './options.ts';
import { applyThroughQueue } from './task.ts';
import type { TaskCommonOptions } from './taskArgs.ts';

// `baton task <ref> review --client <id>` and `baton task <ref> wait` (docs/clients.md "A reviewer
// from another vendor"): the review stage delegated to another installed client, started headless by
// baton in this checkout. The delegation is prepared for that client as any other; the process gets
// BATON_HEADLESS_RECEIPT in its environment, which its own session-level hooks (SessionStart, Stop)
// carry, so the client's hooks activate and seal the receipt (src/hooks/decide.ts). This command
// runs the process in its own process group and waits on the run's state (never a sleep of a fixed
// length): a sealed review, a paused run, the process gone without a review, or the timeout. It
// stops the reviewer (the whole group) on a timeout and on Ctrl-C, and releases the delegation
// (abort) when no review was sealed; the reviewer's output is kept under <gitdir>/baton/reviewers/.

/** baton's own commands of `baton task`, beside the lifecycle intents. */
export const HEADLESS_COMMANDS = ['review', 'wait'] as const;

export const DEFAULT_REVIEW_TIMEOUT_MS = 10 * 60_000;
/** After the reviewer exits, how long its Stop hook's event has to reach the run. */
const SETTLE_MS = 20_000;
const POLL_MS = 250;
const KILL_GRACE_MS = 3_000;

export const HEADLESS_USAGE = `Usage: baton task <task-ref> review --client <id> [--model M] [--timeout 10m] [--repo R] [--redis URL]
       baton task <task-ref> wait [--timeout 10m] [--repo R]

review: prepare the routed review for another installed client and run it headless as the reviewer
(claude -p, codex exec) in this checkout; waits until the review is sealed (exit 0), the run pauses,
the reviewer exits without a review or the timeout passes (exit 1: the reviewer is stopped, the
delegation released, its output kept under <gitdir>/baton/reviewers/).
wait: block until the task's pending delegation is sealed or released, or its run pauses.
`;

const noFingerprints: WorkspaceFingerprinter = {
  capture: () => Promise.reject(new Error('read-only intents do not capture fingerprints')),
  diff: () => Promise.reject(new Error('read-only intents do not capture fingerprints')),
};

type Parsed = { taskRef: string; command: 'review' | 'wait'; flags: Map<string, string> };

function parse(argv: readonly string[]): Parsed | { error: string } {
  const [taskRef, command, ...rest] = argv;
  if (!taskRef || (command !== 'review' && command !== 'wait')) return { error: 'task ref and review or wait are required' };
  const known = command === 'review' ? ['client', 'model', 'timeout', 'repo', 'redis'] : ['timeout', 'repo'];
  const flags = new Map<string, string>();
  for (let index = 0; index < rest.length; index += 2) {
    const name = rest[index]!;
    const value = rest[index + 1];
    if (!name.startsWith('--') || !known.includes(name.slice(2))) return { error: `unknown option '${name}' of ${command}` };
    if (value === undefined) return { error: `option '${name}' requires a value` };
    flags.set(name.slice(2), value);
  }
  if (command === 'review' && !flags.has('client')) return { error: "review requires '--client'" };
  return { taskRef, command, flags };
}

export async function runHeadless(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HEADLESS_USAGE);
    return 0;
  }
  const parsed = parse(argv);
  let timeoutMs = DEFAULT_REVIEW_TIMEOUT_MS;
  if (!('error' in parsed) && parsed.flags.has('timeout')) {
    try {
      timeoutMs = duration(parsed.flags.get('timeout')!);
    } catch (error) {
      printJson(payloadInvalid(`--timeout ${(error as Error).message}`));
      return 2;
    }
  }
  if ('error' in parsed) {
    printJson(payloadInvalid(parsed.error));
    process.stderr.write(HEADLESS_USAGE);
    return 2;
  }
  const root = lookupRepoRoot(parsed.flags.get('repo'));
  if (!root.ok) {
    printJson(failed(root.code, root.message));
    return 1;
  }
  const result =
    parsed.command === 'wait'
      ? await waitForDelegation(root.root, parsed.taskRef, timeoutMs)
      : await review(root.root, parsed.taskRef, parsed.flags, timeoutMs);
  printJson(result);
  return result.status === 'failed' ? 1 : 0;
}

async function status(repoRoot: string, taskRef: string): Promise<OrchestrationResult> {
  const { applyEvent } = await import('../core/engine.ts');
  return (await applyEvent({ intent: 'status', taskRef } as LifecycleEvent, { repoRoot, fingerprinter: noFingerprints })).result;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a pending delegation is settled for a waiter: sealed, gone (consumed, aborted, released) or its run not running. */
function settled(result: OrchestrationResult, receiptId: string | null): boolean {
  if (result.status === 'failed' || !result.run) return true;
  const pending = result.run.pendingDelegation;
  if (!pending || (receiptId !== null && pending.id !== receiptId)) return true;
  return pending.status === 'sealed' || result.run.status !== 'running';
}

/** `wait`: the task's status once its pending delegation is settled; BATON_TIMEOUT after `timeoutMs`. */
export async function waitForDelegation(repoRoot: string, taskRef: string, timeoutMs: number): Promise<OrchestrationResult> {
  const first = await status(repoRoot, taskRef);
  const receiptId = first.run?.pendingDelegation?.id ?? null;
  const deadline = Date.now() + timeoutMs;
  for (let current = first; ; current = await status(repoRoot, taskRef)) {
    if (settled(current, receiptId)) return current;
    if (Date.now() > deadline) {
      return failed(
        'BATON_TIMEOUT',
        `delegation ${receiptId} is still ${current.run?.pendingDelegation?.status} after ${timeoutMs} ms`,
        current.taskId,
      );
    }
    await sleep(POLL_MS);
  }
}

/** The reviewer profile as installed for the client: its instructions and model, or null when it is not installed. */
function installedReviewer(repoRoot: string, adapter: ClientAdapter): { instructions: string; model: string | null } | null {
  const file = path.join(repoRoot, adapter.install.agentFile(lifecycleAgentName('reviewer')));
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  if (file.endsWith('.toml')) {
    // baton's own TOML profile: a literal multi-line string (src/clients/codex/index.ts agentProfile).
    const body = /developer_instructions\s*=\s*'''\r?\n([\s\S]*?)'''/.exec(text);
    const model = /^model\s*=\s*"([^"]*)"/m.exec(text);
    return body ? { instructions: body[1]!, model: model?.[1] || null } : null;
  }
  const body = text.replace(/^---\r?\n[\s\S]*?\r?\n---\r?\n/, '');
  return { instructions: body, model: frontmatterModel(text) };
}

/** The command line of the installed hooks (`'<node>' '<bin>'` or `baton`), from the client's hooks file. */
function installedBaton(repoRoot: string, adapter: ClientAdapter): string | null {
  try {
    const settings = JSON.parse(fs.readFileSync(path.join(repoRoot, adapter.install.settingsFile), 'utf8')) as {
      hooks?: Record<string, Array<{ hooks?: Array<{ command?: unknown }> }>>;
    };
    for (const group of Object.values(settings.hooks ?? {}).flat()) {
      for (const entry of group.hooks ?? []) {
        const command = typeof entry.command === 'string' ? entry.command : '';
        const at = command.lastIndexOf(` hook ${adapter.id}`);
        if (at > 0) return command.slice(0, at);
      }
    }
  } catch {
    return null;
  }
  return null;
}

/** The reviewer's one task: which review of which task, as an orchestrator would spawn it. */
function reviewPrompt(receipt: DelegationReceipt): string {
  return `Run ${receipt.stage} for task ${receipt.taskId}, round ${receipt.round}; your artifact is ${receipt.artifact}. You are the reviewer of delegation ${receipt.id}, started headless by baton.`;
}

type Launched = { pid: number; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>; exit: { done: boolean } };

function launch(command: readonly string[], args: readonly string[], repoRoot: string, receiptId: string, log: string): Launched {
  fs.mkdirSync(path.dirname(log), { recursive: true });
  const fd = fs.openSync(log, 'a');
  const env = { ...process.env, BATON_HEADLESS_RECEIPT: receiptId, BATON_HEADLESS_ROLE: 'reviewer' };
  // Its own process group, so that stopping it stops everything it started.
  const child = spawn(command[0]!, [...command.slice(1), ...args], { cwd: repoRoot, env, stdio: ['ignore', fd, fd], detached: true });
  fs.closeSync(fd);
  const exit = { done: false };
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('error', (error) => {
      fs.appendFileSync(log, `baton: could not start ${command[0]}: ${error.message}\n`);
      exit.done = true;
      resolve({ code: null, signal: null });
    });
    child.on('exit', (code, signal) => {
      exit.done = true;
      resolve({ code, signal });
    });
  });
  return { pid: child.pid ?? -1, exited, exit };
}

/** SIGTERM to the reviewer's process group, SIGKILL after a grace; resolves once it is gone. */
async function stopGroup(launched: Launched): Promise<void> {
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-launched.pid, signal);
    } catch {
      // already gone
    }
  };
  if (launched.pid <= 0) return;
  signalGroup('SIGTERM');
  const killed = await Promise.race([launched.exited.then(() => true), sleep(KILL_GRACE_MS).then(() => false)]);
  // Whatever it left behind in its group goes too.
  signalGroup('SIGKILL');
  if (!killed) await Promise.race([launched.exited, sleep(KILL_GRACE_MS)]);
}

async function release(taskId: string, reason: string, options: TaskCommonOptions): Promise<void> {
  const event = { intent: 'abort', taskRef: taskId, reason } as LifecycleEvent;
  await applyThroughQueue(event, repoIdentity(options.repo!), options);
}

async function review(repoRoot: string, taskRef: string, flags: Map<string, string>, timeoutMs: number): Promise<OrchestrationResult> {
  const client = flags.get('client')!;
  const adapter = clientAdapter(client);
  const headless: ClientHeadless | undefined = adapter?.headless;
  if (!adapter || !headless) {
    return failed(
      'BATON_CLIENT_CANNOT_REVIEW',
      `client '${client}' cannot be started headless as a reviewer; baton starts claude-code (claude -p) and codex (codex exec)`,
    );
  }
  // Before anything is prepared: the client is installed, logged in, and wired in this repository.
  const problem = clientProblem(adapter.id, headless, process.env);
  if (problem) return failed(problem.code, problem.message);
  const profile = installedReviewer(repoRoot, adapter);
  const baton = installedBaton(repoRoot, adapter);
  if (!profile || !baton) {
    return failed(
      'BATON_CLIENT_NOT_WIRED',
      `${adapter.displayName} is not set up in ${repoRoot} (no baton hooks in ${adapter.install.settingsFile} or no ${adapter.install.agentFile(lifecycleAgentName('reviewer'))}); run 'baton install-hooks ${adapter.id} --trust' (or 'baton init --client ${adapter.id} --trust')`,
    );
  }
  if (headless.sessionHooksInstalled && !installedSessionHooks(repoRoot, adapter)) {
    return failed(
      'BATON_CLIENT_NOT_WIRED',
      `${adapter.install.settingsFile} has no baton SessionStart and Stop hooks (installed by an older baton); run 'baton install-hooks ${adapter.id} --trust' again`,
    );
  }
  const routed = await status(repoRoot, taskRef);
  if (routed.status === 'failed') return routed;
  const { applyEvent } = await import('../core/engine.ts');
  const route = (await applyEvent({ intent: 'route', taskRef } as LifecycleEvent, { repoRoot, fingerprinter: noFingerprints })).result;
  if (route.status === 'failed') return route;
  if (route.next && route.next.role !== 'reviewer') {
    return failed(
      'BATON_HEADLESS_NOT_REVIEW',
      `the next stage of task ${route.taskId} is ${route.next.stage}, not a review; only a review is delegated to another client's headless session`,
      route.taskId,
    );
  }
  const options: TaskCommonOptions = { repo: repoRoot, worker: 'queue', ...(flags.has('redis') ? { redis: flags.get('redis')! } : {}) };
  const model = flags.get('model');
  const prepareEvent = { intent: 'prepare', taskRef, client: adapter.id, ...(model ? { requestedModel: model } : {}) } as LifecycleEvent;
  const prepared = (await applyThroughQueue(prepareEvent, repoIdentity(repoRoot), options)) as OrchestrationResult;
  if (prepared.status === 'failed' || !prepared.run?.pendingDelegation) return prepared;
  const receipt = prepared.run.pendingDelegation;
  const taskId = prepared.taskId!;
  const log = path.join(batonPath(repoRoot, 'reviewers'), `${receipt.id}.log`);
  const command = resolvedCommand(adapter.id, headless, process.env)!;
  const args = headless.args({
    prompt: reviewPrompt(receipt),
    instructions: profile.instructions,
    model: model ?? profile.model ?? receipt.requestedModel,
    hookCommand: (phase) => `${baton} hook ${adapter.id} --event session-${phase}`,
  });
  const launched = launch(command, args, repoRoot, receipt.id, log);
  const interrupted = { signal: null as NodeJS.Signals | null };
  const onSignal = (signal: NodeJS.Signals) => {
    interrupted.signal = signal;
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await watch({ repoRoot, taskId, receipt, launched, log, timeoutMs, interrupted, options, client: adapter.id });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

type Watch = {
  repoRoot: string;
  taskId: string;
  receipt: DelegationReceipt;
  launched: Launched;
  log: string;
  timeoutMs: number;
  interrupted: { signal: NodeJS.Signals | null };
  options: TaskCommonOptions;
  client: string;
};

async function watch(w: Watch): Promise<OrchestrationResult> {
  const deadline = Date.now() + w.timeoutMs;
  let exitedAt: number | null = null;
  const kept = `its output is kept in ${w.log}`;
  const giveUp = async (code: 'BATON_REVIEWER_TIMEOUT' | 'BATON_REVIEWER_EXITED' | 'BATON_REVIEWER_INTERRUPTED', why: string) => {
    await stopGroup(w.launched);
    const current = await status(w.repoRoot, w.taskId);
    const pending = current.run?.pendingDelegation;
    // Released only while it is still this review's and unsealed (a sealed review stays for advance).
    if (pending?.id === w.receipt.id && pending.status !== 'sealed') await release(w.taskId, `${why}; ${kept}`, w.options);
    return failed(code, `${why}; baton stopped it and released delegation ${w.receipt.id}; ${kept}`, w.taskId);
  };
  for (;;) {
    if (w.interrupted.signal) {
      return giveUp('BATON_REVIEWER_INTERRUPTED', `the headless ${w.client} reviewer was interrupted (${w.interrupted.signal})`);
    }
    const current = await status(w.repoRoot, w.taskId);
    const pending = current.run?.pendingDelegation;
    if (current.status !== 'failed' && current.run && pending?.id === w.receipt.id && pending.status === 'sealed') {
      // The review is sealed: the reviewer's Stop was its last act; no process of it outlives this command.
      await Promise.race([w.launched.exited, sleep(KILL_GRACE_MS)]);
      await stopGroup(w.launched);
      return { ...current, review: { client: w.client, receipt: w.receipt.id, log: w.log } } as OrchestrationResult;
    }
    if (current.status === 'failed' || !current.run || pending?.id !== w.receipt.id || current.run.status !== 'running') {
      await stopGroup(w.launched);
      const pause = current.run?.pause;
      if (pause)
        return failed(pause.code as ErrorCode, `${pause.message}; the headless ${w.client} reviewer was stopped; ${kept}`, w.taskId);
      return current.status === 'failed'
        ? current
        : failed('BATON_REVIEWER_EXITED', `delegation ${w.receipt.id} was settled without a sealed review; ${kept}`, w.taskId);
    }
    if (w.launched.exit.done && exitedAt === null) exitedAt = Date.now();
    if (exitedAt !== null && Date.now() - exitedAt > SETTLE_MS) {
      const { code, signal } = await w.launched.exited;
      return giveUp(
        'BATON_REVIEWER_EXITED',
        `the headless ${w.client} reviewer exited (${signal ?? `code ${code}`}) without a sealed review (delegation ${pending.status})`,
      );
    }
    if (Date.now() > deadline) {
      return giveUp('BATON_REVIEWER_TIMEOUT', `the headless ${w.client} reviewer did not finish within ${w.timeoutMs} ms`);
    }
    await sleep(POLL_MS);
  }
}

/** Whether the client's hooks file has baton's session hooks (Codex: installed, trusted with the others). */
function installedSessionHooks(repoRoot: string, adapter: ClientAdapter): boolean {
  try {
    const text = fs.readFileSync(path.join(repoRoot, adapter.install.settingsFile), 'utf8');
    return text.includes('--event session-start') && text.includes('--event session-stop');
  } catch {
    return false;
  }
}
