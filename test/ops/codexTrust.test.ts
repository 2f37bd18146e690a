import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { createRequire } from 'node:module';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { parse } from '@decimalturn/toml-patch';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { BATON_BIN, batonEnv, jsonOf, runBaton, runProcess, startWorkerProcess } from '../support/processes.ts';
import { TASK_ID, uniquePrefix } from '../support/fixtures.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { completeStageFlags } from '../support/engineEvents.ts';

// `baton install-hooks codex` against the REAL Codex: Codex skips an
// untrusted project's hooks and its .codex/config.toml without a word. Codex itself says which
// hooks it will run (its app-server's `hooks/list`, what its /hooks screen shows), and `codex
// sandbox` runs a command in the sandbox a session would use. Before --trust: no hook of the project
// listed, and the sandbox refuses Redis's socket and .agents/; after: baton's five hooks (its session's start and stop for a headless reviewer, docs/clients.md) listed as
// trusted, the socket reachable and .agents/ writable. The user's config.toml keeps everything else.
// Loopback only: Codex runs in a private network namespace where `unshare` allows it.

const require = createRequire(import.meta.url);
const CODEX = require.resolve('@openai/codex/bin/codex.js');
const CAN_UNSHARE = spawnSync('unshare', ['-rn', 'true']).status === 0;

let repo: GitRepo;
let codexHome: string;
let socketDir: string;
let server: net.Server;

beforeEach(async () => {
  repo = gitRepoWithTask();
  codexHome = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-codex-home-'));
  socketDir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-codex-sock-'));
  server = net.createServer((socket) => socket.end('+PONG\r\n'));
  await new Promise<void>((resolve) => server.listen(path.join(socketDir, 'redis.sock'), resolve));
});

afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
  for (const dir of [repo.root, codexHome, socketDir]) fs.rmSync(dir, { recursive: true, force: true });
});

function codexArgv(args: string[]): [string, string[]] {
  return CAN_UNSHARE ? ['unshare', ['-rn', process.execPath, CODEX, ...args]] : [process.execPath, [CODEX, ...args]];
}

const codexEnv = () => ({ ...process.env, CODEX_HOME: codexHome, RUST_LOG: 'error', NO_COLOR: '1' });

type CodexHook = { key: string; eventName: string; command: string; source: string; trustStatus: string; currentHash: string };

