import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BATON_BIN } from './processes.ts';

// Long-running `baton` commands (dashboard, start, worker --dashboard) for the ops tests, and a
// headless Chromium for the dashboard test.

export type ServiceProcess = {
  child: ChildProcess;
  output(): string;
  /** The first match of `pattern` in the output so far. */
  match(pattern: RegExp): RegExpMatchArray | null;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
};

/** Starts `baton <args>` and resolves once `ready` matches its output (rejects if it exits first). */
export async function startBaton(
  args: readonly string[],
  options: {
    env: NodeJS.ProcessEnv;
    cwd?: string;
    ready: RegExp;
    timeoutMs?: number /** Another runtime (Bun, Deno) and its arguments. */;
    command?: string;
    commandArgs?: readonly string[];
  },
): Promise<ServiceProcess> {
  const child = spawn(options.command ?? process.execPath, [...(options.commandArgs ?? []), BATON_BIN, ...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`baton ${args.join(' ')} not ready within ${options.timeoutMs ?? 60_000} ms:\n${output}`)),
      options.timeoutMs ?? 60_000,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (options.ready.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`baton ${args.join(' ')} exited with ${code} before it was ready:\n${output}`));
    });
  });
  try {
    await ready;
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    child,
    exited,
    output: () => output,
    match: (pattern) => output.match(pattern),
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
  };
}

export const URL_PATTERN = /dashboard:? +(http:\/\/[^\s/]+\/)/;

export function dashboardUrlOf(service: ServiceProcess): string {
  const found = service.match(URL_PATTERN);
  if (!found?.[1]) throw new Error(`no dashboard URL in:\n${service.output()}`);
  return found[1];
}

/** The queues the dashboard at `url` lists (its api/queues). */
export async function dashboardQueues(url: string): Promise<{ name: string; displayName: string; counts: Record<string, number> }[]> {
  return (
    (await (await fetch(new URL('api/queues', url))).json()) as {
      queues: { name: string; displayName: string; counts: Record<string, number> }[];
    }
  ).queues;
}

export const CHROMIUM = '/usr/bin/chromium';

/** This machine: 127.0.0.0/8 (a test binds 127.0.0.2 as a non-loopback-name address), localhost, ::1. */
const isThisMachine = (hostname: string): boolean =>
  /^127\.\d+\.\d+\.\d+$/.test(hostname) || ['localhost', '[::1]', '::1'].includes(hostname);

/** Headless Debian Chromium through playwright-core, with a fresh profile; a request to another host is refused and recorded. */
export async function launchBrowser() {
  if (!fs.existsSync(CHROMIUM))
    throw new Error(
      `the dashboard test needs Chromium at ${CHROMIUM}: run \`bash scripts/setup.sh\` (installs redis-server, git and chromium)`,
    );
  const { chromium } = await import('playwright-core');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  // No request may leave the machine from the dashboard (docs/run-view.md "Nothing from other hosts"):
  // any request to another host is refused and recorded, for the test to fail on.
  const foreign: string[] = [];
  await context.route(
    (url) => !isThisMachine(url.hostname),
    (route) => {
      foreign.push(route.request().url());
      return route.abort();
    },
  );
  // What the dashboard's Content-Security-Policy refused never reaches the route: the browser says it on the console.
  context.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) foreign.push(`refused by the policy: ${message.text()}`);
  });
  return {
    context,
    /** The requests the pages made (or tried, refused by the policy) to another host than the loopback one they were served from. */
    foreignRequests: (): string[] => [...foreign],
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}
