import { z } from 'zod';
import type { InstallClient } from '../clients/installer.ts';
import type { HookGroup, HookSettings, InstalledHook } from '../clients/installer.ts';
import { CLIENT_IDS } from '../clients/registry.ts';
import { newJsonText, parseJsonc, patchJson } from './jsonText.ts';

// A client's hooks settings file (docs/wiring.md): baton's hook entries merged in, keeping every
// other entry and key in its order and replacing only baton's own earlier entries; taken out again
// by `baton uninstall`. Only the shape baton touches is checked. The merge is computed on the value;
// the file is then patched as text (jsonText.ts), so the user's formatting stays. JSONC (comments,
// trailing commas) is read as the clients read it.

export const HOOK_TIMEOUT_SECONDS = 10;

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const BATON_HOOK_COMMAND = new RegExp(`(^|[\\s/'"])baton(\\.mjs|\\.js)?['"]?\\s+hook\\s+['"]?(${CLIENT_IDS.map(escaped).join('|')})\\b`);

/** A command baton wrote earlier, from any checkout or runtime: `… baton[.mjs] hook <client>`. */
export function isBatonHookCommand(command: string): boolean {
  return BATON_HOOK_COMMAND.test(command);
}

/** The command line a hook command runs baton with (`baton`, `node /opt/baton/bin/baton.mjs`): what precedes ` hook `. */
export function batonOfHookCommand(command: string): string | null {
  const match = BATON_HOOK_COMMAND.exec(command);
  if (!match) return null;
  return command.slice(0, match.index + match[0].search(/\s+hook\s/)).trim() || null;
}

const hookEntrySchema = z.looseObject({ command: z.unknown().optional() });
export const settingsSchema = z.looseObject({
  hooks: z.record(z.string(), z.array(z.looseObject({ matcher: z.string().optional(), hooks: z.array(hookEntrySchema) }))).optional(),
});

export function ownsEntry(entry: Record<string, unknown>): boolean {
  return typeof entry.command === 'string' && isBatonHookCommand(entry.command);
}

/** baton's group goes where baton's earlier entry was (else last); the user's hooks stay as they are. */
function mergeGroups(groups: readonly HookGroup[], ours: HookGroup): HookGroup[] {
  const merged: HookGroup[] = [];
  let placed = false;
  for (const group of groups) {
    const kept = group.hooks.filter((entry) => !ownsEntry(entry));
    if (kept.length === group.hooks.length) {
      merged.push(group);
      continue;
    }
    if (kept.length > 0) merged.push({ ...group, hooks: kept });
    if (!placed) merged.push(ours);
    placed = true;
  }
  if (!placed) merged.push(ours);
  return merged;
}

/** The arguments of `baton` one of the client's hooks runs. */
export function hookArgs(client: InstallClient, args: readonly string[]): string[] {
  return ['hook', client.id, ...args];
}

/** The client's settings with baton's hook entries merged in. */
export function mergeSettings(
  existing: HookSettings,
  client: InstallClient,
  commandFor: (args: readonly string[]) => string,
): HookSettings {
  const hooks: Record<string, HookGroup[]> = { ...(existing.hooks ?? {}) };
  for (const spec of client.install.hooks) {
    const ours: HookGroup = {
      ...(spec.matcher !== undefined ? { matcher: spec.matcher } : {}),
      hooks: [{ type: 'command', command: commandFor(hookArgs(client, spec.args)), timeout: HOOK_TIMEOUT_SECONDS }],
    };
    hooks[spec.event] = mergeGroups(hooks[spec.event] ?? [], ours);
  }
  return { ...existing, hooks };
}

/** The inverse of mergeSettings: baton's entries out, and the groups, events and `hooks` they leave empty (not those the user left empty). */
export function withoutBatonHooks(settings: HookSettings): HookSettings {
  if (settings.hooks === undefined) return settings;
  const hooks: Record<string, HookGroup[]> = {};
  let emptied = false;
  for (const [event, groups] of Object.entries(settings.hooks)) {
    const kept = groups.flatMap((group) => {
      const entries = group.hooks.filter((entry) => !ownsEntry(entry));
      if (entries.length === group.hooks.length) return [group];
      return entries.length > 0 ? [{ ...group, hooks: entries }] : [];
    });
    if (kept.length > 0 || groups.length === 0) hooks[event] = kept;
    else emptied = true;
  }
  const { hooks: _dropped, ...rest } = settings;
  return Object.keys(hooks).length > 0 || !emptied ? { ...settings, hooks } : rest;
}

/** baton's hooks in settings, with the positions a client keys them by (Codex's trust). */
export function batonHookPositions(settings: HookSettings): InstalledHook[] {
  const positions: InstalledHook[] = [];
  for (const [event, groups] of Object.entries(settings.hooks ?? {})) {
    groups.forEach((group, groupIndex) => {
      group.hooks.forEach((entry, handlerIndex) => {
        if (!ownsEntry(entry)) return;
        positions.push({
          event,
          groupIndex,
          handlerIndex,
          ...(group.matcher !== undefined ? { matcher: group.matcher } : {}),
          command: entry.command as string,
          timeoutSec: typeof entry.timeout === 'number' ? entry.timeout : 600,
        });
      });
    });
  }
  return positions;
}

/**
 * Settings as baton writes them: the user's file patched as text to hold `settings` (jsonText.ts: every
 * byte outside baton's entries kept), or a new file (two-space indentation, a final newline).
 */
export function settingsText(settings: HookSettings, previous: string | null): string {
  return previous === null || previous.trim() === '' ? newJsonText(settings) : patchJson(previous, settings);
}

export type ParsedSettings = { ok: true; settings: HookSettings } | { ok: false; message: string };

/** Settings text parsed and its shape checked (empty text is `{}`); `label` names the file in the message. */
export function parseSettings(text: string, label: string): ParsedSettings {
  if (text.trim() === '') return { ok: true, settings: {} };
  const parsed = parseJsonc(text);
  if (!parsed.ok)
    return { ok: false, message: `${label} is not valid JSON (${parsed.message}); fix or remove it and run again. Nothing was written` };
  const value = parsed.value;
  const checked = settingsSchema.safeParse(value);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join('.') : '(root)';
    return {
      ok: false,
      message: `${label} has an unexpected shape at ${where} (${issue?.message ?? 'invalid'}); expected { "hooks": { "<Event>": [{ "matcher", "hooks": [...] }] } }. Nothing was written`,
    };
  }
  return { ok: true, settings: value as HookSettings };
}
