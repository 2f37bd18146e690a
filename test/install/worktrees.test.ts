import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from '@decimalturn/toml-patch';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { userEnvIn } from '../support/agentClients.ts';
import { claudeGlobalConfigFile } from '../../src/clients/claude-code/trust.ts';
import { freshGitRepo, git, linkedWorktree } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { runBaton, runProcess } from '../support/processes.ts';

// `baton init` once in the main checkout, its files committed, then `git worktree add` (docs/adopting.md
// "Worktrees"): every worktree checks out the same files, which name no path of any checkout; the
// one file that needs a path of its own checkout (Codex's sandbox roots of a linked worktree) is
// fixed by `baton init` in that worktree, and `baton uninstall` there touches no other checkout.

const CODEX = createRequire(import.meta.url).resolve('@openai/codex/bin/codex.js');
const CLIENTS = ['--client', 'claude-code', '--client', 'codex', '--client', 'copilot-cli'];

let work: string;
let main: GitRepo;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  main = freshGitRepo();
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-wt-install-')));
  env = userEnvIn(work);
});
afterEach(() => {
  // The linked worktrees the tests added beside the main checkout (linkedWorktree: <main>-<name>).
  const parent = path.dirname(main.root);
  for (const name of fs.readdirSync(parent))
    if (name.startsWith(`${path.basename(main.root)}-`)) fs.rmSync(path.join(parent, name), { recursive: true, force: true });
  main.cleanup();
  fs.rmSync(work, { recursive: true, force: true });
});

const baton = (at: string, args: string[]) => runBaton(args, { cwd: at, env });
/** Every file git tracks in the checkout at `root`, with its text. */
const tracked = (root: string) =>
  Object.fromEntries(
    git(root, ['ls-files'])
      .split('\n')
      .filter(Boolean)
      .map((file) => [file, fs.readFileSync(path.join(root, file), 'utf8')]),
  );
const codexRoots = (root: string) =>
  (parse(fs.readFileSync(path.join(root, '.codex', 'config.toml'), 'utf8')) as any).sandbox_workspace_write.writable_roots as string[];

