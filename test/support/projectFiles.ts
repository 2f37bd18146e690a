import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { userEnvIn } from './agentClients.ts';
import { git } from './gitRepo.ts';

// A user's project as the adoption tests see it (docs/adopting.md): every file's bytes, apart from
// git's directory and baton's task workspace, so that "byte-identical after uninstall" is one
// comparison, and "names no path of this machine" one scan.

/** Every file below `root` with its bytes, relative paths in POSIX form, `.git/` and `.agents/workspace/` aside. */
export function projectFiles(root: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const relative = path.relative(root, full).split(path.sep).join('/');
      if (relative === '.git' || relative === '.agents/workspace') continue;
      if (entry.isDirectory()) walk(full);
      else files.set(relative, fs.readFileSync(full, 'latin1'));
    }
  };
  walk(root);
  return files;
}

/** The directories below `root`, `.git/` and `.agents/workspace/` aside (uninstall leaves none of init's behind). */
export function projectDirs(root: string): string[] {
  const dirs: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const relative = path.relative(root, path.join(dir, entry.name)).split(path.sep).join('/');
      if (relative === '.git' || relative === '.agents/workspace') continue;
      dirs.push(relative);
      walk(path.join(dir, entry.name));
    }
  };
  walk(root);
  return dirs.sort();
}

/** A user's own Claude Code setup: a permission and a Stop hook in .claude/settings.json, and a CLAUDE.md. */
export const USER_CLAUDE_SETTINGS = `{
    "permissions": { "allow": ["Bash(npm test)"] },
    "hooks": {
        "Stop": [{ "hooks": [{ "type": "command", "command": "notify-send done" }] }]
    }
}
`;
export const USER_CLAUDE_MD = '# My project\n\nTabs, not spaces.';

export function writeUserClaudeSetup(root: string): void {
  fs.mkdirSync(path.join(root, '.claude'), { recursive: true });
  fs.writeFileSync(path.join(root, '.claude', 'settings.json'), USER_CLAUDE_SETTINGS);
  fs.writeFileSync(path.join(root, 'CLAUDE.md'), USER_CLAUDE_MD);
}

export type ProjectWorld = Readonly<{ work: string; root: string; env: NodeJS.ProcessEnv }>;

/**
 * For each test of the file, a fresh directory `work` (removed after it) holding a git repository
 * `project` (`root`); in `env`, the clients' per-user homes below `work` and `baton` on PATH.
 */
export function useProjectPerTest(label: string, use: (made: ProjectWorld) => void): void {
  let work: string | null = null;
  beforeEach(() => {
    work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `baton-${label}-`)));
    const root = path.join(work, 'project');
    fs.mkdirSync(root);
    git(root, ['init', '-q']);
    use({ work, root, env: userEnvIn(work) });
  });
  afterEach(() => {
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });
}
