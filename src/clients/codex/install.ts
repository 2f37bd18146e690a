import path from 'node:path';
import { parse } from '@decimalturn/toml-patch';
import type { ClientInstaller, InstallContext } from '../installer.ts';
import {
  codexHome,
  codexHookHash,
  codexHookKey,
  trustState,
  withCodexTrust,
  withSandboxSettings,
  withoutSandboxSettings,
} from './config.ts';

// What install-hooks does for Codex besides hooks, profiles and instructions: the project sandbox
// settings baton needs (docs/wiring.md "Codex's sandbox") and Codex's trust of the project and of
// each of baton's hooks (docs/wiring.md "Codex trust"), which it otherwise skips without a word.

const PROJECT_CONFIG = '.codex/config.toml';

/** The main checkout's git root as it writes it: in a linked worktree `.git` is a file there. */
const MAIN_GIT_ROOT = '../.git';

/**
 * The directories baton needs writable, as `.codex/config.toml` names them: relative to the file's
 * own directory, as Codex resolves them, so the file is the same on every machine. A linked
 * worktree's git directory lies elsewhere and stays absolute, with the common git directory beside
 * it: a `git commit` there writes both (the index in the one, objects and refs in the other;
 * measured with Codex 0.171's sandbox, either alone fails). There the main checkout's `"../.git"`
 * (committed with the file) names a file, and Codex's sandbox then fails every command ("failed to
 * inspect synthetic bubblewrap mount target …/.git/…: Not a directory"): it is replaced.
 */
function writableRoots(context: Pick<InstallContext, 'realRoot' | 'agentsDir' | 'gitDir' | 'commonDir'>): {
  roots: string[];
  replaced: string[];
  machineSpecific: string[];
} {
  const configDir = path.join(context.realRoot, path.dirname(PROJECT_CONFIG));
  const linked = context.commonDir !== context.gitDir;
  const absolute = linked ? [context.agentsDir, context.commonDir, context.gitDir] : [context.agentsDir, context.gitDir];
  const inside = (dir: string) => !path.relative(context.realRoot, dir).startsWith('..');
  const roots = absolute.map((dir) => (inside(dir) ? path.relative(configDir, dir) : dir));
  return {
    roots,
    replaced: linked ? [...absolute, MAIN_GIT_ROOT] : absolute,
    machineSpecific: absolute.filter((dir) => !inside(dir)),
  };
}

export const CODEX_PROJECT_CONFIG = PROJECT_CONFIG;

/**
 * A linked worktree's `.codex/config.toml` (`text`) with its own git directories as sandbox roots,
 * when it has the main checkout's `"../.git"` (the committed file, as `git worktree add` checked it
 * out: Codex's sandbox fails every command with it there); null when there is nothing to change.
 */
export function worktreeSandboxConfig(
  text: string,
  dirs: Pick<InstallContext, 'realRoot' | 'agentsDir' | 'gitDir' | 'commonDir'>,
): string | null {
  if (dirs.commonDir === dirs.gitDir) return null;
  let current: unknown;
  try {
    current = (parse(text) as { sandbox_workspace_write?: { writable_roots?: unknown } }).sandbox_workspace_write?.writable_roots;
  } catch {
    return null; // not ours to repair: Codex reports it
  }
  if (!Array.isArray(current) || !current.includes(MAIN_GIT_ROOT)) return null;
  const { roots, replaced } = writableRoots(dirs);
  const updated = withSandboxSettings(text, roots, PROJECT_CONFIG, replaced);
  return updated === text ? null : updated;
}

function trustEntries(context: InstallContext) {
  return context.hooks.map((hook) => ({
    key: codexHookKey(context.settingsFile, hook.event, hook.groupIndex, hook.handlerIndex),
    hash: codexHookHash(hook),
  }));
}

function trustProblems(context: InstallContext): string[] {
  const userConfig = path.join(codexHome(context.env), 'config.toml');
  const state = trustState(context.readText(userConfig, userConfig), context.realRoot, trustEntries(context), userConfig);
  if (state.project && state.hooks.length === 0) return [];
  const missing = [
    !state.project ? 'the project is not trusted' : null,
    state.hooks.length > 0 ? `${state.hooks.length} of baton's hooks are not trusted` : null,
  ]
    .filter(Boolean)
    .join(' and ');
  return [
    `Codex skips a project's hooks and its .codex/config.toml without a word until they are trusted (${missing} in ${userConfig}). Run '${context.trustCommand}' to trust them, or trust the project in Codex and approve the hooks in its /hooks screen`,
  ];
}

export const installer: ClientInstaller = {
  plan(context) {
    const files = [];
    const notices: string[] = [];
    if (context.options.sandboxConfig !== false) {
      const current = context.readText(path.join(context.repoRoot, PROJECT_CONFIG), PROJECT_CONFIG);
      const { roots, replaced, machineSpecific } = writableRoots(context);
      files.push(context.planFile(PROJECT_CONFIG, withSandboxSettings(current, roots, PROJECT_CONFIG, replaced)));
      if (machineSpecific.length > 0) {
        notices.push(
          `${PROJECT_CONFIG} names this checkout's git directories, ${machineSpecific.join(' and ')}, which are outside it (a linked worktree): those entries are machine-specific and this worktree's own; in another worktree run 'baton init' there (a "../.git" there makes Codex's sandbox fail every command)`,
        );
      }
    }
    if (context.commonDir !== context.gitDir) {
      // Measured with Codex 0.171 (app-server hooks/list, codex exec): in a linked worktree it runs
      // the main checkout's .codex/hooks.json, keyed and trusted by that path.
      notices.push(
        `Codex runs the hooks of the main checkout's .codex/hooks.json in a linked worktree, not this worktree's: install and trust them in ${context.trustRoot} too (baton init --client codex --trust there)`,
      );
    }
    if (!context.trust) return { files, notices: [...notices, ...trustProblems(context)] };
    const userConfig = path.join(codexHome(context.env), 'config.toml');
    const userText = context.readText(userConfig, userConfig);
    files.push(context.userFile(userConfig, userText, withCodexTrust(userText, context.realRoot, trustEntries(context), userConfig)));
    return { files, notices };
  },
  projectFiles: (context) => [
    {
      path: PROJECT_CONFIG,
      without: (text) =>
        withoutSandboxSettings(text, [...writableRoots(context).roots, ...writableRoots(context).replaced], PROJECT_CONFIG),
    },
  ],
  trustProblems,
};
