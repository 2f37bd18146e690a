import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { ModelServer } from './modelServer.ts';
import { BATON_BIN, PROJECT_ROOT } from './processes.ts';

// The real agent clients, pinned in package.json (newest tested and oldest supported of each),
// run headless against the scripted model server. Everything that would reach out is turned off;
// as root, each client runs in a private network namespace with only loopback (`unshare --net`),
// where 127.0.0.1:<port> is forwarded to the model server's unix socket.

export type ClientName = 'claude-code' | 'codex' | 'copilot-cli';
/** One pinned client: `command` starts it (argv before the client's own arguments). */
export type ClientVersion = { client: ClientName; version: string; packageName: string; command: string[]; label: string };

const require = createRequire(path.join(PROJECT_ROOT, 'package.json'));

function packageDir(name: string, from?: string): string {
  const resolved = require.resolve(`${name}/package.json`, from ? { paths: [from] } : undefined);
  return path.dirname(resolved);
}

function platformKey(): string {
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  return `linux-${arch}`;
}

/**
 * How to start a Claude Code package: up to 2.1.x it shipped `cli.js` (run with this Node); later
 * releases ship a native binary in a platform package (used directly, whether or not the
 * wrapper's postinstall copied it over its `bin/claude.exe` placeholder).
 */
function claudeCommand(packageName: string): string[] {
  const wrapper = packageDir(packageName);
  const cli = path.join(wrapper, 'cli.js');
  if (fs.existsSync(cli)) return [process.execPath, cli];
  return [path.join(packageDir(`@anthropic-ai/claude-code-${platformKey()}`, wrapper), 'claude')];
}

/** Codex's own launcher (it puts its bundled `rg` on PATH and runs the native binary). */
function codexCommand(packageName: string): string[] {
  return [process.execPath, path.join(packageDir(packageName), 'bin', 'codex.js')];
}

/** Copilot CLI's native binary: the main export of the platform package its wrapper depends on. */
function copilotCommand(packageName: string): string[] {
  return [require.resolve(`@github/copilot-${platformKey()}`, { paths: [packageDir(packageName)] })];
}

function installedVersion(packageName: string): string {
  return (JSON.parse(fs.readFileSync(path.join(packageDir(packageName), 'package.json'), 'utf8')) as { version: string }).version;
}

function describe(client: ClientName, packageName: string): ClientVersion {
  const version = installedVersion(packageName);
  const command =
    client === 'claude-code' ? claudeCommand(packageName) : client === 'codex' ? codexCommand(packageName) : copilotCommand(packageName);
  return { client, version, packageName, command, label: `${client} ${version}` };
}

/**
 * Every pinned version of a client: the newest tested first, then the oldest supported. Copilot CLI
 * has one: 1.0.102 is the first release whose subagentStart names the child (docs/clients.md).
 */
export function clientVersions(client: ClientName): ClientVersion[] {
  if (client === 'claude-code') return [describe(client, '@anthropic-ai/claude-code'), describe(client, 'claude-code-oldest')];
  if (client === 'codex') return [describe(client, '@openai/codex'), describe(client, 'codex-oldest')];
  return [describe(client, '@github/copilot')];
}

// ---------------------------------------------------------------------------------------------
// Network isolation

export type Isolation = { kind: 'netns' } | { kind: 'loopback'; why: string };

let isolation: Isolation | null = null;

/**
 * A private network namespace (root, unshare, ip). Never a quiet fallback: when one cannot be made
 * the agent tests fail saying what to install, unless BATON_AGENT_TESTS_NETNS=0 asks for plain
 * loopback (then mainPath's isolation test is reported as skipped, by name).
 */
export function networkIsolation(): Isolation {
  if (isolation) return isolation;
  if (process.env.BATON_AGENT_TESTS_NETNS === '0') return (isolation = { kind: 'loopback', why: 'BATON_AGENT_TESTS_NETNS=0' });
  const probe = spawnSync('unshare', ['--net', '--', 'ip', 'link', 'set', 'lo', 'up'], { timeout: 5_000, stdio: 'pipe', encoding: 'utf8' });
  isolation =
    probe.status === 0
      ? { kind: 'netns' }
      : {
          kind: 'loopback',
          why: `unshare --net is not available here (${(probe.stderr || probe.error?.message || `exit ${probe.status}`).trim()})`,
        };
  if (isolation.kind === 'loopback')
    throw new Error(
      `the agent tests run the clients in a private network namespace: ${isolation.why}; run as root with unshare (apt-get install util-linux) and ip (apt-get install iproute2), or set BATON_AGENT_TESTS_NETNS=0 for plain loopback`,
    );
  return isolation;
}

