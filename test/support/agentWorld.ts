import fs from 'node:fs';
import path from 'node:path';
import { batonShimDir, makeClientHome, runClaude, runCodex, runCopilot } from './agentClients.ts';
import { expect } from 'vitest';
import type { TestContext } from 'vitest';
import { approvedReview } from '../../src/demo/driver.ts';
import { agentName, editMade, editingTurns, executorThatCompletes, waitingOutChildren } from './agentScripts.ts';
import type { ClientHome, ClientName, ClientRun, ClientVersion } from './agentClients.ts';
import { uniquePrefix } from './fixtures.ts';
import { freshGitRepo, git, gitRepoWithTask, linkedWorktree } from './gitRepo.ts';
import type { GitRepo } from './gitRepo.ts';
import { startModelServer } from './modelServer.ts';
import type { ModelRequest, ModelServer, Script } from './modelServer.ts';
import { codexHookHash, codexHookKey, withCodexTrust } from '../../src/clients/codex/config.ts';
import type { TrustEntry } from '../../src/clients/codex/config.ts';
import { BATON_BIN, PROJECT_ROOT, jsonOf, runBaton, startWorkerProcess } from './processes.ts';
import type { CliRun, WorkerProcess } from './processes.ts';
import { startPrivateRedis } from './redisServer.ts';
import type { PrivateRedis } from './redisServer.ts';

// One real-client test world: a committed repository with task 01, its own Redis (unix socket,
// reachable from the client's network namespace), a scripted model server, `baton` on PATH, the
// hooks and profiles that `baton install-hooks <client>` writes, and a real `baton worker`.

export type AgentWorld = {
  client: ClientName;
  version: ClientVersion;
  repo: GitRepo;
  redis: PrivateRedis;
  server: ModelServer;
  /** The client's HOME (and CODEX_HOME), where `install-hooks --trust` wrote its trust entries. */
  home: ClientHome;
  /** What `baton install-hooks` printed (null when the world has no install). */
  installed: CliRun | null;
  /** `baton` as the installed files name it: what a scripted agent types. */
  baton: string;
  /** What the agent, its hooks and `baton task` see. */
  env: Record<string, string>;
  worker: WorkerProcess | null;
  recordDir: string;
  startWorker(): Promise<WorkerProcess>;
  stopWorker(): Promise<void>;
  /** `baton task 01 …` through the worker; its one-line JSON result. */
  task(...args: string[]): Promise<Record<string, any>>;
  /**
   * Runs the client headless with `prompt` and the given model script; `signal` kills its process group (SIGKILL);
   * `extraArgs` go to the client's command line (`--permission-mode acceptEdits`).
   */
  run(
    prompt: string,
    script: Script,
    timeoutMs?: number,
    options?: { signal?: AbortSignal; extraArgs?: readonly string[] },
  ): Promise<ClientRun & { events: any[] }>;
  runFile(): Record<string, any>;
  readTaskFile(name: string): string | null;
  cleanup(): Promise<void>;
};

export type WorldOptions = {
  install?: boolean;
  worker?: boolean;
  managed?: boolean;
  record?: boolean;
  installArgs?: readonly string[];
  /** false: the agent (and so its hooks and commands) gets no REDIS_URL or BATON_PREFIX; only the worker does. */
  agentKnowsRedis?: boolean;
  /**
   * As a user adopts baton (docs/adopting.md): a repository without baton or tasks, set up with
   * `baton init --client <client> --trust` instead of install-hooks, and its task made with
   * `baton new "<title>"` (short id 01).
   */
  adopt?: { title: string; description?: string };
  /** Extra arguments of the `baton worker` the world starts (`--stop-grace 3s`). */
  workerArgs?: readonly string[];
  /** Codex keeps its session rollouts (the record baton reads a stage's cost from); otherwise it runs `--ephemeral`. */
  keepSessions?: boolean;
};

const RECORD_HOOK = path.join(PROJECT_ROOT, 'test', 'support', 'recordHook.sh');

/** The file `baton install-hooks <client>` writes the hooks to. */
const SETTINGS_FILES: Readonly<Record<ClientName, string>> = {
  'claude-code': '.claude/settings.json',
  codex: '.codex/hooks.json',
  'copilot-cli': '.github/copilot/settings.json',
};

/**
 * Wraps each of baton's hook commands in a recorder: the tests see the real payloads and baton's
 * answers. Codex runs a hook only while its trusted hash matches, so the wrapped commands are
 * trusted again in the world's $CODEX_HOME, as Codex's `/hooks` screen would.
 */
