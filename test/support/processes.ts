import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Running the real `baton` (the built bundle) as child processes: the CLI, hooks and workers.

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BATON_BIN = path.join(PROJECT_ROOT, 'bin', 'baton.mjs');

/** Deno's module cache, kept outside the checkout. */
export const DENO_DIR = process.env.DENO_DIR ?? path.join(os.tmpdir(), 'baton-deno-cache');

export type Runtime = Readonly<{ command: string; args: readonly string[] }>;

/** The runtimes the bundle runs on (docs/architecture.md "Runtimes"); Bun and Deno are devDependencies. */
export const RUNTIMES: Readonly<Record<'node' | 'bun' | 'deno', Runtime>> = {
  node: { command: process.execPath, args: [] },
  bun: { command: path.join(PROJECT_ROOT, 'node_modules', '.bin', 'bun'), args: [] },
  deno: { command: path.join(PROJECT_ROOT, 'node_modules', '.bin', 'deno'), args: ['run', '--allow-all', '--quiet'] },
};

/**
 * For a test's hook that must report its event's result: BATON_HOOK_VERBOSE=1 makes it wait for the
 * result within its budget, and this budget is one no loaded machine reaches, so the test never
 * races the hook's deadline (the hook returns as soon as the result is there).
 */
export const HOOK_WAITS_FOR_RESULT: Readonly<Record<string, string>> = { BATON_HOOK_VERBOSE: '1', BATON_HOOK_BUDGET_MS: '60000' };

export type CliRun = { code: number | null; stdout: string; stderr: string; ms: number };

export type BatonEnv = { redisUrl: string; prefix: string };

export function batonEnv(env: BatonEnv, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, REDIS_URL: env.redisUrl, BATON_PREFIX: env.prefix, ...extra };
}

/** Runs a command to completion; `input` goes to stdin. */
export type RunOptions = {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string;
  timeoutMs?: number;
  /** Sends the process SIGINT when it aborts (a user's Ctrl-C); the run still resolves with its exit. */
  interrupt?: AbortSignal;
};

export function runProcess(command: string, args: readonly string[], options: RunOptions = {}): Promise<CliRun> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    options.interrupt?.addEventListener('abort', () => child.kill('SIGINT'), { once: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

export function runBaton(args: readonly string[], options: RunOptions = {}): Promise<CliRun> {
  return runProcess(process.execPath, [BATON_BIN, ...args], options);
}

/** Parses the one-line JSON a `baton task` prints. */
export function jsonOf(run: CliRun): Record<string, any> {
  const line = run.stdout.trim().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(line) as Record<string, any>;
  } catch {
    throw new Error(`not JSON (exit ${run.code}): ${run.stdout}\nstderr: ${run.stderr}`);
  }
}

export type WorkerProcess = { child: ChildProcess; output(): string; stop(signal?: NodeJS.Signals): Promise<number | null> };

/**
 * Starts `baton worker` (or another runtime running the same bundle) and waits for its ready line.
 * With `mayExitBeforeReady` (a worker with a failpoint, started while jobs wait), its exit before
 * that line is an outcome rather than an error: it may reach its failpoint before it logs ready.
 */
export async function startWorkerProcess(
  args: readonly string[],
  options: {
    env: NodeJS.ProcessEnv;
    command?: string;
    commandArgs?: readonly string[];
    cwd?: string;
    readyTimeoutMs?: number;
    mayExitBeforeReady?: boolean;
  },
): Promise<WorkerProcess> {
  const command = options.command ?? process.execPath;
  const child = spawn(command, [...(options.commandArgs ?? []), BATON_BIN, 'worker', ...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`worker not ready within ${options.readyTimeoutMs ?? 60_000} ms:\n${output}`)),
      options.readyTimeoutMs ?? 60_000,
    );
    const check = () => {
      if (output.includes(' ready:')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      if (options.mayExitBeforeReady) resolve();
      else reject(new Error(`worker exited with ${code} before it was ready:\n${output}`));
    });
  }).catch((error) => {
    child.kill('SIGKILL');
    throw error;
  });
  return {
    child,
    output: () => output,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
  };
}
