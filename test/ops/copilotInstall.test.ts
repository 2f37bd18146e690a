import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { batonShimDir } from '../support/agentClients.ts';
import { freshGitRepo } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { useRepoWithClientHome } from '../support/clientHome.ts';
import { runBaton } from '../support/processes.ts';

// What `baton init --client copilot-cli` writes (docs/wiring.md "Copilot CLI"), in a repository
// whose own Copilot settings already exist: baton's hooks join them, its profiles and instructions
// are written, --trust adds the folder to the user's trustedFolders, a second run changes nothing,
// and `baton uninstall` gives the user's settings back byte for byte.

let repo: GitRepo;
let home: string;
useRepoWithClientHome('copilot', freshGitRepo, (made) => ({ repo, home } = made));

// `baton` on PATH (the installed hooks run it), and Copilot's config in a home of the test's own.
const env = () => ({ ...process.env, COPILOT_HOME: home, PATH: `${batonShimDir(path.join(home, 'shims'))}:${process.env.PATH}` });
const read = (file: string) => fs.readFileSync(path.join(repo.root, file), 'utf8');

// A user's own repository settings: JSONC, tabs, a hook of theirs, a key baton does not know.
const USER_SETTINGS =
  '{\n\t// ours\n\t"model": "gpt-5",\n\t"hooks": {\n\t\t"sessionStart": [{ "hooks": [{ "type": "command", "command": "echo hi" }] }]\n\t}\n}\n';

describe('baton init --client copilot-cli', () => {
  it('writes its hooks, profiles and instructions beside the user settings; --trust; again: nothing; uninstall: the user bytes back', async () => {
    fs.mkdirSync(path.join(repo.root, '.github', 'copilot'), { recursive: true });
    fs.writeFileSync(path.join(repo.root, '.github/copilot/settings.json'), USER_SETTINGS);

    const first = await runBaton(['init', '--client', 'copilot-cli', '--trust'], { cwd: repo.root, env: env() });
    expect(first.code, first.stderr).toBe(0);
    const settings = read('.github/copilot/settings.json');
    expect(settings.startsWith('{\n\t// ours\n\t"model": "gpt-5",\n')).toBe(true);
    const hooks = JSON.parse(settings.replace('\t// ours\n', '')).hooks;
    expect(Object.keys(hooks)).toEqual(['sessionStart', 'subagentStart', 'subagentStop', 'preToolUse']);
    expect(hooks.preToolUse).toEqual([
      { matcher: '^task$', hooks: [{ type: 'command', command: 'baton hook copilot-cli --event pre-tool', timeout: 10 }] },
    ]);
    expect(hooks.subagentStop[0].hooks[0].command).toBe('baton hook copilot-cli --event subagent-stop');
    expect(read('.github/agents/agent-infra-lifecycle-executor.agent.md')).toMatch(
      /^---\nname: agent-infra-lifecycle-executor\ndescription: /,
    );
    expect(read('.github/agents/agent-infra-lifecycle-reviewer.agent.md')).toContain('--agent copilot --content -');
    expect(read('.github/copilot-instructions.md')).toContain('baton task <task> prepare --client copilot-cli');
    expect(read('.github/skills/analyze-task/SKILL.md')).toContain('baton lifecycle, analysis stage (executor)');
    expect(JSON.parse(fs.readFileSync(path.join(home, 'config.json'), 'utf8'))).toEqual({ trustedFolders: [repo.root] });

    const again = await runBaton(['init', '--client', 'copilot-cli', '--trust'], { cwd: repo.root, env: env() });
    expect(again.code, again.stderr).toBe(0);
    expect(read('.github/copilot/settings.json')).toBe(settings);
    expect(JSON.parse(fs.readFileSync(path.join(home, 'config.json'), 'utf8'))).toEqual({ trustedFolders: [repo.root] });

    const doctor = await runBaton(['doctor', '--json'], { cwd: repo.root, env: env(), timeoutMs: 60_000 });
    const checks = JSON.parse(doctor.stdout).checks as Array<{ check: string; status: string }>;
    expect(checks.filter((check) => check.check.endsWith('copilot-cli'))).toEqual([
      expect.objectContaining({ check: 'hooks copilot-cli', status: 'ok' }),
      expect.objectContaining({ check: 'trust copilot-cli', status: 'ok' }),
    ]);

    const removed = await runBaton(['uninstall', '--client', 'copilot-cli'], { cwd: repo.root, env: env() });
    expect(removed.code, removed.stderr).toBe(0);
    expect(read('.github/copilot/settings.json')).toBe(USER_SETTINGS);
    expect(fs.existsSync(path.join(repo.root, '.github/agents'))).toBe(false);
    expect(fs.existsSync(path.join(repo.root, '.github/copilot-instructions.md'))).toBe(false);
  });
});