function addRecorders(version: ClientVersion, repoRoot: string, home: ClientHome, dir: string): void {
  const settingsFile = path.join(repoRoot, SETTINGS_FILES[version.client]);
  const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8')) as {
    hooks: Record<string, Array<{ matcher?: string; hooks: Array<{ command?: string; timeout?: number }> }>>;
  };
  const trust: TrustEntry[] = [];
  for (const [event, groups] of Object.entries(settings.hooks)) {
    groups.forEach((group, groupIndex) => {
      group.hooks.forEach((entry, handlerIndex) => {
        if (typeof entry.command !== 'string') return;
        entry.command = `sh '${RECORD_HOOK}' '${dir}' ${event} -- ${entry.command}`;
        trust.push({
          key: codexHookKey(settingsFile, event, groupIndex, handlerIndex),
          hash: codexHookHash({
            event,
            ...(group.matcher !== undefined ? { matcher: group.matcher } : {}),
            command: entry.command,
            timeoutSec: entry.timeout ?? 600,
          }),
        });
      });
    });
  }
  fs.writeFileSync(settingsFile, `${JSON.stringify(settings, null, 2)}\n`);
  if (version.client === 'codex') {
    const config = path.join(home.env.CODEX_HOME!, 'config.toml');
    fs.writeFileSync(config, withCodexTrust(fs.readFileSync(config, 'utf8'), repoRoot, trust, config));
  }
}

/** The command line the installed profiles and permissions name for `baton` (`'<node>' '<bin>'`). */
function installedBatonCommand(version: ClientVersion, repoRoot: string): string {
  const settingsFile = path.join(repoRoot, SETTINGS_FILES[version.client]);
  const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8')) as {
    hooks: Record<string, Array<{ hooks: Array<{ command?: string }> }>>;
  };
  const command = Object.values(settings.hooks)
    .flat()
    .flatMap((group) => group.hooks)
    .find((entry) => typeof entry.command === 'string')!.command!;
  return command.slice(0, command.lastIndexOf(' hook '));
}

/**
 * Replaces the world's Claude Code hooks of `event` with recorders that answer nothing (`true`): what
 * the client does when baton does not intervene, observed (`matcher` as in settings.json).
 */
export function observeOnly(world: AgentWorld, event: string, matchers: readonly string[]): void {
  if (world.client !== 'claude-code') throw new Error('observeOnly: Claude Code settings only');
  const settingsFile = path.join(world.repo.root, SETTINGS_FILES[world.client]);
  const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8')) as { hooks: Record<string, unknown[]> };
  settings.hooks[event] = matchers.map((matcher) => ({
    matcher,
    hooks: [{ type: 'command', command: `sh '${RECORD_HOOK}' '${world.recordDir}' ${event} -- true` }],
  }));
  fs.writeFileSync(settingsFile, `${JSON.stringify(settings, null, 2)}\n`);
}

export type RecordedHook = {
  event: string;
  at: number;
  ms: number;
  payload: Record<string, any>;
  stdout: string;
  stderr: string;
  code: number;
};

/** Session-level hooks (Codex's SessionStart and Stop, installed for a headless reviewer baton starts). */
const SESSION_EVENTS: ReadonlySet<string> = new Set(['SessionStart', 'Stop']);

/**
 * The payloads the recording hooks saw, in the order the hooks finished (recordHook.sh); the
 * session-level hooks of every session (which record nothing outside a headless review) only with
 * `sessions`.
 */
export function recordedPayloads(world: AgentWorld, options: { sessions?: boolean } = {}): RecordedHook[] {
  const calls = path.join(world.recordDir, 'hooks');
  if (!fs.existsSync(calls)) return [];
  const read = (call: string, name: string) => fs.readFileSync(path.join(calls, call, name), 'utf8');
  return fs
    .readdirSync(calls)
    .filter((call) => fs.existsSync(path.join(calls, call, 'result')))
    .map((call) => {
      const [at, end, code] = read(call, 'result').trim().split('\n').map(Number) as [number, number, number];
      const input = read(call, 'payload');
      let payload: unknown;
      try {
        payload = JSON.parse(input || '{}');
      } catch {
        payload = { unparsed: input };
      }
      return {
        call,
        end,
        hook: {
          event: read(call, 'event').trim(),
          at,
          ms: end - at,
          payload,
          stdout: read(call, 'stdout'),
          stderr: read(call, 'stderr'),
          code,
        },
      };
    })
    .sort((a, b) => a.end - b.end || a.hook.at - b.hook.at || a.call.localeCompare(b.call))
    .map(({ hook }) => hook as RecordedHook)
    .filter((hook) => options.sessions === true || !SESSION_EVENTS.has(hook.event));
}

