import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ClientConfigError } from '../../clients/adapter.ts';
import type { ClientAdapter, HookGroup, HookSettings, InstallContext, InstalledHook, PlannedFile } from '../../clients/adapter.ts';
import { CLIENT_IDS } from '../../clients/registry.ts';
import { shimDir } from '../../core/batonDir.ts';
import { gitDirOf } from '../../core/repoRoot.ts';
import { writeFileAtomic } from '../../core/runStore.ts';
import { AGENTS_PATH } from '../../core/taskLayout.ts';
import { orchestratorInstructions, profiles, withInstructionBlock } from './instructions.ts';

// What `baton install-hooks <client>` writes, computed before anything is written (docs/wiring.md):
// baton's hook entries merged into the client's settings (keeping every other entry, replacing only
// baton's own earlier ones), the lifecycle subagent profiles, the orchestrator instructions, the
// optional agent-infra shim, and whatever the client's installer adds (trust, project config). A
// settings file baton cannot read stops the command with nothing changed; a second run changes no byte.

export const HOOK_TIMEOUT_SECONDS = 10;

export type { PlannedFile } from '../../clients/adapter.ts';

export type InstallOptions = Readonly<{
  /** Write the orchestrator instructions (CLAUDE.md / AGENTS.md block). Default true. */
  instructions?: boolean;
  /** Trust the workspace as the client's own trust prompt does (its installer says where). */
  trust?: boolean;
  /** Place the `agent-infra-internal` shim that sends `task-orchestration` to `baton task`. */
  agentInfraShim?: boolean;
  /** The values of the client's own options (`ClientAdapter.install.options`). */
  clientOptions?: Readonly<Record<string, unknown>>;
  env?: NodeJS.ProcessEnv;
}>;

export type InstallPlan = Readonly<{
  files: PlannedFile[];
  command: string;
  warnings: string[];
  /** What the user must still know or do (client trust, PATH for the shim). */
  notices: string[];
}>;

export class InstallError extends Error {}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const BATON_HOOK_COMMAND = new RegExp(`(^|[\\s/'"])baton(\\.mjs|\\.js)?['"]?\\s+hook\\s+['"]?(${CLIENT_IDS.map(escaped).join('|')})\\b`);

/** A command baton wrote earlier, from any checkout or runtime: `… baton[.mjs] hook <client>`. */
export function isBatonHookCommand(command: string): boolean {
  return BATON_HOOK_COMMAND.test(command);
}

// Only the shape baton touches is checked; every other key is kept as it is, in its order.
const hookEntrySchema = z.looseObject({ command: z.unknown().optional() });
const settingsSchema = z.looseObject({
  hooks: z
    .record(z.string(), z.array(z.looseObject({ matcher: z.string().optional(), hooks: z.array(hookEntrySchema) })))
    .optional(),
});

function ownsEntry(entry: Record<string, unknown>): boolean {
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
function hookArgs(client: ClientAdapter, args: readonly string[]): string[] {
  return ['hook', client.id, ...args];
}

/** The client's settings with baton's hook entries merged in. */
export function mergeSettings(existing: HookSettings, client: ClientAdapter, commandFor: (args: readonly string[]) => string): HookSettings {
  const hooks: Record<string, HookGroup[]> = { ...(existing.hooks ?? {}) };
  for (const spec of client.hooks.registrations) {
    const ours: HookGroup = { matcher: spec.matcher, hooks: [{ type: 'command', command: commandFor(hookArgs(client, spec.args)), timeout: HOOK_TIMEOUT_SECONDS }] };
    hooks[spec.event] = mergeGroups(hooks[spec.event] ?? [], ours);
  }
  return { ...existing, hooks };
}

function indentOf(text: string): string {
  return /^([ \t]+)\S/m.exec(text)?.[1] ?? '  ';
}

function readSettings(file: string, label: string): { settings: HookSettings; text: string | null } {
  const text = readText(file, label);
  if (text === null) return { settings: {}, text: null };
  if (text.trim() === '') return { settings: {}, text };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InstallError(`${label} is not valid JSON (${(error as Error).message}); fix or remove it and run again. Nothing was written`);
  }
  const checked = settingsSchema.safeParse(value);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join('.') : '(root)';
    throw new InstallError(`${label} has an unexpected shape at ${where} (${issue?.message ?? 'invalid'}); expected { "hooks": { "<Event>": [{ "matcher", "hooks": [...] }] } }. Nothing was written`);
  }
  return { settings: value as HookSettings, text };
}

function readText(file: string, label: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new InstallError(`${label} cannot be read (${(error as Error).message}); nothing was written`);
  }
}

function planFile(repoRoot: string, relative: string, content: string, mode?: number): PlannedFile {
  const current = readText(path.resolve(repoRoot, relative), relative);
  return { path: relative, content, outcome: current === null ? 'created' : current === content ? 'unchanged' : 'updated', ...(mode !== undefined ? { mode } : {}) };
}

/** A client's own config file outside the repository: it keeps its permissions (new ones are private). */
function userFile(file: string, current: string | null, content: string): PlannedFile {
  let mode = 0o600;
  try {
    mode = fs.statSync(file).mode & 0o777;
  } catch {
    // a new file
  }
  return { path: file, content, outcome: current === null ? 'created' : current === content ? 'unchanged' : 'updated', mode };
}

