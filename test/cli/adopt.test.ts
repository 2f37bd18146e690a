import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { guidanceOwner } from '../../src/install/guidance.ts';
import { parseTypedTaskFrontmatter } from '../../src/core/frontmatter.ts';
import { userEnvIn } from '../support/agentClients.ts';
import { git } from '../support/gitRepo.ts';
import { runBaton } from '../support/processes.ts';
import { dirOutsideAnyRepository } from '../support/fixtures.ts';
import type { CliRun } from '../support/processes.ts';
import { USER_CLAUDE_MD, projectDirs, projectFiles, writeUserClaudeSetup } from '../support/projectFiles.ts';

// baton init, uninstall and new on the command line (docs/adopting.md):
// --dry-run writes nothing, --client picks the clients, --command is what the files run, a directory
// that is no git repository is refused with nothing written, uninstall gives back every byte and
// refuses an edited file of baton's without --force, agent-infra's own skills stay in charge, and
// baton new refuses bad input with nothing written.

let work: string;
let root: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-adopt-')));
  root = path.join(work, 'project');
  fs.mkdirSync(root);
  git(root, ['init', '-q']);
  // The clients' per-user files live in the test's own homes; `baton` is on PATH.
  env = userEnvIn(work);
});
afterEach(() => fs.rmSync(work, { recursive: true, force: true }));

