import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentsLine } from '../../src/cli/wiredClients.ts';
import { freshGitRepo } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { runBaton } from '../support/processes.ts';

// The `agents` line of `baton start`'s banner says what is wired in the repository, and names
// `baton init` (which keeps uninstall's record) for what is not; it never sends a user to
// `baton install-hooks` (docs/usage.md "baton start").

let repo: GitRepo;
afterEach(() => repo?.cleanup());

function envFor(root: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    CODEX_HOME: path.join(root, '.git', 'codex-home'),
    CLAUDE_CONFIG_DIR: path.join(root, '.git', 'claude-home'),
    COPILOT_HOME: path.join(root, '.git', 'copilot-home'),
  };
}

describe("baton start's agents line", () => {
  it('nothing wired: run baton init', () => {
    repo = freshGitRepo();
    expect(agentsLine(repo.root)).toBe(
      "no client is wired here yet: run 'baton init' (hooks, profiles and stage guidance for claude-code, codex or copilot-cli; --client <id> for one)",
    );
  });

  it('after baton init: every client wired by init', async () => {
    repo = freshGitRepo();
    expect((await runBaton(['init'], { cwd: repo.root, env: envFor(repo.root) })).code).toBe(0);
    expect(agentsLine(repo.root)).toBe("claude-code, codex and copilot-cli wired by baton init ('baton doctor' checks the hooks start)");
  });

  it('one client wired without init (install-hooks, or a clone of a committed setup): names init for the other', async () => {
    repo = freshGitRepo();
    expect((await runBaton(['install-hooks', 'codex', '--repo', repo.root], { env: envFor(repo.root) })).code).toBe(0);
    expect(fs.existsSync(path.join(repo.root, '.git', 'baton', 'init.json'))).toBe(false);
    expect(agentsLine(repo.root)).toBe(
      "codex wired ('baton doctor' checks the hooks start); not wired: claude-code ('baton init --client claude-code'), copilot-cli ('baton init --client copilot-cli')",
    );
  });
});
