import fs from 'node:fs';
import path from 'node:path';
import { batonShimDir, makeClientHome, runClaude, runCodex, runCopilot } from './agentClients.ts';
import type { TestContext } from 'vitest';
import { approvedReview } from '../../src/demo/driver.ts';
import { agentName, waitingOutChildren } from './agentScripts.ts';
import type { ClientHome, ClientName, ClientRun, ClientVersion } from './agentClients.ts';
import { uniquePrefix } from './fixtures.ts';
import { freshGitRepo, gitRepoWithTask } from './gitRepo.ts';
import type { GitRepo } from './gitRepo.ts';
import { startModelServer } from './modelServer.ts';
import type { ModelServer, Script } from './modelServer.ts';
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

export type RecordedHook = {
  event: string;
  at: number;
  ms: number;
  payload: Record<string, any>;
  stdout: string;
  stderr: string;
  code: number;
};

/** The payloads the recording hooks saw, in the order the hooks finished (recordHook.sh). */
export function recordedPayloads(world: AgentWorld): RecordedHook[] {
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
    .map(({ hook }) => hook as RecordedHook);
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
      // A Codex parent waits for its children however long they take (see waitingOutChildren).
      server.setScript(version.client === 'codex' && script.parent ? { ...script, parent: waitingOutChildren(script.parent) } : script);
      const agentEnv = options.agentKnowsRedis === false ? { PATH: env.PATH! } : env;
      const common = {
        version,
        home,
        cwd: repo.root,
        prompt,
        server,
        env: agentEnv,
        timeoutMs,
        signal: runOptions.signal,
        extraArgs: runOptions.extraArgs,
        keepSessions: options.keepSessions,
      };
      return version.client === 'claude-code' ? runClaude(common) : version.client === 'codex' ? runCodex(common) : runCopilot(common);
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

/** The reviewer's hand-over of an approved review of analysis.md, as its installed profile says. */
export function reviewHandOver(world: AgentWorld): string {
  return `${world.baton} task 01 complete-stage --stage review-analysis --round 1 --artifact review-analysis.md --agent ${agentName(world.client)} --content - <<'BATON_ARTIFACT'\n${approvedReview('analysis.md')}BATON_ARTIFACT`;
}
