import fs from 'node:fs';
import path from 'node:path';
import { batonShimDir, runClaude, runCodex } from './agentClients.ts';
import type { ClientName, ClientRun, ClientVersion } from './agentClients.ts';
import { uniquePrefix } from './fixtures.ts';
import { gitRepoWithTask } from './gitRepo.ts';
import type { GitRepo } from './gitRepo.ts';
import { startModelServer } from './modelServer.ts';
import type { ModelServer, Script } from './modelServer.ts';
import { PROJECT_ROOT, jsonOf, runBaton, startWorkerProcess } from './processes.ts';
import type { WorkerProcess } from './processes.ts';
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
  /** What the agent, its hooks and `baton task` see. */
  env: Record<string, string>;
  worker: WorkerProcess | null;
  recordDir: string;
  startWorker(): Promise<WorkerProcess>;
  stopWorker(): Promise<void>;
  /** `baton task 01 …` through the worker; its one-line JSON result. */
  task(...args: string[]): Promise<Record<string, any>>;
  /** Runs the client headless with `prompt` and the given model script. */
  run(prompt: string, script: Script, timeoutMs?: number): Promise<ClientRun & { events: any[] }>;
  runFile(): Record<string, any>;
  readTaskFile(name: string): string | null;
  cleanup(): Promise<void>;
};

export type WorldOptions = { install?: boolean; worker?: boolean; managed?: boolean; record?: boolean };

const RECORD_HOOK = path.join(PROJECT_ROOT, 'test', 'support', 'recordHook.mjs');

/** Wraps each of baton's hook commands in a recorder: the tests see the real payloads and baton's answers. */
function addRecorders(settingsFile: string, dir: string): void {
  const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8')) as { hooks: Record<string, Array<{ hooks: Array<{ command?: string }> }>> };
  for (const [event, groups] of Object.entries(settings.hooks)) {
    for (const group of groups) {
      for (const entry of group.hooks) {
        if (typeof entry.command === 'string') entry.command = `'${process.execPath}' '${RECORD_HOOK}' '${dir}' ${event} -- ${entry.command}`;
      }
    }
  }
  fs.writeFileSync(settingsFile, `${JSON.stringify(settings, null, 2)}\n`);
}

export type RecordedHook = { event: string; at: number; ms: number; payload: Record<string, any>; stdout: string; stderr: string; code: number };

/** The payloads the recording hooks saw, in order. */
export function recordedPayloads(world: AgentWorld): RecordedHook[] {
  const file = path.join(world.recordDir, 'payloads.jsonl');
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

export async function agentWorld(version: ClientVersion, options: WorldOptions = {}): Promise<AgentWorld> {
  const repo = gitRepoWithTask();
  if (options.managed === false) fs.rmSync(path.join(repo.root, '.agents'), { recursive: true, force: true });
  const redis = await startPrivateRedis();
  const server = await startModelServer();
  const shims = batonShimDir(path.join(redis.dir, 'shims'));
  const env: Record<string, string> = {
    REDIS_URL: redis.url,
    BATON_PREFIX: uniquePrefix('agent'),
    PATH: `${shims}:${process.env.PATH ?? ''}`,
  };
  const processEnv = () => ({ ...process.env, ...env });
  if (options.install !== false) {
    const installed = await runBaton(['install-hooks', version.client], { cwd: repo.root, env: processEnv() });
    if (installed.code !== 0) throw new Error(`install-hooks failed: ${installed.stderr}`);
    if (options.record) addRecorders(path.join(repo.root, version.client === 'claude-code' ? '.claude/settings.json' : '.codex/hooks.json'), path.join(redis.dir, 'recorded'));
  }
  const world: AgentWorld = {
    client: version.client,
    version,
    repo,
    redis,
    server,
    env,
    worker: null,
    recordDir: path.join(redis.dir, 'recorded'),
    async startWorker() {
      world.worker = await startWorkerProcess(['--repo', repo.root], { env: processEnv(), cwd: repo.root });
      return world.worker;
    },
    async stopWorker() {
      await world.worker?.stop();
      world.worker = null;
    },
    async task(...args) {
      return jsonOf(await runBaton(['task', '01', ...args], { cwd: repo.root, env: processEnv(), timeoutMs: 30_000 }));
    },
    async run(prompt, script, timeoutMs = 60_000) {
      server.setScript(script);
      const common = { version, cwd: repo.root, prompt, server, env, timeoutMs };
      return version.client === 'claude-code' ? runClaude(common) : runCodex({ ...common, extraArgs: ['--dangerously-bypass-hook-trust'] });
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
      repo.cleanup();
    },
  };
  if (options.worker !== false) await world.startWorker();
  return world;
}
