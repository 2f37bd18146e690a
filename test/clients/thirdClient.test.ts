import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { git } from '../support/gitRepo.ts';
import { uniquePrefix } from '../support/fixtures.ts';
import { PROJECT_ROOT, runProcess } from '../support/processes.ts';
import type { CliRun } from '../support/processes.ts';

// A third agent client is its folder plus its entry in the registry (docs/architecture.md
// "Layers"). This test proves it on a copy of the sources: it adds src/clients/stub/ (an adapter
// and its installer, written below and never shipped) and one entry to src/clients/registry.ts,
// checks that nothing else changed, type-checks and builds the copy as users build baton, and runs
// the copy's `baton`: the help texts, `install-hooks stub`, `baton hook stub` and a complete
// lifecycle driven by stub hooks (`baton demo --client stub`) all pick the client up.

const redisUrl = inject('redisUrl');

const STUB_ADAPTER = `import type { ClientAdapter } from '../adapter.ts';
import type { Profile } from '../installer.ts';

// A client that exists only in test/clients/thirdClient.test.ts: its own settings and profile files,
// its own spawning tool, and its own hook-output format.

export const stub = {
  id: 'stub',
  displayName: 'Stub Agent',
  capabilities: { instructions: 'integrated', skills: 'compatible', commands: 'compatible', hooks: 'experimental', subagents: 'experimental', orchestration: 'experimental', sandbox: 'compatible', verification: 'compatible' },
  stageAgents: ['stub'],
  vendor: 'stub',
  hook: {
    spawnTools: [{ name: 'spawn_subagent', forkTurnsDefaultToAll: true, freshHint: ' (fork_turns: "none")' }],
    notice: (text: string) => \`\${JSON.stringify({ stub_notice: text })}\\n\`,
  },
  install: {
    hooks: [
      { event: 'subagent.start', matcher: 'agent-infra-lifecycle-*', args: ['--event', 'subagent-start'] },
      { event: 'subagent.stop', matcher: 'agent-infra-lifecycle-*', args: ['--event', 'subagent-stop'] },
      { event: 'tool.before', matcher: 'spawn_subagent', args: ['--event', 'pre-tool'] },
    ],
    instructions: {
      file: 'STUB.md',
      spawnAdvice: 'Call spawn_subagent with that name and fork_turns "none".',
      handOverReason: 'the stub agent has no file tool',
    },
    settingsFile: '.stub/hooks.json',
    agentFile: (name: string) => \`.stub/agents/\${name}.json\`,
    agentProfile: (profile: Profile) => \`\${JSON.stringify(profile, null, 2)}\\n\`,
    also: 'its allow-list of commands',
    trust: 'nothing to trust',
    options: [{ flags: '--no-stub-allow', description: 'leave .stub/allow.json alone' }],
    installer: async () => (await import('./install.ts')).installer,
  },
  demo: { payloadFields: { stub_session_kind: 'demo' } },
} as const satisfies ClientAdapter<'stub'>;
`;

const STUB_INSTALLER = `import type { ClientInstaller } from '../installer.ts';

export const installer: ClientInstaller = {
  settings: (settings, commandFor) => ({ ...settings, commands: [\`\${commandFor(['task'])} *\`] }),
  plan(context) {
    if (context.options.stubAllow === false) return { files: [], notices: [] };
    const allow = \`\${JSON.stringify({ root: context.realRoot, hooks: context.hooks.map((hook) => hook.event) })}\\n\`;
    return { files: [context.planFile('.stub/allow.json', allow)], notices: ['the stub agent reads .stub/allow.json when it starts'] };
  },
};
`;

/** Every file below `dir`, relative, with its bytes. */
function tree(dir: string, base = dir): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) for (const [name, text] of tree(full, base)) files.set(name, text);
    else files.set(path.relative(base, full), fs.readFileSync(full, 'utf8'));
  }
  return files;
}

function replaceOnce(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at < 0 || text.indexOf(from, at + from.length) >= 0) throw new Error(`expected exactly one '${from}' in the registry`);
  return text.slice(0, at) + to + text.slice(at + from.length);
}

let copy: string;
let work: string;

function baton(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {},
): Promise<CliRun> {
  return runProcess(process.execPath, [path.join(copy, 'bin', 'baton.mjs'), ...args], options);
}

/** No Redis anywhere: the hooks must find none (a HOME of their own, no REDIS_URL). */
function isolatedEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { REDIS_URL: _redis, BATON_PREFIX: _prefix, ...rest } = process.env;
  return { ...rest, HOME: work, BATON_DEFAULT_REDIS_URL: 'redis://127.0.0.1:1', ...extra };
}

