import path from 'node:path';
import type { ClientInstaller } from '../adapter.ts';
import { codexHome, codexHookHash, codexHookKey, trustState, withCodexTrust, withSandboxSettings } from './config.ts';

// What install-hooks does for Codex besides hooks, profiles and instructions: the project sandbox
// settings baton needs (docs/wiring.md "Codex's sandbox") and Codex's trust of the project and of
// each of baton's hooks (docs/wiring.md "Codex trust"), which it otherwise skips without a word.

const PROJECT_CONFIG = '.codex/config.toml';

export const installer: ClientInstaller = {
  plan(context) {
    const files = [];
    const notices: string[] = [];
    const current = context.readText(path.join(context.repoRoot, PROJECT_CONFIG), PROJECT_CONFIG);
    if (context.options.sandboxConfig !== false) {
      files.push(context.planFile(PROJECT_CONFIG, withSandboxSettings(current, [context.agentsDir, context.gitDir], PROJECT_CONFIG)));
    }
    const entries = context.hooks.map((hook) => ({
      key: codexHookKey(context.settingsFile, hook.event, hook.groupIndex, hook.handlerIndex),
      hash: codexHookHash(hook),
    }));
    const userConfig = path.join(codexHome(context.env), 'config.toml');
    const userText = context.readText(userConfig, userConfig);
    if (context.trust) {
      files.push(context.userFile(userConfig, userText, withCodexTrust(userText, context.realRoot, entries, userConfig)));
      return { files, notices };
    }
    const state = trustState(userText, context.realRoot, entries, userConfig);
    if (!state.project || state.hooks.length > 0) {
      const missing = [!state.project ? 'the project is not trusted' : null, state.hooks.length > 0 ? `${state.hooks.length} of baton's hooks are not trusted` : null].filter(Boolean).join(' and ');
      notices.push(
        `Codex skips a project's hooks and its .codex/config.toml without a word until they are trusted (${missing} in ${userConfig}). Run 'baton install-hooks codex --trust' to trust them, or trust the project in Codex and approve the hooks in its /hooks screen`,
      );
    }
    return { files, notices };
  },
};