/**
 * agent-infra 0.9.x's lifecycle rule and hooks run `agent-infra-internal task-orchestration …` from
 * PATH. This shim answers that one subcommand with `baton task` (same grammar, codes and exit
 * codes) and hands every other subcommand to the next `agent-infra-internal` on PATH.
 */
export function agentInfraShim(commandFor: (args: readonly string[]) => string): string {
  return `#!/bin/sh
# Written by 'baton install-hooks --agent-infra-shim'. agent-infra's 'task-orchestration' goes to baton;
# every other subcommand goes to the next agent-infra-internal on PATH.
if [ "$1" = task-orchestration ]; then
  shift
  exec ${commandFor(['task'])} "$@"
fi
self_dir=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
old_ifs=$IFS
IFS=:
for dir in $PATH; do
  IFS=$old_ifs
  [ -n "$dir" ] || continue
  [ "$(CDPATH= cd -- "$dir" 2>/dev/null && pwd)" = "$self_dir" ] && continue
  if [ -x "$dir/agent-infra-internal" ]; then exec "$dir/agent-infra-internal" "$@"; fi
done
echo "agent-infra-internal (baton shim): only 'task-orchestration' is handled here, and no other agent-infra-internal is on PATH" >&2
exit 127
`;
}

/** baton's hooks in merged settings, with the positions a client keys them by (Codex's trust). */
function batonHookPositions(settings: HookSettings): InstalledHook[] {
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

/** Everything install-hooks would write, computed without writing; throws InstallError on unreadable files. */
export async function planInstall(
  repoRoot: string,
  client: ClientAdapter,
  commandFor: (args: readonly string[]) => string,
  options: InstallOptions = {},
): Promise<InstallPlan> {
  const installer = await client.install.installer();
  const relative = client.install.settingsFile;
  const { settings, text } = readSettings(path.join(repoRoot, relative), relative);
  // What the client's installer keeps in the settings first (their keys go before `hooks`, as always).
  const merged = mergeSettings(installer.settings?.(settings, commandFor) ?? settings, client, commandFor);
  const warnings: string[] = [];
  const notices: string[] = [];
  const legacy = Object.values(settings.hooks ?? {})
    .flat()
    .flatMap((group) => group.hooks)
    .some((entry) => typeof entry.command === 'string' && entry.command.includes('lifecycle-delegation.js'));
  if (legacy) {
    warnings.push(`${relative} also runs agent-infra's lifecycle-delegation.js; remove those entries, or each lifecycle event is recorded twice`);
  }
  const files: PlannedFile[] = [];
  const unchangedSettings = text !== null && JSON.stringify(merged) === JSON.stringify(settings);
  files.push(
    unchangedSettings
      ? { path: relative, content: text, outcome: 'unchanged' } // keep the user's formatting byte for byte
      : planFile(repoRoot, relative, `${JSON.stringify(merged, null, text ? indentOf(text) : 2)}\n`),
  );
  const baton = commandFor([]);
  for (const profile of profiles(client.id, baton)) files.push(planFile(repoRoot, client.install.agentFile(profile.name), client.install.agentProfile(profile)));
  if (options.instructions !== false) {
    const instructionsFile = client.instructions.file;
    const current = readText(path.join(repoRoot, instructionsFile), instructionsFile);
    files.push(planFile(repoRoot, instructionsFile, withInstructionBlock(current, orchestratorInstructions(client.id, baton))));
  }
  const realRoot = fs.realpathSync(repoRoot);
  const context: InstallContext = {
    repoRoot,
    realRoot,
    get gitDir() {
      return fs.realpathSync(gitDirOf(repoRoot));
    },
    get agentsDir() {
      return path.join(realRoot, AGENTS_PATH);
    },
    settingsFile: path.join(realRoot, relative),
    hooks: batonHookPositions(merged),
    trust: options.trust === true,
    options: options.clientOptions ?? {},
    env: options.env ?? process.env,
    readText,
    planFile: (file, content, mode) => planFile(repoRoot, file, content, mode),
    userFile,
  };
  try {
    const own = installer.plan(context);
    files.push(...own.files);
    notices.push(...own.notices);
  } catch (error) {
    if (error instanceof ClientConfigError) throw new InstallError(error.message);
    throw error;
  }
  if (options.agentInfraShim) {
    const dir = shimDir(repoRoot);
    files.push(planFile(repoRoot, path.relative(repoRoot, path.join(dir, 'agent-infra-internal')), agentInfraShim(commandFor), 0o755));
    notices.push(`agent-infra's lifecycle calls 'agent-infra-internal task-orchestration' from PATH: put ${dir} first on it (export PATH="${dir}:$PATH") so those calls reach baton`);
  }
  return { files, command: commandFor(hookArgs(client, client.hooks.registrations[0]!.args)), warnings, notices };
}

export function applyInstall(repoRoot: string, plan: InstallPlan): void {
  for (const file of plan.files) {
    if (file.outcome === 'unchanged') continue;
    const target = path.resolve(repoRoot, file.path);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    writeFileAtomic(target, file.content);
    if (file.mode !== undefined) fs.chmodSync(target, file.mode);
  }
}