/** `git commit` of a new file inside Codex's workspace-write sandbox in `root` (the commit stage's command). */
async function commitInCodexSandbox(root: string): Promise<string> {
  fs.writeFileSync(path.join(root, 'sandboxed.txt'), 'x\n');
  const script = 'git add sandboxed.txt && git -c user.name=t -c user.email=t@t commit -qm sandboxed && echo COMMITTED';
  const run = await runProcess(
    process.execPath,
    [CODEX, 'sandbox', '-c', 'sandbox_mode="workspace-write"', '--', '/bin/sh', '-c', script],
    {
      cwd: root,
      env: { ...env, RUST_LOG: 'error', NO_COLOR: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
      timeoutMs: 30_000,
    },
  );
  return `${run.stdout}${run.stderr}`;
}

describe('baton init and baton uninstall with linked worktrees', () => {
  it('files installed once in the main checkout and committed serve every worktree: no path of any checkout in them', async () => {
    const init = await baton(main.root, ['init', ...CLIENTS]);
    expect(init.code, init.stderr).toBe(0);
    git(main.root, ['add', '-A']);
    git(main.root, ['commit', '-qm', 'baton init']);
    const a = linkedWorktree(main, 'a');
    const b = linkedWorktree(main, 'b');
    const base = path.dirname(main.root);
    for (const at of [main.root, a.root, b.root]) {
      const files = tracked(at);
      expect(Object.keys(files)).toContain('.claude/settings.json');
      for (const [file, text] of Object.entries(files)) expect(text.includes(base), `${at}: ${file}`).toBe(false);
    }
    // The hook commands are plain `baton …`, the same in every checkout.
    expect(fs.readFileSync(path.join(a.root, '.claude', 'settings.json'), 'utf8')).toBe(
      fs.readFileSync(path.join(main.root, '.claude', 'settings.json'), 'utf8'),
    );
    expect(codexRoots(b.root)).toEqual(['../.agents', '../.git']);
  });

  it('Codex: in a linked worktree the main checkout\'s "../.git" breaks the sandbox; baton init there names the worktree\'s git dirs and commits work', async () => {
    // No trust from the main checkout: what the clients read in a worktree comes from its own `--trust`.
    expect((await baton(main.root, ['init', ...CLIENTS])).code).toBe(0);
    git(main.root, ['add', '-A']);
    git(main.root, ['commit', '-qm', 'baton init']);
    const a = linkedWorktree(main, 'a');
    const b = linkedWorktree(main, 'b');
    const mainFiles = tracked(main.root);
    const bFiles = tracked(b.root);
    // Codex reads the worktree's .codex/config.toml only in a trusted project.
    const trusted = await baton(a.root, ['init', ...CLIENTS, '--trust']);
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.stdout).toMatch(/updated\s+\.codex\/config\.toml/);
    expect(trusted.stderr + trusted.stdout).toContain("names this checkout's git directories");
    // Claude Code keys a worktree's workspace trust by its main repository (docs/clients.md "Linked worktrees").
    const claudeConfig = JSON.parse(fs.readFileSync(claudeGlobalConfigFile(env), 'utf8'));
    expect(claudeConfig.projects[main.root]).toMatchObject({ hasTrustDialogAccepted: true });
    expect(trusted.stdout + trusted.stderr).toContain("Codex runs the hooks of the main checkout's .codex/hooks.json in a linked worktree");
    const common = fs.realpathSync(path.join(main.root, '.git'));
    expect(codexRoots(a.root)).toEqual(['../.agents', common, path.join(common, 'worktrees', path.basename(a.root))]);
    expect(git(a.root, ['status', '--short', '--untracked-files=no'])).toBe(' M .codex/config.toml\n');
    expect(await commitInCodexSandbox(a.root)).toContain('COMMITTED');
    // b has only the committed file: Codex 0.171's sandbox cannot mount "../.git" (a file there).
    expect((await baton(b.root, ['init', ...CLIENTS, '--trust', '--no-sandbox-config'])).code).toBe(0);
    expect(await commitInCodexSandbox(b.root)).toMatch(/Not a directory/);
    expect(tracked(main.root)).toEqual(mainFiles);
    expect({ ...tracked(b.root), 'sandboxed.txt': undefined }).toEqual({ ...bFiles, 'sandboxed.txt': undefined });
  }, 120_000);

  it('baton uninstall in one worktree takes baton out of that worktree only; the main checkout and the other worktree keep theirs', async () => {
    expect((await baton(main.root, ['init', ...CLIENTS])).code).toBe(0);
    git(main.root, ['add', '-A']);
    git(main.root, ['commit', '-qm', 'baton init']);
    const a = linkedWorktree(main, 'a');
    const b = linkedWorktree(main, 'b');
    expect((await baton(a.root, ['init', ...CLIENTS])).code).toBe(0);
    expect((await baton(b.root, ['init', ...CLIENTS])).code).toBe(0);
    const before = { main: tracked(main.root), b: tracked(b.root), bConfig: codexRoots(b.root) };
    const removed = await baton(a.root, ['uninstall']);
    expect(removed.code, removed.stderr).toBe(0);
    // baton is out of a (the committed files too: uninstall removes baton from the checkout it runs in) …
    expect(fs.existsSync(path.join(a.root, '.claude', 'settings.json'))).toBe(false);
    expect(git(a.root, ['status', '--short', '--untracked-files=no'])).toContain(' D .codex/hooks.json\n');
    // … and nowhere else.
    expect(tracked(main.root)).toEqual(before.main);
    expect(tracked(b.root)).toEqual(before.b);
    expect(codexRoots(b.root)).toEqual(before.bConfig);
    // The main checkout's own record is untouched: its uninstall still takes out everything it put in.
    const mainUninstall = await baton(main.root, ['uninstall']);
    expect(mainUninstall.code, mainUninstall.stderr).toBe(0);
    expect(fs.existsSync(path.join(main.root, '.claude', 'settings.json'))).toBe(false);
    expect(fs.existsSync(path.join(b.root, '.claude', 'settings.json'))).toBe(true);
  });

  it("baton new --worktree: the new worktree's Codex sandbox roots name its own git directories, and the note says so", async () => {
    expect((await baton(main.root, ['init', '--client', 'codex'])).code).toBe(0);
    git(main.root, ['add', '-A']);
    git(main.root, ['commit', '-qm', 'baton init']);
    const dir = `${main.root}-fix-sandbox`;
    onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
    const created = await baton(main.root, ['new', 'Sandbox roots', '--worktree', 'fix/sandbox', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const common = fs.realpathSync(path.join(main.root, '.git'));
    const own = path.join(common, 'worktrees', path.basename(dir));
    expect(codexRoots(dir)).toEqual(['../.agents', common, own]);
    expect(JSON.parse(created.stdout).notes[0]).toContain(`names its own git directories (${common} and ${own})`);
    expect(codexRoots(main.root)).toEqual(['../.agents', '../.git']);
  });
});
