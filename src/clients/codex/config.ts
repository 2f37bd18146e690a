import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { parse, patch } from '@decimalturn/toml-patch';
import { ClientConfigError } from '../installer.ts';

// Codex runs a project's hooks only when the project is trusted
// (`[projects."<root>"] trust_level = "trusted"` in $CODEX_HOME/config.toml) and each hook is trusted
// (`[hooks.state."<key>"] trusted_hash = "sha256:…"`, what its `/hooks` screen writes). Until then it
// skips them without a word. This module computes those entries exactly as Codex does (checked
// against Codex's own `hooks/list` in test/ops/codexTrust.test.ts) and merges them into a config
// file, keeping everything else in it, comments and formatting included.
//
// It also holds the project config `.codex/config.toml` baton needs under Codex's default
// `workspace-write` sandbox: without network access a command cannot reach Redis (TCP or unix
// socket), and `.agents/` is read-only.

/** `$CODEX_HOME`, else `~/.codex`, as Codex resolves it. */
export function codexHome(env: NodeJS.ProcessEnv = process.env): string {
  const home = env.CODEX_HOME;
  return home && home.trim() !== '' ? path.resolve(home) : path.join(os.homedir(), '.codex');
}

/** hooks.json event names → the snake_case names Codex uses in hook keys and hashes. */
function snakeCase(event: string): string {
  return event.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** serde_json's canonical form: object keys sorted, no whitespace. */
function canonicalJson(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key]!)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

export type CodexCommandHook = Readonly<{ event: string; matcher?: string; command: string; timeoutSec: number }>;

/** Codex's trust hash of one command hook: sha256 over its normalized identity (async false, type command). */
export function codexHookHash(hook: CodexCommandHook): string {
  const identity: { [key: string]: JsonValue } = {
    event_name: snakeCase(hook.event),
    hooks: [{ async: false, command: hook.command, timeout: hook.timeoutSec, type: 'command' }],
  };
  if (hook.matcher !== undefined) identity.matcher = hook.matcher;
  return `sha256:${createHash('sha256').update(canonicalJson(identity)).digest('hex')}`;
}

/** Codex's key of the hook at `groupIndex`/`handlerIndex` of `event` in the hooks file at `hooksFile`. */
export function codexHookKey(hooksFile: string, event: string, groupIndex: number, handlerIndex: number): string {
  return `${hooksFile}:${snakeCase(event)}:${groupIndex}:${handlerIndex}`;
}

export type TrustEntry = Readonly<{ key: string; hash: string }>;

export class TomlConfigError extends ClientConfigError {}

function parseToml(text: string, label: string): Record<string, any> {
  try {
    return parse(text) as Record<string, any>;
  } catch (error) {
    throw new TomlConfigError(
      `${label} is not valid TOML (${(error as Error).message.split('\n')[0]}); fix it and run again. Nothing was written`,
    );
  }
}

/** The line ending of a file (its first one; `\n` when it has none). */
function eolOf(text: string): string {
  return /\r?\n/.exec(text)?.[0] ?? '\n';
}

/**
 * `sections` (written with `\n`) after `source`, in its line ending, a blank line between: how Codex
 * and baton add a table. The inverse, `withoutAppended`, takes them off again.
 */
function withTablesAppended(source: string, sections: readonly string[]): string {
  const eol = eolOf(source);
  const separator = source === '' ? '' : source.endsWith('\n') ? eol : `${eol}${eol}`;
  return `${source}${separator}${sections.join('\n').replace(/\n/g, eol)}`;
}

/** `text` without `section` appended last by `withTablesAppended` (null: it is not there). A missing final newline before it cannot be told apart from one: it is taken as there. */
function withoutAppended(text: string, section: string): string | null {
  const eol = eolOf(text);
  const tail = section.replace(/\n/g, eol);
  if (!text.endsWith(tail)) return null;
  const rest = text.slice(0, -tail.length);
  if (rest === '') return '';
  return rest.endsWith(`${eol}${eol}`) ? rest.slice(0, -eol.length) : null;
}

function table(parent: Record<string, any>, key: string, label: string): Record<string, any> {
  const value = parent[key];
  if (value === undefined) {
    parent[key] = {};
    return parent[key];
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TomlConfigError(`${label}: '${key}' is not a table; nothing was written`);
  }
  return value;
}

/** Whether the config already trusts the project and every entry (so Codex will run those hooks). */
export function trustState(
  text: string | null,
  projectRoot: string,
  entries: readonly TrustEntry[],
  label: string,
): { project: boolean; hooks: string[] } {
  const config = text === null ? {} : parseToml(text, label);
  const project = config.projects?.[projectRoot]?.trust_level === 'trusted';
  const untrusted = entries.filter((entry) => config.hooks?.state?.[entry.key]?.trusted_hash !== entry.hash).map((entry) => entry.key);
  return { project, hooks: untrusted };
}

/**
 * `$CODEX_HOME/config.toml` with the project trusted and each entry's trusted_hash set, everything
 * else kept. New tables are appended as Codex writes them (`[projects."<root>"]`,
 * `[hooks.state."<key>"]`); values already there are changed in place.
 */