// ---------------------------------------------------------------------------------------------
// Running a client

export type ClientRun = {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  timedOut: boolean;
};

/** A directory with a `baton` command (the built bundle on this Node), to put first on PATH. */
export function batonShimDir(root: string): string {
  const dir = path.join(root, 'bin');
  fs.mkdirSync(dir, { recursive: true });
  const shim = path.join(dir, 'baton');
  fs.writeFileSync(shim, `#!/bin/sh\nexec '${process.execPath}' '${BATON_BIN}' "$@"\n`, { mode: 0o755 });
  return dir;
}

/**
 * A user's environment for `baton init` and the clients' per-user files, all under `work`: the
 * clients' homes (CODEX_HOME, CLAUDE_CONFIG_DIR, COPILOT_HOME) and `baton` first on PATH.
 */
export function userEnvIn(work: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    CODEX_HOME: path.join(work, 'codex-home'),
    CLAUDE_CONFIG_DIR: path.join(work, 'claude-home'),
    COPILOT_HOME: path.join(work, 'copilot-home'),
    PATH: `${batonShimDir(path.join(work, 'shims'))}:${process.env.PATH}`,
  };
}

/** Variables that turn off everything in the clients that would reach out. */
export const QUIET_ENV: Readonly<Record<string, string>> = {
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_BUG_COMMAND: '1',
  DISABLE_NON_ESSENTIAL_MODEL_CALLS: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: '1',
  CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: '1',
  CLAUDE_CODE_DISABLE_TERMINAL_TITLE: '1',
  CLAUDE_CODE_ENABLE_TELEMETRY: '0',
  CODEX_DISABLE_UPDATE_CHECK: '1',
  // Copilot CLI: no GitHub sign-in, telemetry, web tools or update (BYOK needs none of them).
  COPILOT_OFFLINE: 'true',
  COPILOT_AUTO_UPDATE: 'false',
  NO_UPDATE_NOTIFIER: '1',
  NO_PROXY: '127.0.0.1,localhost',
};

// Variables of the machine that must not leak into a client under test (its own auth, proxies,
// and baton's own settings: a test world gives the agent exactly the ones it means to).
const DROPPED =
  /^(ANTHROPIC_|CLAUDE|CODEX_|COPILOT_|GH_TOKEN$|GITHUB_TOKEN$|GH_HOST$|OPENAI_|OTEL_|HTTPS?_PROXY|https?_proxy|ALL_PROXY|all_proxy|REDIS_URL$|BATON_)/;

export function clientEnv(base: NodeJS.ProcessEnv, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) if (!DROPPED.test(key)) env[key] = value;
  return { ...env, ...QUIET_ENV, ...extra };
}

export function runClientProcess(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; server: ModelServer; timeoutMs: number; input?: string; signal?: AbortSignal },
): Promise<ClientRun> {
  const iso = networkIsolation();
  const port = new URL(options.server.url).port;
  const [file, argv] =
    iso.kind === 'netns'
      ? [
          'unshare',
          [
            '--net',
            '--',
            process.execPath,
            path.join(PROJECT_ROOT, 'test', 'support', 'netnsExec.mjs'),
            port,
            options.server.socket,
            command,
            ...args,
          ],
        ]
      : [command, [...args]];
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv as string[], { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const killGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // already gone
      }
    };
    // A test that kills the client (a parent that dies mid-turn) kills all of it: no handler runs.
    const onAbort = () => killGroup('SIGKILL');
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup('SIGTERM');
      setTimeout(() => killGroup('SIGKILL'), 2_000).unref();
    }, options.timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      killGroup('SIGKILL'); // whatever the client left behind in its group
      resolve({ code, signal, stdout, stderr, ms: performance.now() - started, timedOut });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

// ---------------------------------------------------------------------------------------------
// Claude Code

/**
 * A client's own home for one test world: `HOME` (Claude Code keeps `~/.claude.json` and
 * `~/.claude/` there) and, for Codex, `CODEX_HOME` = `~/.codex` with the scripted model provider
 * in its `config.toml`. `baton install-hooks <client> --trust` writes its trust entries here,
 * and the client runs with it.
 */
export type ClientHome = { dir: string; env: Record<string, string> };

