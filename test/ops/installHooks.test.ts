import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempRepo } from '../support/fixtures.ts';
import type { Fixture } from '../support/fixtures.ts';
import { batonShimDir } from '../support/agentClients.ts';
import { runBaton } from '../support/processes.ts';

// `baton install-hooks`: merges into the client's settings without clobbering, writes the
// lifecycle subagent profiles, changes nothing on a second run, and refuses unreadable settings.

let repo: Fixture;
let codexHome: string;
beforeEach(() => {
  codexHome = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-codex-home-'));
});
afterEach(() => {
  repo.cleanup();
  fs.rmSync(codexHome, { recursive: true, force: true });
});
/** install-hooks never touches the real ~/.codex or ~/.claude.json in tests. */
const install = (args: string[], options: { cwd?: string } = {}) =>
  runBaton(['install-hooks', ...args], {
    ...options,
    env: { ...process.env, CODEX_HOME: codexHome, CLAUDE_CONFIG_DIR: codexHome, COPILOT_HOME: codexHome },
  });

// The installed files run `baton`, found on PATH: no path of this machine.
const command = (client: string, ...extra: string[]) => ['baton', 'hook', client, ...extra].join(' ');

function snapshot(root: string): Map<string, { bytes: string; mtimeMs: number }> {
  const files = new Map<string, { bytes: string; mtimeMs: number }>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else files.set(path.relative(root, file), { bytes: fs.readFileSync(file, 'utf8'), mtimeMs: fs.statSync(file).mtimeMs });
    }
  };
  for (const dir of ['.claude', '.codex']) if (fs.existsSync(path.join(root, dir))) walk(path.join(root, dir));
  for (const file of ['CLAUDE.md', 'AGENTS.md']) {
    if (fs.existsSync(path.join(root, file)))
      files.set(file, { bytes: fs.readFileSync(path.join(root, file), 'utf8'), mtimeMs: fs.statSync(path.join(root, file)).mtimeMs });
  }
  return files;
}

const USER_SETTINGS = {
  // baton's rule from an older checkout: replaced in place
  permissions: { allow: ['Bash(npm test)', 'Bash(node /old/checkout/bin/baton.mjs task *)', 'Read(./docs/**)'] },
  hooks: {
    PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'node .agents/hooks/check-version-format.js' }] }],
    SubagentStart: [
      { matcher: 'my-own-agent', hooks: [{ type: 'command', command: 'echo started' }] },
      {
        matcher: 'agent-infra-lifecycle-(executor|reviewer)',
        hooks: [
          { type: 'command', command: 'echo mine too' },
          // baton's entry from an older checkout: replaced, not duplicated
          { type: 'command', command: 'node /old/checkout/bin/baton.mjs hook claude-code', timeout: 5 },
        ],
      },
    ],
    StopFailure: [{ hooks: [{ type: 'command', command: 'node .agents/hooks/auto-resume.js' }] }],
  },
  model: 'opus',
};