export function withCodexTrust(text: string | null, projectRoot: string, entries: readonly TrustEntry[], label: string): string {
  const source = text ?? '';
  const config = parseToml(source, label);
  let appended = source;
  const needProject = config.projects?.[projectRoot] === undefined;
  const missingHooks = entries.filter((entry) => config.hooks?.state?.[entry.key] === undefined);
  // Tables that do not exist yet: append them the way Codex does, if that stays valid TOML.
  const sections: string[] = [];
  if (needProject) sections.push(`[projects.${JSON.stringify(projectRoot)}]\ntrust_level = "trusted"\n`);
  for (const entry of missingHooks)
    sections.push(`[hooks.state.${JSON.stringify(entry.key)}]\ntrusted_hash = ${JSON.stringify(entry.hash)}\n`);
  if (sections.length > 0) {
    const candidate = withTablesAppended(source, sections);
    try {
      parse(candidate);
      appended = candidate;
    } catch {
      appended = source; // e.g. `projects` is an inline table: let the patcher place the keys
    }
  }
  const updated = parseToml(appended, label);
  table(table(updated, 'projects', label), projectRoot, label).trust_level = 'trusted';
  const state = table(table(updated, 'hooks', label), 'state', label);
  for (const entry of entries) table(state, entry.key, label).trusted_hash = entry.hash;
  return patch(appended, updated);
}

/** The sandbox table baton adds to a config that has none. */
function sandboxSection(writableRoots: readonly string[]): string {
  return `[sandbox_workspace_write]\nnetwork_access = true\nwritable_roots = [${writableRoots.map((root) => JSON.stringify(root)).join(', ')}]\n`;
}

/**
 * The project's `.codex/config.toml` with what baton needs under `workspace-write`: network access
 * (to reach Redis, over TCP or a unix socket) and `writableRoots` writable (`.agents/`, where
 * agent-infra's skills write task files; the git directory, which the commit stage writes). Codex
 * resolves a relative root against the file's own directory (`../.agents`). Entries in `replaced`
 * (what an older baton wrote: absolute paths of the same directories) are dropped.
 */
export function withSandboxSettings(
  text: string | null,
  writableRoots: readonly string[],
  label: string,
  replaced: readonly string[] = [],
): string {
  const source = text ?? '';
  const config = parseToml(source, label);
  const current = config.sandbox_workspace_write;
  const roots: unknown = current?.writable_roots;
  const stale = Array.isArray(roots) && roots.some((root) => replaced.includes(root) && !writableRoots.includes(root));
  if (current?.network_access === true && Array.isArray(roots) && writableRoots.every((root) => roots.includes(root)) && !stale)
    return source;
  if (current === undefined) {
    const candidate = withTablesAppended(source, [sandboxSection(writableRoots)]);
    try {
      parse(candidate);
      return candidate;
    } catch {
      // fall through to the patcher
    }
  }
  const sandbox = table(config, 'sandbox_workspace_write', label);
  sandbox.network_access = true;
  if (sandbox.writable_roots !== undefined && !Array.isArray(sandbox.writable_roots)) {
    throw new TomlConfigError(`${label}: sandbox_workspace_write.writable_roots is not an array; nothing was written`);
  }
  const existing = ((sandbox.writable_roots as string[] | undefined) ?? []).filter(
    (root) => !replaced.includes(root) || writableRoots.includes(root),
  );
  sandbox.writable_roots = [...existing, ...writableRoots.filter((root) => !existing.includes(root))];
  return patch(source, config);
}

/**
 * The inverse of withSandboxSettings for a file the user changed since (`baton uninstall` without an
 * exact record): `network_access` and baton's roots removed, the section dropped when nothing else is
 * left in it, everything else kept.
 */
export function withoutSandboxSettings(text: string, writableRoots: readonly string[], label: string): string {
  // The section as baton appended it: cut off as text.
  for (let count = writableRoots.length; count > 0; count--) {
    const before = withoutAppended(text, sandboxSection(writableRoots.slice(0, count)));
    if (before !== null && (before === '' || parseToml(before, label).sandbox_workspace_write === undefined)) return before;
  }
  const config = parseToml(text, label);
  const sandbox = config.sandbox_workspace_write;
  if (sandbox === undefined || sandbox === null || typeof sandbox !== 'object') return text;
  // Without one of baton's roots, the section is the user's alone (network access included).
  if (!Array.isArray(sandbox.writable_roots) || !sandbox.writable_roots.some((root: unknown) => writableRoots.includes(root as string)))
    return text;
  delete sandbox.network_access;
  if (Array.isArray(sandbox.writable_roots)) {
    sandbox.writable_roots = sandbox.writable_roots.filter((root: unknown) => !writableRoots.includes(root as string));
    if (sandbox.writable_roots.length === 0) delete sandbox.writable_roots;
  }
  if (Object.keys(sandbox).length === 0) delete config.sandbox_workspace_write;
  return patch(text, config);
}