function newRepository(name: string): string {
  const root = path.join(work, name);
  fs.mkdirSync(root);
  git(root, ['init', '-q']);
  return root;
}

beforeAll(async () => {
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-third-client-')));
  copy = path.join(work, 'baton');
  for (const entry of ['src', 'bin', 'scripts', 'package.json'])
    fs.cpSync(path.join(PROJECT_ROOT, entry), path.join(copy, entry), { recursive: true });
  fs.symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(copy, 'node_modules'));
  const tsconfig = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'tsconfig.json'), 'utf8'));
  fs.writeFileSync(path.join(copy, 'tsconfig.json'), JSON.stringify({ ...tsconfig, include: ['src'] }));

  // The client's folder and its entry in the registry: nothing else.
  fs.mkdirSync(path.join(copy, 'src', 'clients', 'stub'));
  fs.writeFileSync(path.join(copy, 'src', 'clients', 'stub', 'index.ts'), STUB_ADAPTER);
  fs.writeFileSync(path.join(copy, 'src', 'clients', 'stub', 'install.ts'), STUB_INSTALLER);
  const registry = path.join(copy, 'src', 'clients', 'registry.ts');
  let text = fs.readFileSync(registry, 'utf8');
  text = replaceOnce(
    text,
    "import { copilotCli } from './copilot-cli/index.ts';\n",
    "import { copilotCli } from './copilot-cli/index.ts';\nimport { stub } from './stub/index.ts';\n",
  );
  text = replaceOnce(text, '[claudeCode, codex, copilotCli]', '[claudeCode, codex, copilotCli, stub]');
  fs.writeFileSync(registry, text);

  const typecheck = await runProcess(
    process.execPath,
    [path.join(PROJECT_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', path.join(copy, 'tsconfig.json')],
    { timeoutMs: 240_000 },
  );
  if (typecheck.code !== 0) throw new Error(`the copy with the stub client does not type-check:\n${typecheck.stdout}${typecheck.stderr}`);
  const build = await runProcess(process.execPath, [path.join(copy, 'scripts', 'build.mjs')], { cwd: copy, timeoutMs: 120_000 });
  if (build.code !== 0) throw new Error(`the copy with the stub client does not build:\n${build.stdout}${build.stderr}`);
}, 400_000);

afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe('a third client: its folder plus its registry entry', () => {
  it('is all that changed in the sources', () => {
    const before = tree(path.join(PROJECT_ROOT, 'src'));
    const after = tree(path.join(copy, 'src'));
    const changed = [...after.keys()].filter((file) => before.get(file) !== after.get(file)).sort();
    const removed = [...before.keys()].filter((file) => !after.has(file));
    expect(changed).toEqual(['clients/registry.ts', 'clients/stub/index.ts', 'clients/stub/install.ts']);
    expect(removed).toEqual([]);
  });

  it('appears in the help texts of baton, baton hook and baton install-hooks', async () => {
    const main = await baton(['--help']);
    expect(main.code).toBe(0);
    expect(main.stdout).toContain('  hook <claude-code|codex|copilot-cli|stub> [--event NAME]');
    expect(main.stdout).toContain('  install-hooks <claude-code|codex|copilot-cli|stub>');
    const hook = await baton(['hook', '--help']);
    expect(hook.stdout).toMatch(/^Usage: baton hook <claude-code\|codex\|copilot-cli\|stub> /);
    const install = await baton(['install-hooks', '--help']);
    expect(install.code).toBe(0);
    const help = install.stdout.replace(/\s+/g, ' ');
    expect(help).toContain('claude-code, codex, copilot-cli or stub');
    expect(help).toContain('--no-stub-allow stub: leave .stub/allow.json alone');
    expect(help).toContain('stub, nothing to trust');
    expect(help).toContain('and for Codex the sandbox settings baton needs, for Stub Agent its allow-list of commands.');
  });

  it('install-hooks stub writes its settings, profiles, instructions and its own files; a second run changes nothing', async () => {
    const root = newRepository('installed');
    const first = await baton(['install-hooks', 'stub', '--repo', root], { env: isolatedEnv() });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`baton install-hooks stub in ${root}`);
    expect(first.stdout).toContain('note: the stub agent reads .stub/allow.json when it starts');
    const settings = JSON.parse(fs.readFileSync(path.join(root, '.stub', 'hooks.json'), 'utf8'));
    expect(Object.keys(settings)).toEqual(['commands', 'hooks']);
    expect(Object.keys(settings.hooks)).toEqual(['subagent.start', 'subagent.stop', 'tool.before']);
    const command = settings.hooks['tool.before'][0].hooks[0].command as string;
    expect(command).toBe('baton hook stub --event pre-tool');
    expect(settings.commands).toEqual([`${command.replace(/ hook stub --event pre-tool$/, ' task')} *`]);
    const executor = JSON.parse(fs.readFileSync(path.join(root, '.stub', 'agents', 'agent-infra-lifecycle-executor.json'), 'utf8'));
    expect(executor.name).toBe('agent-infra-lifecycle-executor');
    expect(executor.instructions).toContain('--agent stub --content -');
    expect(executor.instructions).toContain('(the stub agent has no file tool)');
    const instructions = fs.readFileSync(path.join(root, 'STUB.md'), 'utf8');
    expect(instructions).toContain('Written by `baton install-hooks stub`');
    expect(instructions).toContain('Call spawn_subagent with that name and fork_turns "none".');
    expect(JSON.parse(fs.readFileSync(path.join(root, '.stub', 'allow.json'), 'utf8'))).toEqual({
      root,
      hooks: ['subagent.start', 'subagent.stop', 'tool.before'],
    });
    const second = await baton(['install-hooks', 'stub', '--repo', root], { env: isolatedEnv() });
    expect(second.code).toBe(0);
    // One line per file the plan covers (as many as the first install listed), each unchanged.
    const listed = (stdout: string) => stdout.split('\n').filter((line) => /^ {2}\w/.test(line));
    expect(listed(second.stdout).length).toBeGreaterThan(0);
    expect(listed(second.stdout)).toHaveLength(listed(first.stdout).length);
    expect(listed(second.stdout).filter((line) => !line.startsWith('  unchanged '))).toEqual([]);

    const without = newRepository('without-allow');
    expect((await baton(['install-hooks', 'stub', '--repo', without, '--no-stub-allow'], { env: isolatedEnv() })).code).toBe(0);
    expect(fs.existsSync(path.join(without, '.stub', 'allow.json'))).toBe(false);
  });

  it('baton hook stub turns its events into lifecycle events, answers in its own format and knows its spawning tool', async () => {
    const root = newRepository('hooked');
    const start = JSON.stringify({
      hook_event_name: 'subagent.start',
      agent_type: 'agent-infra-lifecycle-executor',
      agent_id: 'child-1',
      session_id: 'parent',
      cwd: root,
    });
    const started = await baton(['hook', 'stub', '--event', 'subagent-start'], { env: isolatedEnv(), input: start, cwd: root });
    expect(started.code, started.stderr).toBe(0);
    // No Redis is configured: the event is spooled and the user told so, in the stub's format.
    const notice = JSON.parse(started.stdout) as Record<string, string>;
    expect(Object.keys(notice)).toEqual(['stub_notice']);
    expect(notice.stub_notice).toMatch(/^baton: WARNING: no Redis is configured for .*The hook-start event was spooled to /);
    const spool = path.join(root, '.git', 'baton', 'spool');
    const [spooled] = fs.readdirSync(spool);
    const envelope = JSON.parse(fs.readFileSync(path.join(spool, spooled!), 'utf8'));
    expect(envelope).toMatchObject({
      source: 'hook',
      intent: 'hook-start',
      taskRef: 'auto',
      args: { client: 'stub', nativeAgent: 'agent-infra-lifecycle-executor', childId: 'child-1' },
    });

    const forked = JSON.stringify({
      hook_event_name: 'tool.before',
      tool_name: 'spawn_subagent',
      tool_use_id: 'call-1',
      tool_input: { agent_type: 'agent-infra-lifecycle-reviewer' },
      cwd: root,
    });
    const refused = await baton(['hook', 'stub', '--event', 'pre-tool'], { env: isolatedEnv(), input: forked, cwd: root });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      'baton: DELEGATION_FORK_FORBIDDEN: spawn mode \'fork\' is not fresh: fork_turns is not set, so the child would inherit the whole parent conversation. Spawn agent-infra-lifecycle-reviewer fresh (fork_turns: "none").\n',
    );
  });

  it('drives a complete lifecycle with stub hooks: baton demo --client stub', async () => {
    const demo = await baton(['demo', '--client', 'stub', '--redis', redisUrl, '--prefix', uniquePrefix('third-client')], {
      env: isolatedEnv(),
      timeoutMs: 90_000,
    });
    expect(demo.code, `${demo.stdout}\n${demo.stderr}`).toBe(0);
    expect(demo.stdout).toContain('driving the lifecycle with stub hooks');
    expect(demo.stdout).toMatch(/run TASK-20260101-000001 completed in [\d.]+ s: 7\/24 steps, 7 delegations/);
  }, 100_000);
});