describe('baton install-hooks claude-code', () => {
  it("merges into an existing .claude/settings.json, keeping the user's hooks and replacing only baton's own", async () => {
    repo = tempRepo();
    fs.mkdirSync(path.join(repo.root, '.claude'));
    // four-space indentation: the file keeps its style
    fs.writeFileSync(path.join(repo.root, '.claude', 'settings.json'), `${JSON.stringify(USER_SETTINGS, null, 4)}\n`);
    const run = await install(['claude-code', '--repo', repo.root]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/updated\s+\.claude\/settings\.json/);
    expect(run.stdout).toMatch(/created\s+\.claude\/agents\/agent-infra-lifecycle-executor\.md/);
    expect(run.stdout).toMatch(/created\s+\.claude\/agents\/agent-infra-lifecycle-reviewer\.md/);

    const text = fs.readFileSync(path.join(repo.root, '.claude', 'settings.json'), 'utf8');
    expect(text).toMatch(/^\{\n {4}"permissions"/);
    const settings = JSON.parse(text);
    // The subagents' and the orchestrator's `baton task …` may run without a prompt (claude -p refuses unapproved Bash).
    const baton = 'baton';
    expect(settings.permissions).toEqual({ allow: ['Bash(npm test)', `Bash(${baton} task *)`, 'Read(./docs/**)'] });
    expect(settings.model).toBe('opus');
    expect(settings.hooks.StopFailure).toEqual(USER_SETTINGS.hooks.StopFailure);
    const ours = { type: 'command', command: command('claude-code'), timeout: 10 };
    expect(settings.hooks.PreToolUse).toEqual([USER_SETTINGS.hooks.PreToolUse[0], { matcher: 'Task|Agent', hooks: [ours] }]);
    expect(settings.hooks.SubagentStart).toEqual([
      USER_SETTINGS.hooks.SubagentStart[0],
      { matcher: 'agent-infra-lifecycle-(executor|reviewer)', hooks: [{ type: 'command', command: 'echo mine too' }] },
      { matcher: 'agent-infra-lifecycle-(executor|reviewer)', hooks: [ours] },
    ]);
    expect(settings.hooks.SubagentStop).toEqual([{ matcher: 'agent-infra-lifecycle-(executor|reviewer)', hooks: [ours] }]);
    expect(text).not.toContain('/old/checkout');
    expect(text).not.toContain(process.execPath);

    for (const role of ['executor', 'reviewer']) {
      const profile = fs.readFileSync(path.join(repo.root, '.claude', 'agents', `agent-infra-lifecycle-${role}.md`), 'utf8');
      expect(profile).toMatch(new RegExp(`^---\\nname: agent-infra-lifecycle-${role}\\ndescription: ".+"\\n---\\n`));
    }
    const reviewer = fs.readFileSync(path.join(repo.root, '.claude', 'agents', 'agent-infra-lifecycle-reviewer.md'), 'utf8');
    expect(reviewer).toContain('Run only the requested review-* skill');
    expect(reviewer).toContain('Do not modify business code');
    expect(reviewer).toContain('Stop after the review is recorded');
    const executor = fs.readFileSync(path.join(repo.root, '.claude', 'agents', 'agent-infra-lifecycle-executor.md'), 'utf8');
    expect(executor).toContain('Run only the requested non-review lifecycle skill');
    expect(executor).toContain('Never run a review-* skill');
    // The artifact goes to baton on stdin, with the installed command.
    for (const profile of [executor, reviewer]) {
      expect(profile).toContain(
        `${baton} task <task> complete-stage --stage <stage> --round <round> --artifact <artifact> --agent claude --content - <<'BATON_ARTIFACT'`,
      );
      expect(profile).toContain("Claude Code refuses a subagent's Write of report-like files such as `analysis.md`");
    }
    expect(executor).toContain(`${baton} task <task> stage-completed --agent claude`);
    // The orchestrator instructions, in CLAUDE.md.
    const claudeMd = fs.readFileSync(path.join(repo.root, 'CLAUDE.md'), 'utf8');
    expect(claudeMd.startsWith('<!-- baton:orchestrator:begin -->\n## Agent-infra task lifecycle (driven by baton)\n')).toBe(true);
    expect(claudeMd.endsWith('<!-- baton:orchestrator:end -->\n')).toBe(true);
    expect(claudeMd).toContain(`${baton} task <task> prepare --client claude-code`);
    expect(claudeMd).toContain('`run_in_background: false`');
  });

  it("keeps the user's CLAUDE.md around baton's block and replaces only the block on a later run", async () => {
    repo = tempRepo();
    const mine = '# Project rules\n\nUse tabs.\n';
    fs.writeFileSync(path.join(repo.root, 'CLAUDE.md'), mine);
    expect((await install(['claude-code', '--repo', repo.root])).code).toBe(0);
    const first = fs.readFileSync(path.join(repo.root, 'CLAUDE.md'), 'utf8');
    expect(first.startsWith(`${mine}\n<!-- baton:orchestrator:begin -->\n`)).toBe(true);
    // An older block in the middle of the file, with user text after it: replaced in place.
    const block = first.slice(mine.length + 1);
    fs.writeFileSync(
      path.join(repo.root, 'CLAUDE.md'),
      `${mine}\n<!-- baton:orchestrator:begin -->\nold text\n<!-- baton:orchestrator:end -->\n\n## Later\n\nMore rules.\n`,
    );
    const again = await install(['claude-code', '--repo', repo.root]);
    expect(again.stdout).toMatch(/updated\s+CLAUDE\.md/);
    expect(fs.readFileSync(path.join(repo.root, 'CLAUDE.md'), 'utf8')).toBe(`${mine}\n${block}\n## Later\n\nMore rules.\n`);
    // --no-instructions leaves CLAUDE.md alone.
    fs.writeFileSync(path.join(repo.root, 'CLAUDE.md'), mine);
    const none = await install(['claude-code', '--repo', repo.root, '--no-instructions']);
    expect(none.stdout).not.toContain('CLAUDE.md');
    expect(fs.readFileSync(path.join(repo.root, 'CLAUDE.md'), 'utf8')).toBe(mine);
  });

  it('is idempotent: a second run reports unchanged and leaves every byte (and mtime) alone', async () => {
    repo = tempRepo();
    fs.mkdirSync(path.join(repo.root, '.claude'));
    fs.writeFileSync(path.join(repo.root, '.claude', 'settings.json'), `${JSON.stringify(USER_SETTINGS, null, 2)}\n`);
    expect((await install(['claude-code', '--repo', repo.root])).code).toBe(0);
    const before = snapshot(repo.root);
    const again = await install(['claude-code'], { cwd: repo.root });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.match(/unchanged/g)).toHaveLength(4);
    expect(again.stdout).not.toMatch(/\b(created|updated)\b/);
    expect(snapshot(repo.root)).toEqual(before);
  });

  it('refuses invalid JSON in the settings with a clear error and writes nothing', async () => {
    repo = tempRepo();
    fs.mkdirSync(path.join(repo.root, '.claude'));
    const broken = '{ "hooks": { "PreToolUse": [ ,] }\n';
    fs.writeFileSync(path.join(repo.root, '.claude', 'settings.json'), broken);
    const run = await install(['claude-code', '--repo', repo.root]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('.claude/settings.json is not valid JSON');
    expect(run.stderr).toContain('Nothing was written');
    expect(fs.readFileSync(path.join(repo.root, '.claude', 'settings.json'), 'utf8')).toBe(broken);
    expect(fs.existsSync(path.join(repo.root, '.claude', 'agents'))).toBe(false);

    fs.writeFileSync(path.join(repo.root, '.claude', 'settings.json'), '{ "hooks": [] }\n');
    const shape = await install(['claude-code', '--repo', repo.root]);
    expect(shape.code).toBe(1);
    expect(shape.stderr).toContain('unexpected shape at hooks');
    expect(fs.existsSync(path.join(repo.root, '.claude', 'agents'))).toBe(false);
  });

  it('installs a hook command that starts fast and really is baton: it blocks an unprepared lifecycle spawn', async () => {
    repo = tempRepo();
    expect((await install(['claude-code', '--repo', repo.root])).code).toBe(0);
    // `baton` on PATH, as an installed package puts it there.
    const shims = batonShimDir(path.join(codexHome, 'shims'));
    const settings = JSON.parse(fs.readFileSync(path.join(repo.root, '.claude', 'settings.json'), 'utf8'));
    const hookCommand: string = settings.hooks.PreToolUse[0].hooks[0].command;
    const runHook = (payload: object) => {
      const started = performance.now();
      const result = spawnSync('/bin/sh', ['-c', hookCommand], {
        cwd: repo.root,
        input: JSON.stringify(payload),
        encoding: 'utf8',
        env: { ...process.env, PATH: `${shims}:${process.env.PATH}`, REDIS_URL: 'unix:///nonexistent/redis.sock' },
      });
      return { ...result, ms: performance.now() - started };
    };
    const other = runHook({
      hook_event_name: 'SubagentStart',
      agent_id: 'x',
      agent_type: 'general-purpose',
      session_id: 's',
      cwd: repo.root,
    });
    expect(other.status, other.stderr).toBe(0);
    expect(other.ms).toBeLessThan(2_000);
    const spawn = runHook({
      hook_event_name: 'PreToolUse',
      tool_name: 'Task',
      tool_input: { subagent_type: 'agent-infra-lifecycle-executor' },
      session_id: 's',
      cwd: repo.root,
    });
    expect(spawn.status).toBe(2);
    expect(spawn.stderr).toContain('no lifecycle delegation is prepared');
  });
});

describe('baton install-hooks codex', () => {
  it('merges into .codex/hooks.json, writes the TOML profiles, and is idempotent', async () => {
    repo = tempRepo();
    fs.mkdirSync(path.join(repo.root, '.codex'));
    const user = { hooks: { SessionStart: [{ matcher: 'startup', hooks: [{ type: 'command', command: 'echo hi', timeout: 3 }] }] } };
    fs.writeFileSync(path.join(repo.root, '.codex', 'hooks.json'), `${JSON.stringify(user, null, 2)}\n`);
    const run = await install(['codex', '--repo', repo.root]);
    expect(run.code, run.stderr).toBe(0);
    const hooks = JSON.parse(fs.readFileSync(path.join(repo.root, '.codex', 'hooks.json'), 'utf8')).hooks;
    // The user's SessionStart hook stays as it was; baton's (for a headless reviewer it starts) comes after it.
    expect(hooks.SessionStart).toEqual([
      ...user.hooks.SessionStart,
      { hooks: [{ type: 'command', command: command('codex', '--event', 'session-start'), timeout: 10 }] },
    ]);
    expect(hooks.Stop).toEqual([{ hooks: [{ type: 'command', command: command('codex', '--event', 'session-stop'), timeout: 10 }] }]);
    const lifecycle = '^agent-infra-lifecycle-(executor|reviewer)$';
    expect(hooks.SubagentStart).toEqual([
      { matcher: lifecycle, hooks: [{ type: 'command', command: command('codex', '--event', 'subagent-start'), timeout: 10 }] },
    ]);
    expect(hooks.SubagentStop).toEqual([
      { matcher: lifecycle, hooks: [{ type: 'command', command: command('codex', '--event', 'subagent-stop'), timeout: 10 }] },
    ]);
    expect(hooks.PreToolUse).toHaveLength(1);
    expect(new RegExp(hooks.PreToolUse[0].matcher).test('spawn_agent')).toBe(true);
    expect(new RegExp(hooks.PreToolUse[0].matcher).test('collaborationspawn_agent')).toBe(true);
    expect(new RegExp(hooks.PreToolUse[0].matcher).test('shell')).toBe(false);
    expect(hooks.PreToolUse[0].hooks[0].command).toBe(command('codex', '--event', 'pre-tool'));
    for (const role of ['executor', 'reviewer']) {
      const toml = fs.readFileSync(path.join(repo.root, '.codex', 'agents', `agent-infra-lifecycle-${role}.toml`), 'utf8');
      expect(toml).toMatch(
        new RegExp(`^name = "agent-infra-lifecycle-${role}"\\ndescription = ".+"\\ndeveloper_instructions = '''\\n[^]+'''\\n$`),
      );
    }
    const before = snapshot(repo.root);
    const again = await install(['codex', '--repo', repo.root]);
    expect(again.stdout.match(/unchanged/g)).toHaveLength(5);
    expect(snapshot(repo.root)).toEqual(before);
  });

  it('refuses an unknown client', async () => {
    repo = tempRepo();
    const run = await install(['gemini-cli', '--repo', repo.root]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown client 'gemini-cli'");
  });
});