export async function agentWorld(version: ClientVersion, options: WorldOptions = {}): Promise<AgentWorld> {
  const repo = options.adopt ? freshGitRepo() : gitRepoWithTask();
  if (options.managed === false) fs.rmSync(path.join(repo.root, '.agents'), { recursive: true, force: true });
  const redis = await startPrivateRedis();
  const server = await startModelServer();
  const shims = batonShimDir(path.join(redis.dir, 'shims'));
  const env: Record<string, string> = {
    REDIS_URL: redis.url,
    BATON_PREFIX: uniquePrefix('agent'),
    PATH: `${shims}:${process.env.PATH ?? ''}`,
  };
  const home = makeClientHome(version, server);
  const processEnv = () => ({ ...process.env, ...env });
  let installed: CliRun | null = null;
  if (options.adopt) {
    installed = await runBaton(['init', '--client', version.client, '--trust'], { cwd: repo.root, env: { ...processEnv(), ...home.env } });
    if (installed.code !== 0) throw new Error(`baton init failed: ${installed.stderr}`);
    const description = options.adopt.description ? ['--description', options.adopt.description] : [];
    const created = jsonOf(await runBaton(['new', options.adopt.title, ...description, '--json'], { cwd: repo.root, env: processEnv() }));
    repo.taskDir = path.dirname(path.join(repo.root, created.taskFile as string));
  } else if (options.install !== false) {
    // install-hooks <client> --trust, in the client's own home.
    installed = await runBaton(['install-hooks', version.client, ...(options.installArgs ?? ['--trust'])], {
      cwd: repo.root,
      env: { ...processEnv(), ...home.env },
    });
    if (installed.code !== 0) throw new Error(`install-hooks failed: ${installed.stderr}`);
  }
  // `baton` as the installed profiles and permissions name it (Claude Code runs only that command
  // line without asking); the shim on PATH is the same bundle.
  const baton = options.install !== false ? installedBatonCommand(version, repo.root) : `'${process.execPath}' '${BATON_BIN}'`;
  if (options.record && options.install !== false) addRecorders(version, repo.root, home, path.join(redis.dir, 'recorded'));
  const world: AgentWorld = {
    client: version.client,
    version,
    repo,
    redis,
    server,
    home,
    installed,
    baton,
    env,
    worker: null,
    recordDir: path.join(redis.dir, 'recorded'),
    async startWorker() {
      world.worker = await startWorkerProcess(['--repo', repo.root, ...(options.workerArgs ?? [])], { env: processEnv(), cwd: repo.root });
      return world.worker;
    },
    async stopWorker() {
      await world.worker?.stop();
      world.worker = null;
    },
    async task(...args) {
      return jsonOf(await runBaton(['task', '01', ...args], { cwd: repo.root, env: processEnv(), timeoutMs: 30_000 }));
    },
    async run(prompt, script, timeoutMs = 60_000, runOptions = {}) {
      const agentEnv = options.agentKnowsRedis === false ? { PATH: env.PATH! } : env;
      return runScripted(
        { version, home, server, cwd: repo.root, env: agentEnv, keepSessions: options.keepSessions },
        prompt,
        script,
        timeoutMs,
        runOptions,
      );
    },
    runFile() {
      return JSON.parse(fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8')) as Record<string, any>;
    },
    readTaskFile(name) {
      const file = path.join(repo.taskDir, name);
      return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
    },
    async cleanup() {
      await world.stopWorker();
      await server.close();
      await redis.stop();
      fs.rmSync(redis.dir, { recursive: true, force: true });
      fs.rmSync(home.dir, { recursive: true, force: true });
      repo.cleanup();
    },
  };
  if (options.worker !== false) await world.startWorker();
  return world;
}

/** The client's run exited 0 and every model script ran as written (the output's tail says why not). */
export function expectCleanRun(world: AgentWorld, run: ClientRun): void {
  expect(world.server.scriptErrors).toEqual([]);
  expect(run.code, `${run.stderr}\n${run.stdout.slice(-3000)}`).toBe(0);
}

/** Runs the client headless in `at.cwd` with `prompt`, its model server answering from `script`. */
function runScripted(
  at: { version: ClientVersion; home: ClientHome; server: ModelServer; cwd: string; env: Record<string, string>; keepSessions?: boolean },
  prompt: string,
  script: Script,
  timeoutMs: number,
  runOptions: { signal?: AbortSignal; extraArgs?: readonly string[] },
): Promise<ClientRun & { events: any[] }> {
  // A Codex parent waits for its children however long they take (see waitingOutChildren).
  at.server.setScript(at.version.client === 'codex' && script.parent ? { ...script, parent: waitingOutChildren(script.parent) } : script);
  const common = { ...at, prompt, timeoutMs, signal: runOptions.signal, extraArgs: runOptions.extraArgs };
  return at.version.client === 'claude-code' ? runClaude(common) : at.version.client === 'codex' ? runCodex(common) : runCopilot(common);
}

/**
 * A linked worktree of the world's repository driven by its own client, set up as a user would:
 * `baton install-hooks <client> --trust` in the main checkout (the client's own model server and
 * home), its files committed, then `git worktree add` (a task 01 of its own). The world's one worker
 * (`--repo` the main checkout) serves it. `worktreeInstall`: also run install-hooks in the worktree.
 */
export type WorktreeAgent = Pick<AgentWorld, 'version' | 'repo' | 'server' | 'home' | 'baton' | 'run' | 'task' | 'runFile'>;

export async function worktreeAgent(
  world: AgentWorld,
  name: string,
  version: ClientVersion,
  options: { worktreeInstall?: boolean } = {},
): Promise<WorktreeAgent> {
  const server = await startModelServer();
  const home = makeClientHome(version, server);
  const env = { ...process.env, ...world.env };
  const install = async (root: string) => {
    const installed = await runBaton(['install-hooks', version.client, '--trust'], { cwd: root, env: { ...env, ...home.env } });
    if (installed.code !== 0) throw new Error(`install-hooks failed: ${installed.stderr}`);
  };
  await install(world.repo.root);
  git(world.repo.root, ['add', '-A']);
  git(world.repo.root, ['commit', '-qm', `baton install-hooks ${version.client}`]);
  const repo = linkedWorktree(world.repo, name);
  if (options.worktreeInstall) await install(repo.root);
  const previous = world.cleanup;
  world.cleanup = async () => {
    await previous();
    await server.close();
    fs.rmSync(home.dir, { recursive: true, force: true });
    repo.cleanup();
  };
  return {
    version,
    repo,
    server,
    home,
    baton: installedBatonCommand(version, repo.root),
    run: (prompt, script, timeoutMs = 60_000, runOptions = {}) =>
      runScripted({ version, home, server, cwd: repo.root, env: world.env }, prompt, script, timeoutMs, runOptions),
    task: async (...args) => jsonOf(await runBaton(['task', '01', ...args], { cwd: repo.root, env, timeoutMs: 30_000 })),
    runFile: () => JSON.parse(fs.readFileSync(path.join(repo.taskDir, 'orchestration.json'), 'utf8')) as Record<string, any>,
  };
}

/** A fresh world for one test, cleaned up when the test ends (tests run concurrently). */
export async function worldFor(context: TestContext, version: ClientVersion, options: WorldOptions = {}): Promise<AgentWorld> {
  const world = await agentWorld(version, options);
  context.onTestFinished(() => world.cleanup());
  return world;
}

/** A run whose next delegation is the analysis review (analysis.md written before the run began), prepared for the world's client. */
export async function preparedReview(world: AgentWorld): Promise<Record<string, any>> {
  fs.writeFileSync(path.join(world.repo.taskDir, 'analysis.md'), '# Analysis\n\nDone.\n');
  await world.task('begin-or-resume');
  return world.task('prepare', '--client', world.client);
}

/** A file an executor leaves out of its stage and writes in a later turn. */
export const LEFT_OUT = { file: 'LEFT-OUT.md', after: 'late notes\n' };

/**
 * Task 01 begun and prepared for the world's client; `executor` completes the analysis (steps 0 and
 * 1), then in a later turn writes LEFT_OUT with its client's own tool (`edit`).
 */
export async function lateTurnExecutor(world: AgentWorld) {
  expect((await world.task('begin-or-resume')).status).toBe('running');
  expect((await world.task('prepare', '--client', world.client)).status).toBe('running');
  const complete = executorThatCompletes(world.client, world.baton);
  const edit = editingTurns(world.client, world.repo.root, LEFT_OUT, 'LEFT-OUT.md written.');
  return { edit, executor: (request: ModelRequest) => (request.step < 2 ? complete(request) : edit.turn(request, 2)) };
}

/** Every model script ran as written, and the later turn wrote LEFT_OUT with its client's tool. */
export function expectLeftOut(world: AgentWorld, edit: { answer(): string }): void {
  expect(world.server.scriptErrors).toEqual([]);
  expect(edit.answer()).toMatch(editMade(world.client, LEFT_OUT));
  expect(fs.readFileSync(path.join(world.repo.root, LEFT_OUT.file), 'utf8')).toBe(LEFT_OUT.after);
}

/** The reviewer's hand-over of an approved review of analysis.md, as its installed profile says. */
export function reviewHandOver(world: AgentWorld): string {
  return `${world.baton} task 01 complete-stage --stage review-analysis --round 1 --artifact review-analysis.md --agent ${agentName(world.client)} --content - <<'BATON_ARTIFACT'\n${approvedReview('analysis.md')}BATON_ARTIFACT`;
}
