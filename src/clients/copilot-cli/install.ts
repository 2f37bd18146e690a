import os from 'node:os';
import path from 'node:path';
import { type ParseError, parse, printParseErrorCode } from 'jsonc-parser/lib/esm/main.js';
import { ClientConfigError } from '../installer.ts';
import type { ClientInstaller, InstallContext } from '../installer.ts';

// What install-hooks does for Copilot CLI besides hooks, profiles and instructions: with --trust,
// the folder trust its own prompt records. Copilot loads a repository's hooks and skills only in a
// trusted folder, and skips them without a word otherwise (its custom agents it loads either way); its trust is the list
// `trustedFolders` in $COPILOT_HOME/config.json, a JSONC file it manages itself (it writes a comment
// line first). Seen with the real 1.0.102 (docs/clients.md "Copilot CLI").

export class CopilotConfigError extends ClientConfigError {}

/** Copilot's per-user config file: $COPILOT_HOME/config.json (default ~/.copilot). */
export function copilotConfigFile(env: Readonly<Record<string, string | undefined>>): string {
  return path.join(env.COPILOT_HOME || path.join(env.HOME || os.homedir(), '.copilot'), 'config.json');
}

function parseConfig(text: string | null, label: string): Record<string, unknown> {
  if (text === null || text.trim() === '') return {};
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true });
  if (errors.length > 0)
    throw new CopilotConfigError(`${label} is not valid JSON (${printParseErrorCode(errors[0]!.error)}); nothing was written`);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new CopilotConfigError(`${label} is not a JSON object; nothing was written`);
  return value as Record<string, unknown>;
}

function trustedFolders(config: Record<string, unknown>, label: string): unknown[] {
  const folders = config.trustedFolders ?? [];
  if (!Array.isArray(folders)) throw new CopilotConfigError(`${label}: 'trustedFolders' is not a list; nothing was written`);
  return folders;
}

export function copilotFolderTrusted(text: string | null, root: string, label: string): boolean {
  return trustedFolders(parseConfig(text, label), label).includes(root);
}

/** The config with `root` in `trustedFolders`; the same text when it is there already. */
export function withCopilotTrust(text: string | null, root: string, label: string, patch: InstallContext['patchJson']): string {
  const config = parseConfig(text, label);
  const folders = trustedFolders(config, label);
  if (folders.includes(root) && text !== null) return text;
  return patch(text, { ...config, trustedFolders: [...folders, root] });
}

function trustProblems(context: InstallContext): string[] {
  const file = copilotConfigFile(context.env);
  if (copilotFolderTrusted(context.readText(file, file), context.realRoot, file)) return [];
  return [
    `Copilot CLI skips a folder's hooks and skills without a word until the folder is trusted (not yet, in ${file}). Accept the trust prompt of an interactive 'copilot' here once, or run '${context.trustCommand}' (COPILOT_ALLOW_ALL=true or --trust-folder trust it for one session)`,
  ];
}

export const installer: ClientInstaller = {
  plan(context) {
    if (!context.trust) return { files: [], notices: trustProblems(context) };
    const file = copilotConfigFile(context.env);
    const text = context.readText(file, file);
    return { files: [context.userFile(file, text, withCopilotTrust(text, context.realRoot, file, context.patchJson))], notices: [] };
  },
  trustProblems,
};