export function makeClientHome(version: ClientVersion, server: ModelServer): ClientHome {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `baton-${version.client}-home-`));
  if (version.client === 'claude-code') {
    return {
      dir,
      env: {
        HOME: dir,
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: 'sk-ant-scripted-test',
        ANTHROPIC_MODEL: CLAUDE_MODEL,
        ANTHROPIC_SMALL_FAST_MODEL: CLAUDE_MODEL,
      },
    };
  }
  if (version.client === 'copilot-cli') {
    // BYOK: the scripted server's Responses API; no GitHub login in this mode.
    return {
      dir,
      env: {
        HOME: dir,
        COPILOT_HOME: path.join(dir, '.copilot'),
        COPILOT_PROVIDER_BASE_URL: `${server.url}/v1`,
        COPILOT_PROVIDER_API_KEY: 'sk-scripted-test',
        COPILOT_PROVIDER_WIRE_API: 'responses',
        COPILOT_MODEL: COPILOT_MODEL,
      },
    };
  }
  const codexHome = path.join(dir, '.codex');
  fs.mkdirSync(codexHome);
  fs.writeFileSync(path.join(codexHome, 'config.toml'), codexConfig(server));
  return { dir, env: { HOME: dir, CODEX_HOME: codexHome, SCRIPTED_API_KEY: 'sk-scripted-test' } };
}

export type ClientOptions = {
  version: ClientVersion;
  home: ClientHome;
  cwd: string;
  prompt: string;
  server: ModelServer;
  env: Record<string, string>;
  timeoutMs?: number;
  extraArgs?: readonly string[];
  signal?: AbortSignal;
  /** Codex: keep its session rollouts in $CODEX_HOME/sessions (the tests run it `--ephemeral` otherwise). */
  keepSessions?: boolean;
};

export const CLAUDE_MODEL = 'claude-sonnet-4-5';

function jsonLines(stdout: string): any[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line)];
      } catch {
        return [];
      }
    });
}

/** Runs the client's command with `args` after it, in the world's environment; its JSON-lines stdout as events. */
async function runWithArgs(options: ClientOptions, args: readonly string[]): Promise<ClientRun & { events: any[] }> {
  const env = clientEnv(process.env, { ...options.env, ...options.home.env });
  const [file, ...prefix] = options.version.command;
  const run = await runClientProcess(file!, [...prefix, ...args], {
    cwd: options.cwd,
    env,
    server: options.server,
    timeoutMs: options.timeoutMs ?? 60_000,
    signal: options.signal,
  });
  return { ...run, events: jsonLines(run.stdout) };
}

export function runClaude(options: ClientOptions): Promise<ClientRun & { events: any[] }> {
  // Only what `install-hooks claude-code --trust` set up decides what may run (its
  // permissions.allow); no MCP server is configured.
  return runWithArgs(options, [
    '-p',
    options.prompt,
    '--output-format',
    'stream-json',
    '--verbose',
    '--model',
    CLAUDE_MODEL,
    '--strict-mcp-config',
    '--mcp-config',
    '{"mcpServers":{}}',
    ...(options.extraArgs ?? []),
  ]);
}

// ---------------------------------------------------------------------------------------------
// Codex

export const CODEX_MODEL = 'gpt-5-codex';

/** The user config a Codex user would have: a model provider, and nothing that reaches out. */
export function codexConfig(server: ModelServer): string {
  return `model = "${CODEX_MODEL}"
model_provider = "scripted"
approval_policy = "never"
check_for_update_on_startup = false

[model_providers.scripted]
name = "scripted"
base_url = "${server.url}/v1"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
`;
}

export function runCodex(options: ClientOptions): Promise<ClientRun & { events: any[] }> {
  const ephemeral = options.keepSessions ? [] : ['--ephemeral'];
  return runWithArgs(options, ['exec', '--json', ...ephemeral, ...(options.extraArgs ?? []), options.prompt]);
}

// ---------------------------------------------------------------------------------------------
// Copilot CLI

export const COPILOT_MODEL = 'gpt-5';

/**
 * `copilot -p` with only the folder trust `baton init --trust` recorded (no COPILOT_ALLOW_ALL=true,
 * which would trust the folder itself); `--allow-all-tools` is what prompt mode requires for tools.
 */
export function runCopilot(options: ClientOptions): Promise<ClientRun & { events: any[] }> {
  return runWithArgs(options, [
    '-p',
    options.prompt,
    '--allow-all-tools',
    '--no-auto-update',
    '--disable-client-telemetry',
    '--no-ask-user',
    '--output-format',
    'json',
    ...(options.extraArgs ?? []),
  ]);
}