/** Codex's own list of the hooks it would run in `cwd` (app-server JSON-RPC over stdio: initialize, hooks/list). */
async function codexHooks(cwd: string): Promise<{ hooks: CodexHook[]; warnings: string[] }> {
  const [command, args] = codexArgv(['app-server']);
  const child = spawn(command, args, { cwd, env: codexEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  const warnings: string[] = [];
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  try {
    const lines = readline.createInterface({ input: child.stdout });
    child.stdin.write(`${JSON.stringify({ id: 1, method: 'initialize', params: { clientInfo: { name: 'baton-test', version: '0' } } })}\n`);
    for await (const line of lines) {
      const message = JSON.parse(line);
      if (message.method === 'configWarning') warnings.push(message.params.summary);
      if (message.id === 1) {
        child.stdin.write(`${JSON.stringify({ method: 'initialized' })}\n`);
        child.stdin.write(`${JSON.stringify({ id: 2, method: 'hooks/list', params: { cwds: [cwd] } })}\n`);
      }
      if (message.id === 2) {
        if (message.error) throw new Error(`hooks/list failed: ${JSON.stringify(message.error)}`);
        return { hooks: message.result.data[0].hooks as CodexHook[], warnings };
      }
    }
    throw new Error('codex app-server closed before answering hooks/list');
  } finally {
    clearTimeout(timer);
    child.kill('SIGKILL');
  }
}

/** `codex` arguments that run `args` in the sandbox a session would use (workspace-write), through `sh -c shell`. */
function inSessionSandbox(shell: string, ...args: string[]): string[] {
  return ['sandbox', '-c', 'sandbox_mode="workspace-write"', '--', '/bin/sh', '-c', shell, 'sh', ...args];
}

/** What a command run by a Codex session (default workspace-write sandbox) can do in the repository. */
async function sandboxProbe(cwd: string): Promise<string> {
  const probe = `
const fs = require('node:fs');
const out = [];
try { fs.writeFileSync('.agents/workspace/active/probe.txt', 'x'); out.push('agents:ok'); } catch (e) { out.push('agents:' + e.code); }
try { fs.writeFileSync('.git/baton-probe', 'x'); out.push('git:ok'); } catch (e) { out.push('git:' + e.code); }
const socket = require('node:net').connect(process.argv[1]);
const report = (what) => { out.push('redis-socket:' + what); socket.destroy(); process.stdout.write(out.join(' ') + '\\n'); };
socket.on('data', (d) => report(String(d).trim()));
socket.on('error', (e) => report(e.code));
`;
  // Through `| cat`: under the sandbox's seccomp filter, node cannot write to the socketpair Node's
  // spawn gives as stdout (found here: it printed nothing), while cat's plain write() works.
  const [command, args] = codexArgv(inSessionSandbox('"$@" | cat', process.execPath, '-e', probe, path.join(socketDir, 'redis.sock')));
  const run = await runProcess(command, args, { cwd, env: codexEnv(), timeoutMs: 30_000 });
  if (run.stdout.trim() === '') throw new Error(`codex sandbox printed nothing (exit ${run.code}): ${run.stderr}`);
  return run.stdout.trim();
}

const USER_CONFIG = `# my Codex settings
model = "gpt-5-codex" # keep this comment

[projects."/srv/other"]
trust_level = "trusted"

[hooks.state."/srv/other/.codex/hooks.json:stop:0:0"]
trusted_hash = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
`;

describe('baton install-hooks codex with the real Codex', () => {
  it('without --trust says Codex will skip the hooks (and Codex lists none); --trust makes Codex list all five as trusted and opens the sandbox for baton', async () => {
    fs.writeFileSync(path.join(codexHome, 'config.toml'), USER_CONFIG);
    // A hook of the user's in front of baton's PreToolUse group: baton's key is pre_tool_use:1:0.
    fs.mkdirSync(path.join(repo.root, '.codex'));
    fs.writeFileSync(
      path.join(repo.root, '.codex', 'hooks.json'),
      `${JSON.stringify({ hooks: { PreToolUse: [{ matcher: '^shell$', hooks: [{ type: 'command', command: 'echo mine' }] }] } }, null, 2)}\n`,
    );
    const env = { ...process.env, CODEX_HOME: codexHome };

    const plain = await runBaton(['install-hooks', 'codex', '--repo', repo.root], { env });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain(
      `note: Codex skips a project's hooks and its .codex/config.toml without a word until they are trusted (the project is not trusted and 5 of baton's hooks are not trusted in ${path.join(codexHome, 'config.toml')}). Run 'baton install-hooks codex --trust'`,
    );
    expect(plain.stdout).toMatch(/created\s+\.codex\/config\.toml/);
    expect(plain.stdout).toMatch(/updated\s+\.codex\/hooks\.json/);
    expect(fs.readFileSync(path.join(codexHome, 'config.toml'), 'utf8')).toBe(USER_CONFIG);
    const untrusted = await codexHooks(repo.root);
    expect(untrusted.hooks.filter((hook) => hook.source === 'project')).toEqual([]);
    expect(untrusted.warnings.join('\n')).toContain(`add ${repo.root} as a trusted project`);
    expect(await sandboxProbe(repo.root)).toMatch(/^agents:E[A-Z]+ git:E[A-Z]+ redis-socket:EPERM$/);

    const trusted = await runBaton(['install-hooks', 'codex', '--repo', repo.root, '--trust'], { env });
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.stdout).toMatch(new RegExp(`updated\\s+${path.join(codexHome, 'config.toml').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));
    expect(trusted.stdout).not.toContain('Codex skips');
    const configText = fs.readFileSync(path.join(codexHome, 'config.toml'), 'utf8');
    expect(configText.startsWith(USER_CONFIG)).toBe(true); // the user's lines, comments included, untouched
    const config = parse(configText) as any;
    expect(config.model).toBe('gpt-5-codex');
    expect(config.projects).toEqual({ '/srv/other': { trust_level: 'trusted' }, [repo.root]: { trust_level: 'trusted' } });
    expect(Object.keys(config.hooks.state)).toHaveLength(6);

    const listed = await codexHooks(repo.root);
    // The user's own hook stays as the user left it (untrusted): --trust trusts only baton's.
    const mine = listed.hooks.filter((hook) => hook.command === 'echo mine');
    expect(mine.map((hook) => [hook.key, hook.trustStatus])).toEqual([[`${repo.root}/.codex/hooks.json:pre_tool_use:0:0`, 'untrusted']]);
    const project = listed.hooks.filter((hook) => hook.source === 'project' && hook.command !== 'echo mine');
    expect(project.map((hook) => [hook.key.slice(repo.root.length), hook.eventName, hook.trustStatus]).sort()).toEqual([
      ['/.codex/hooks.json:pre_tool_use:1:0', 'preToolUse', 'trusted'],
      ['/.codex/hooks.json:session_start:0:0', 'sessionStart', 'trusted'],
      ['/.codex/hooks.json:stop:0:0', 'stop', 'trusted'],
      ['/.codex/hooks.json:subagent_start:0:0', 'subagentStart', 'trusted'],
      ['/.codex/hooks.json:subagent_stop:0:0', 'subagentStop', 'trusted'],
    ]);
    for (const hook of project) {
      expect(hook.command).toMatch(/^baton hook codex --event (pre-tool|subagent-start|subagent-stop|session-start|session-stop)$/);
      expect(config.hooks.state[hook.key]).toEqual({ trusted_hash: hook.currentHash });
    }
    expect(listed.warnings.join('\n')).not.toContain('trusted project');
    // The project's .codex/config.toml now applies: Redis's socket is reachable, .agents/ and the git
    // directory (the commit stage commits) writable.
    expect(await sandboxProbe(repo.root)).toBe('agents:ok git:ok redis-socket:+PONG');

    // Idempotent, and a second --trust changes no byte.
    const again = await runBaton(['install-hooks', 'codex', '--repo', repo.root, '--trust'], { env });
    expect(again.stdout.match(/unchanged/g)).toHaveLength(6);
    expect(fs.readFileSync(path.join(codexHome, 'config.toml'), 'utf8')).toBe(configText);
  }, 120_000);

  it('keeps a project sandbox section of the user, adding only what baton needs', async () => {
    fs.mkdirSync(path.join(repo.root, '.codex'));
    const mine =
      '# project settings\nmodel_reasoning_effort = "high"\n\n[sandbox_workspace_write]\nwritable_roots = ["/srv/cache"] # shared cache\n';
    fs.writeFileSync(path.join(repo.root, '.codex', 'config.toml'), mine);
    const run = await runBaton(['install-hooks', 'codex', '--repo', repo.root], { env: { ...process.env, CODEX_HOME: codexHome } });
    expect(run.code, run.stderr).toBe(0);
    const text = fs.readFileSync(path.join(repo.root, '.codex', 'config.toml'), 'utf8');
    expect(text).toContain('# project settings');
    expect(parse(text)).toEqual({
      model_reasoning_effort: 'high',
      // Relative to .codex/, as Codex resolves them: the file names no path of this machine.
      sandbox_workspace_write: { writable_roots: ['/srv/cache', '../.agents', '../.git'], network_access: true },
    });
    fs.rmSync(path.join(repo.root, '.codex', 'config.toml'));
    const skipped = await runBaton(['install-hooks', 'codex', '--repo', repo.root, '--no-sandbox-config'], {
      env: { ...process.env, CODEX_HOME: codexHome },
    });
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(skipped.stdout).not.toMatch(/^ {2}\w+ +\.codex\/config\.toml$/m);
    expect(fs.existsSync(path.join(repo.root, '.codex', 'config.toml'))).toBe(false);
    fs.writeFileSync(path.join(repo.root, '.codex', 'config.toml'), 'sandbox_workspace_write = [');
    const broken = await runBaton(['install-hooks', 'codex', '--repo', repo.root], { env: { ...process.env, CODEX_HOME: codexHome } });
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('.codex/config.toml is not valid TOML');
    expect(broken.stderr).toContain('Nothing was written');
  }, 60_000);

  it("a child's `baton task … complete-stage --content -` works inside Codex's sandbox once installed and trusted, and fails without", async () => {
    const env = batonEnv(
      { redisUrl: inject('redisUrl'), prefix: uniquePrefix('codex-sandbox') },
      { CODEX_HOME: codexHome, BATON_HOOK_BUDGET_MS: '8000' },
    );
    const worker = await startWorkerProcess(['--repo', repo.root], { env });
    try {
      const task = async (...args: string[]) => jsonOf(await runBaton(['task', TASK_ID, ...args], { env, cwd: repo.root }));
      expect((await runBaton(['install-hooks', 'codex', '--repo', repo.root], { env })).code).toBe(0);
      expect((await task('begin-or-resume')).status).toBe('running');
      expect((await task('prepare', '--client', 'codex')).status).toBe('running');
      const started = await runBaton(['hook', 'codex', '--event', 'subagent-start'], {
        env,
        cwd: repo.root,
        input: nativePayload('codex', 'SubagentStart', 'executor', 'codex-child', repo.root),
      });
      expect(started.code, started.stderr).toBe(0);
      const analysis = '# Analysis\n\nWritten from inside the Codex sandbox.\n';
      const contentFile = path.join(socketDir, 'analysis.txt');
      fs.writeFileSync(contentFile, analysis);
      // What the executor profile tells the child to run, as a Codex session's command runs it
      // (no unshare here: the worker's Redis may be on the host's loopback).
      const inSandbox = async () => {
        const run = await runProcess(
          process.execPath,
          [
            CODEX,
            ...inSessionSandbox(
              '"$@" < "$CONTENT" | cat',
              process.execPath,
              BATON_BIN,
              'task',
              TASK_ID,
              ...completeStageFlags({ agent: 'codex' }),
              '--content',
              '-',
              '--timeout',
              '20000',
            ),
          ],
          { cwd: repo.root, env: { ...env, CONTENT: contentFile, RUST_LOG: 'error' }, timeoutMs: 60_000 },
        );
        return jsonOf(run);
      };
      // Not trusted yet: Codex ignores .codex/config.toml, so the sandbox has no network and baton cannot reach Redis.
      const refused = await inSandbox();
      expect(refused.error.code).toBe('BATON_REDIS_UNAVAILABLE');
      expect(fs.existsSync(path.join(repo.taskDir, 'analysis.md'))).toBe(false);
      expect((await runBaton(['install-hooks', 'codex', '--repo', repo.root, '--trust'], { env })).code).toBe(0);
      const completed = await inSandbox();
      expect(completed, JSON.stringify(completed)).toMatchObject({
        status: 'running',
        changed: true,
        run: { pendingDelegation: { status: 'stage-completed', agent: 'codex' } },
      });
      expect(fs.readFileSync(path.join(repo.taskDir, 'analysis.md'), 'utf8')).toBe(analysis);
    } finally {
      await worker.stop('SIGKILL');
    }
  }, 120_000);

  it('the orchestrator instructions in AGENTS.md are in the prompt Codex builds (codex debug prompt-input)', async () => {
    const installed = await runBaton(['install-hooks', 'codex', '--repo', repo.root, '--trust'], {
      env: { ...process.env, CODEX_HOME: codexHome },
    });
    expect(installed.code, installed.stderr).toBe(0);
    const [command, args] = codexArgv(['debug', 'prompt-input', 'drive the task']);
    const rendered = await runProcess(command, args, { cwd: repo.root, env: codexEnv(), timeoutMs: 30_000 });
    expect(rendered.code, rendered.stderr).toBe(0);
    const prompt = JSON.stringify(JSON.parse(rendered.stdout));
    const baton = JSON.stringify('baton task <task> prepare --client codex').slice(1, -1);
    expect(prompt).toContain('## Agent-infra task lifecycle (driven by baton)');
    expect(prompt).toContain(baton);
    expect(prompt).toContain('`fork_turns: \\"none\\"`');
  }, 60_000);
});