const baton = (args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliRun> =>
  runBaton(args, { cwd: options.cwd ?? root, env: options.env ?? env });
const initRecord = () => path.join(root, '.git', 'baton', 'init.json');

describe('baton init', () => {
  it('--dry-run prints the plan and writes nothing, not even its record', async () => {
    writeUserClaudeSetup(root);
    const before = projectFiles(root);
    const run = await baton(['init', '--dry-run']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      `baton init --dry-run in ${root} (claude-code, codex, copilot-cli; the files run 'baton'): nothing written; it would`,
    );
    expect(run.stdout).toMatch(/^ {2}update +\.claude\/settings\.json$/m);
    expect(run.stdout).toMatch(/^ {2}create +\.claude\/skills\/review-analysis\/SKILL\.md$/m);
    expect(run.stdout).toMatch(/^ {2}create +\.gitignore$/m);
    expect(projectFiles(root)).toEqual(before);
    expect(projectDirs(root)).toEqual(['.claude']);
    expect(fs.existsSync(initRecord())).toBe(false);
  });

  it('--client picks the clients; an unknown one is a usage error', async () => {
    const codex = await baton(['init', '--client', 'codex']);
    expect(codex.code, codex.stderr).toBe(0);
    const files = [...projectFiles(root).keys()];
    expect(files.some((file) => file.startsWith('.codex/'))).toBe(true);
    expect(files).toContain('.agents/skills/review-code/SKILL.md');
    expect(files.some((file) => file.startsWith('.claude/') || file === 'CLAUDE.md')).toBe(false);
    const wrong = await baton(['init', '--client', 'gemini']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("baton init: unknown client 'gemini'; expected claude-code, codex, copilot-cli or all");
  });

  it('writes `baton` into every file, or the --command given; refuses a command that is not baton', async () => {
    expect((await baton(['init'])).code).toBe(0);
    const written = [...projectFiles(root).values()].join('\n');
    expect(written).toContain('"command": "baton hook claude-code"');
    expect(written).toContain(
      "baton task <task-id> complete-stage --stage analysis --round <round> --artifact <artifact> --agent claude --content - <<'BATON_ARTIFACT'",
    );
    expect(written).not.toContain(process.execPath);
    expect(written).not.toContain(work);

    const custom = await baton(['init', '--command', 'npx --no-install baton']);
    expect(custom.code, custom.stderr).toBe(0);
    const settings = JSON.parse(fs.readFileSync(path.join(root, '.codex', 'hooks.json'), 'utf8'));
    expect(settings.hooks.SubagentStop[0].hooks[0].command).toBe('npx --no-install baton hook codex --event subagent-stop');
    const bad = await baton(['init', '--command', 'node /opt/other/cli.js']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('must end in baton, baton.mjs or baton.js');
  });

  it('says how to put baton on PATH when it is not there', async () => {
    const run = await baton(['init', '--client', 'claude-code'], { env: { ...env, PATH: '/usr/bin:/bin' } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      "note: the installed hooks and agents run 'baton', which is not on PATH here, so they would fail: run 'npm link' in",
    );
  });

  it('is idempotent: a second run changes no byte', async () => {
    writeUserClaudeSetup(root);
    expect((await baton(['init'])).code).toBe(0);
    const after = projectFiles(root);
    const again = await baton(['init']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).not.toMatch(/^ {2}(created|updated) /m);
    expect(projectFiles(root)).toEqual(after);
  });

  it('refuses a directory that is not in a git repository, writing nothing', async () => {
    const outside = dirOutsideAnyRepository('not-a-repo');
    onTestFinished(() => fs.rmSync(outside, { recursive: true, force: true }));
    for (const command of [['init'], ['uninstall'], ['new', 'A task'], ['doctor']]) {
      const run = await baton(command, { cwd: outside });
      expect(run.code, command.join(' ')).toBe(1);
      expect(run.stderr).toContain('not inside a git repository');
    }
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it("leaves agent-infra's own skills in charge, and says so", async () => {
    const skill = path.join(root, '.agents', 'skills', 'analyze-task', 'SKILL.md');
    fs.mkdirSync(path.dirname(skill), { recursive: true });
    fs.writeFileSync(skill, '---\nname: analyze-task\ndescription: agent-infra\n---\n\nagent-infra analyze-task\n');
    const run = await baton(['init']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      "Codex: agent-infra's own skills are installed here (.agents/skills/analyze-task/SKILL.md): they stay in charge",
    );
    expect(run.stdout).toContain("Claude Code: agent-infra's own skills are installed here (.agents/skills/analyze-task/SKILL.md)");
    expect(fs.existsSync(path.join(root, '.claude', 'skills'))).toBe(false);
    expect(fs.readdirSync(path.join(root, '.agents', 'skills'))).toEqual(['analyze-task']);
    // The profiles then point at no guidance of baton's.
    expect(fs.readFileSync(path.join(root, '.claude', 'agents', 'agent-infra-lifecycle-executor.md'), 'utf8')).not.toContain('SKILL.md');
    expect((await baton(['uninstall'])).code).toBe(0);
    expect(fs.readFileSync(skill, 'utf8')).toContain('agent-infra analyze-task');
  });
});

describe('baton uninstall', () => {
  it("gives back every byte; keeps the task workspace; refuses an edited file of baton's without --force", async () => {
    writeUserClaudeSetup(root);
    fs.writeFileSync(path.join(root, '.gitignore'), 'node_modules/'); // no final newline
    const before = projectFiles(root);
    expect((await baton(['init'])).code).toBe(0);
    expect((await baton(['new', 'Keep me'])).code).toBe(0);
    const guidance = path.join(root, '.claude', 'skills', 'code-task', 'SKILL.md');
    fs.appendFileSync(guidance, '\nRun `make lint` too.\n');
    expect(guidanceOwner(fs.readFileSync(guidance, 'utf8'))).toBe('edited');
    const installed = projectFiles(root);

    const refused = await baton(['uninstall']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'baton uninstall: .claude/skills/code-task/SKILL.md: edited since baton init wrote it; --force removes it',
    );
    expect(refused.stderr).toContain('nothing was changed');
    expect(projectFiles(root)).toEqual(installed);
    const dry = await baton(['uninstall', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^ {2}refuse +\.claude\/skills\/code-task\/SKILL\.md/m);
    expect(projectFiles(root)).toEqual(installed);

    // init keeps the edited file too.
    const again = await baton(['init']);
    expect(again.stdout).toMatch(/^ {2}kept +\.claude\/skills\/code-task\/SKILL\.md/m);

    const forced = await baton(['uninstall', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(projectFiles(root)).toEqual(before);
    expect(projectDirs(root)).toEqual(['.agents', '.claude']);
    expect(fs.readdirSync(path.join(root, '.agents', 'workspace', 'active')).filter((name) => name.startsWith('TASK-'))).toHaveLength(1);
    expect(fs.existsSync(initRecord())).toBe(false);
  });

  it("keeps what the user changed since init, taking out only baton's part", async () => {
    writeUserClaudeSetup(root);
    expect((await baton(['init', '--client', 'claude-code'])).code).toBe(0);
    fs.appendFileSync(path.join(root, 'CLAUDE.md'), '\n## Added later\n');
    const settingsFile = path.join(root, '.claude', 'settings.json');
    const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
    settings.model = 'opus';
    fs.writeFileSync(settingsFile, `${JSON.stringify(settings, null, 2)}\n`);
    const run = await baton(['uninstall', '--client', 'claude-code']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^ {2}updated +CLAUDE\.md$/m);
    expect(fs.readFileSync(path.join(root, 'CLAUDE.md'), 'utf8')).toBe(`${USER_CLAUDE_MD}\n\n## Added later\n`);
    expect(JSON.parse(fs.readFileSync(settingsFile, 'utf8'))).toEqual({
      permissions: { allow: ['Bash(npm test)'] },
      hooks: { Stop: [{ hooks: [{ type: 'command', command: 'notify-send done' }] }] },
      model: 'opus',
    });
    expect(fs.existsSync(path.join(root, '.claude', 'skills'))).toBe(false);
  });

  it("uninstalls one client and keeps the other's files and the .gitignore line", async () => {
    expect((await baton(['init'])).code).toBe(0);
    const run = await baton(['uninstall', '--client', 'codex']);
    expect(run.code, run.stderr).toBe(0);
    const files = [...projectFiles(root).keys()];
    expect(files.some((file) => file.startsWith('.codex/') || file.startsWith('.agents/skills/') || file === 'AGENTS.md')).toBe(false);
    expect(files).toEqual(expect.arrayContaining(['.claude/settings.json', 'CLAUDE.md', '.gitignore']));
    expect((await baton(['uninstall'])).code).toBe(0);
    expect(projectFiles(root)).toEqual(new Map());
  });

  it("without the record of init (a clone of a committed setup), takes out what is baton's", async () => {
    writeUserClaudeSetup(root);
    expect((await baton(['init', '--client', 'claude-code'])).code).toBe(0);
    fs.rmSync(initRecord());
    const run = await baton(['uninstall']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('no record of baton init');
    const left = projectFiles(root);
    expect([...left.keys()].sort()).toEqual(['.claude/settings.json', '.gitignore', 'CLAUDE.md']);
    expect(left.get('CLAUDE.md')).toBe(`${USER_CLAUDE_MD}\n`);
    expect(JSON.parse(left.get('.claude/settings.json')!)).toEqual(
      JSON.parse(fs.readFileSync(path.join(root, '.claude', 'settings.json'), 'utf8')),
    );
    expect(left.get('.claude/settings.json')).not.toContain('baton');
  });
});

describe('baton new', () => {
  it('creates task.md with the frontmatter the lifecycle reads and the lowest free short id, and says what to tell the agent', async () => {
    const first = await baton(['new', 'Bound the retry budget']);
    expect(first.code, first.stderr).toBe(0);
    const [, taskId, shortId] =
      /^created (TASK-\d{8}-\d{6}) \(short id (\d+)\): \.agents\/workspace\/active\/TASK-\d{8}-\d{6}\/task\.md$/m.exec(first.stdout) ?? [];
    expect(shortId).toBe('01');
    expect(first.stdout).toContain('tell your agent:\n  Run task 01 through its lifecycle.\n');
    expect(first.stdout).toContain("note: no agent client is wired to baton here yet: run 'baton init' first");
    const text = fs.readFileSync(path.join(root, '.agents', 'workspace', 'active', taskId!, 'task.md'), 'utf8');
    expect(parseTypedTaskFrontmatter(text)).toMatchObject({
      id: taskId,
      title: 'Bound the retry budget',
      status: 'active',
      current_step: 'requirement-analysis',
    });
    const route = JSON.parse((await baton(['task', '01', 'route'])).stdout);
    expect(route.next).toMatchObject({ action: 'analyze-task', artifact: 'analysis.md' });

    const second = JSON.parse(
      (
        await baton([
          'new',
          'Title: with a colon "and quotes"',
          '--id',
          'TASK-20260101-000009',
          '--type',
          'bugfix',
          '--description',
          'Why and how.',
          '--json',
        ])
      ).stdout,
    );
    expect(second).toMatchObject({ taskId: 'TASK-20260101-000009', shortId: '02', tellTheAgent: 'Run task 02 through its lifecycle.' });
    const secondText = fs.readFileSync(path.join(root, second.taskFile), 'utf8');
    expect(parseTypedTaskFrontmatter(secondText)).toMatchObject({
      title: 'Title: with a colon "and quotes"',
      type: 'bugfix',
      workflow: 'bug-fix',
    });
    expect(secondText).toContain('\nWhy and how.\n');
    expect(JSON.parse(fs.readFileSync(path.join(root, '.agents', 'workspace', 'active', '.short-ids.json'), 'utf8'))).toEqual({
      version: 1,
      ids: { '01': taskId, '02': 'TASK-20260101-000009' },
    });
  });

  it('refuses bad input with a clear error and writes nothing', async () => {
    expect((await baton(['new', 'First', '--id', 'TASK-20260101-000001'])).code).toBe(0);
    const snapshot = () =>
      JSON.stringify(
        [...projectFiles(root)].concat([...fs.readdirSync(path.join(root, '.agents', 'workspace', 'active'))].map((name) => [name, ''])),
      );
    const before = snapshot();
    const cases: Array<[string[], number, string]> = [
      [['new', '   '], 2, 'the title is empty'],
      [['new', 'two\nlines'], 2, 'the title must be one line'],
      [['new', 'x'.repeat(201)], 2, 'longer than 200 characters'],
      [['new', 'Bad id', '--id', 'TASK-1'], 2, "--id 'TASK-1' is not a task id"],
      [['new', 'Again', '--id', 'TASK-20260101-000001'], 1, 'task TASK-20260101-000001 exists already (in active)'],
      [['new', 'Typed', '--type', 'epic'], 2, 'must be one of feature, bugfix, refactor, docs, chore'],
      [['new'], 2, "missing required argument 'title'"],
    ];
    for (const [args, code, message] of cases) {
      const run = await baton(args);
      expect(run.code, args.join(' ')).toBe(code);
      expect(run.stderr).toContain(message);
    }
    fs.writeFileSync(path.join(root, '.agents', 'workspace', 'active', '.short-ids.json'), '{ not json');
    const broken = await baton(['new', 'With a broken registry']);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('SHORT_ID_REGISTRY_INVALID_JSON');
    expect(broken.stderr).toContain('Nothing was written');
    fs.writeFileSync(
      path.join(root, '.agents', 'workspace', 'active', '.short-ids.json'),
      `${JSON.stringify({ version: 1, ids: { '01': 'TASK-20260101-000001' } }, null, 2)}\n`,
    );
    expect(snapshot()).toBe(before);
  });
});
