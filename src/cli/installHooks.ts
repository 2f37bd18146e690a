import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { parseCommand } from './options.ts';
import { z } from 'zod';
import { writeFileAtomic } from '../core/runStore.ts';
import { isLifecycleClientId, type LifecycleClientId } from '../core/clients.ts';
import { AGENTS_PATH } from '../core/taskLayout.ts';
import { lookupRepoRoot } from './common.ts';
import { batonCommandLine } from './runtime.ts';
import { gitDirOf } from '../core/repoRoot.ts';
import { shimDir } from '../core/batonDir.ts';
import { claudeProfile, codexProfile, orchestratorInstructions, profiles, withInstructionBlock } from './install/instructions.ts';
import { ClaudeConfigError, claudeGlobalConfigFile, claudeWorkspaceTrusted, withClaudeWorkspaceTrust } from './install/claudeTrust.ts';
import { TomlConfigError, codexHome, codexHookHash, codexHookKey, trustState, withCodexTrust, withSandboxSettings } from './install/codexConfig.ts';

// `baton install-hooks claude-code|codex`: wires a client to baton in one repository. It merges
// baton's hook entries into the client's settings (keeping every other entry; replacing only
// baton's own earlier ones), writes the lifecycle subagent profiles (docs/lifecycle.md §10.1) and the
// orchestrator instructions (a delimited block in CLAUDE.md / AGENTS.md), and for Codex the project
// sandbox settings baton needs and, with --trust, the trust entries Codex requires (docs/wiring.md).
// Everything is computed before anything is written, so a settings file baton cannot read stops
// the command with nothing changed; a second run changes no byte.

export type InstallClient = LifecycleClientId;
export const HOOK_TIMEOUT_SECONDS = 10;

type HookSpec = Readonly<{ event: string; matcher: string; args: readonly string[] }>;

const LIFECYCLE_AGENTS = 'agent-infra-lifecycle-(executor|reviewer)';

const CLIENTS: Record<InstallClient, { settings: string; hooks: readonly HookSpec[] }> = {
  'claude-code': {
    settings: '.claude/settings.json',
    hooks: [
      { event: 'SubagentStart', matcher: LIFECYCLE_AGENTS, args: ['hook', 'claude-code'] },
      { event: 'SubagentStop', matcher: LIFECYCLE_AGENTS, args: ['hook', 'claude-code'] },
      // The spawning tool ("Task", renamed "Agent"): the one place a spawn can still be blocked.
      { event: 'PreToolUse', matcher: 'Task|Agent', args: ['hook', 'claude-code'] },
    ],
  },
  codex: {
    settings: '.codex/hooks.json',
    hooks: [
      { event: 'SubagentStart', matcher: `^${LIFECYCLE_AGENTS}$`, args: ['hook', 'codex', '--event', 'subagent-start'] },
      { event: 'SubagentStop', matcher: `^${LIFECYCLE_AGENTS}$`, args: ['hook', 'codex', '--event', 'subagent-stop'] },
      { event: 'PreToolUse', matcher: '^(spawn_agent|collaborationspawn_agent|collaboration\\.spawn_agent)$', args: ['hook', 'codex', '--event', 'pre-tool'] },
    ],
  },
};

/** A command baton wrote earlier, from any checkout or runtime: `… baton[.mjs] hook <client>`. */
export function isBatonHookCommand(command: string): boolean {
  return /(^|[\s/'"])baton(\.mjs|\.js)?['"]?\s+hook\s+['"]?(claude-code|codex)\b/.test(command);
}

// Only the shape baton touches is checked; every other key is kept as it is, in its order.
const hookEntrySchema = z.looseObject({ command: z.unknown().optional() });
const settingsSchema = z.looseObject({
  hooks: z
    .record(z.string(), z.array(z.looseObject({ matcher: z.string().optional(), hooks: z.array(hookEntrySchema) })))
    .optional(),
});

type HookGroup = { matcher?: string; hooks: Record<string, unknown>[]; [key: string]: unknown };
type Settings = { hooks?: Record<string, HookGroup[]>; [key: string]: unknown };

export class InstallError extends Error {}

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

export function mergeSettings(existing: Settings, client: InstallClient, commandFor: (args: readonly string[]) => string): Settings {
  const hooks: Record<string, HookGroup[]> = { ...(existing.hooks ?? {}) };
  for (const spec of CLIENTS[client].hooks) {
    const ours: HookGroup = { matcher: spec.matcher, hooks: [{ type: 'command', command: commandFor(spec.args), timeout: HOOK_TIMEOUT_SECONDS }] };
    hooks[spec.event] = mergeGroups(hooks[spec.event] ?? [], ours);
  }
  if (client !== 'claude-code') return { ...existing, hooks };
  return { ...existing, permissions: withBatonPermission(existing.permissions, commandFor), hooks };
}

/** A permission rule baton wrote earlier, from any checkout: `Bash(… baton[.mjs] task *)`. */
export function isBatonTaskRule(rule: unknown): boolean {
  return typeof rule === 'string' && /^Bash\(.*(^|[\s/'"])baton(\.mjs|\.js)?['"]?\s+task \*\)$/.test(rule);
}

/**
 * Claude Code asks before a Bash command it has no rule for, and a headless run (`claude -p`) refuses
 * it: the subagents' `baton task …` (complete-stage, stage-completed) and the orchestrator's need an
 * allow rule. Only baton's own earlier rule is replaced; the user's permissions stay as they are.
 */
function withBatonPermission(existing: unknown, commandFor: (args: readonly string[]) => string): Record<string, unknown> {
  const permissions = existing !== null && typeof existing === 'object' && !Array.isArray(existing) ? (existing as Record<string, unknown>) : {};
  const allow = Array.isArray(permissions.allow) ? permissions.allow : [];
  const rule = `Bash(${commandFor(['task'])} *)`;
  const index = allow.findIndex(isBatonTaskRule);
  const merged = index === -1 ? [...allow, rule] : allow.map((entry, at) => (at === index ? rule : entry)).filter((entry, at) => at === index || !isBatonTaskRule(entry));
  return { ...permissions, allow: merged };
}

function indentOf(text: string): string {
  return /^([ \t]+)\S/m.exec(text)?.[1] ?? '  ';
}

function readSettings(file: string, label: string): { settings: Settings; text: string | null } {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { settings: {}, text: null };
    throw new InstallError(`${label} cannot be read (${(error as Error).message}); nothing was written`);
  }
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
  return { settings: value as Settings, text };
}

// ---------------------------------------------------------------------------------------------

export type PlannedFile = Readonly<{
  /** Relative to the repository, or absolute for a file outside it ($CODEX_HOME/config.toml). */
  path: string;
  content: string;
  outcome: 'created' | 'updated' | 'unchanged';
  mode?: number;
}>;

export type InstallOptions = Readonly<{
  /** Write the orchestrator instructions (CLAUDE.md / AGENTS.md block). Default true. */
  instructions?: boolean;
  /** Trust the workspace: Codex, the project and baton's hooks in $CODEX_HOME/config.toml; Claude Code, ~/.claude.json. */
  trust?: boolean;
  /** Codex: write the sandbox settings baton needs into .codex/config.toml. Default true. */
  sandboxConfig?: boolean;
  /** Place the `agent-infra-internal` shim that sends `task-orchestration` to `baton task`. */
  agentInfraShim?: boolean;
  env?: NodeJS.ProcessEnv;
}>;

export type InstallPlan = Readonly<{
  files: PlannedFile[];
  command: string;
  warnings: string[];
  /** What the user must still know or do (Codex trust, PATH for the shim). */
  notices: string[];
}>;

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

type CodexHookPosition = Readonly<{ event: string; groupIndex: number; handlerIndex: number; matcher?: string; command: string; timeoutSec: number }>;

/** baton's hooks in a merged Codex hooks file, with the positions Codex keys them by. */
function batonHookPositions(settings: Settings): CodexHookPosition[] {
  const positions: CodexHookPosition[] = [];
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
export function planInstall(
  repoRoot: string,
  client: InstallClient,
  commandFor: (args: readonly string[]) => string = batonCommandLine,
  options: InstallOptions = {},
): InstallPlan {
  const relative = CLIENTS[client].settings;
  const { settings, text } = readSettings(path.join(repoRoot, relative), relative);
  const merged = mergeSettings(settings, client, commandFor);
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
  for (const profile of profiles(client, baton)) {
    if (client === 'claude-code') files.push(planFile(repoRoot, `.claude/agents/${profile.name}.md`, claudeProfile(profile)));
    else files.push(planFile(repoRoot, `.codex/agents/${profile.name}.toml`, codexProfile(profile)));
  }
  if (options.instructions !== false) {
    const instructionsFile = client === 'claude-code' ? 'CLAUDE.md' : 'AGENTS.md';
    const current = readText(path.join(repoRoot, instructionsFile), instructionsFile);
    files.push(planFile(repoRoot, instructionsFile, withInstructionBlock(current, orchestratorInstructions(client, baton))));
  }
  if (client === 'claude-code') {
    try {
      const realRoot = fs.realpathSync(repoRoot);
      const globalConfig = claudeGlobalConfigFile(options.env);
      const globalText = readText(globalConfig, globalConfig);
      if (options.trust) {
        const content = withClaudeWorkspaceTrust(globalText, realRoot, globalConfig);
        files.push(userFile(globalConfig, globalText, content));
      } else if (!claudeWorkspaceTrusted(globalText, realRoot, globalConfig)) {
        notices.push(
          `Claude Code ignores this repository's permissions.allow until the workspace is trusted (not yet, in ${globalConfig}), so 'claude -p' refuses the agents' 'baton task' commands. Accept the trust dialog of an interactive 'claude' here once, or run 'baton install-hooks claude-code --trust' (while Claude Code is not running)`,
        );
      }
    } catch (error) {
      if (error instanceof ClaudeConfigError) throw new InstallError(error.message);
      throw error;
    }
  }
  if (options.agentInfraShim) {
    const dir = shimDir(repoRoot);
    files.push(planFile(repoRoot, path.relative(repoRoot, path.join(dir, 'agent-infra-internal')), agentInfraShim(commandFor), 0o755));
    notices.push(`agent-infra's lifecycle calls 'agent-infra-internal task-orchestration' from PATH: put ${dir} first on it (export PATH="${dir}:$PATH") so those calls reach baton`);
  }
  if (client === 'codex') {
    try {
      const projectConfig = '.codex/config.toml';
      const current = readText(path.join(repoRoot, projectConfig), projectConfig);
      const realRoot = fs.realpathSync(repoRoot);
      if (options.sandboxConfig !== false) {
        const roots = [path.join(realRoot, AGENTS_PATH), fs.realpathSync(gitDirOf(repoRoot))];
        files.push(planFile(repoRoot, projectConfig, withSandboxSettings(current, roots, projectConfig)));
      }
      const hooksFile = path.join(realRoot, relative);
      const entries = batonHookPositions(merged).map((hook) => ({
        key: codexHookKey(hooksFile, hook.event, hook.groupIndex, hook.handlerIndex),
        hash: codexHookHash(hook),
      }));
      const userConfig = path.join(codexHome(options.env), 'config.toml');
      const userText = readText(userConfig, userConfig);
      if (options.trust) {
        const content = withCodexTrust(userText, realRoot, entries, userConfig);
        files.push(userFile(userConfig, userText, content));
      } else {
        const state = trustState(userText, realRoot, entries, userConfig);
        if (!state.project || state.hooks.length > 0) {
          const missing = [!state.project ? 'the project is not trusted' : null, state.hooks.length > 0 ? `${state.hooks.length} of baton's hooks are not trusted` : null].filter(Boolean).join(' and ');
          notices.push(
            `Codex skips a project's hooks and its .codex/config.toml without a word until they are trusted (${missing} in ${userConfig}). Run 'baton install-hooks codex --trust' to trust them, or trust the project in Codex and approve the hooks in its /hooks screen`,
          );
        }
      }
    } catch (error) {
      if (error instanceof TomlConfigError) throw new InstallError(error.message);
      throw error;
    }
  }
  return { files, command: commandFor(CLIENTS[client].hooks[0]!.args), warnings, notices };
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

export async function run(argv: string[]): Promise<number> {
  const program = new Command('baton install-hooks')
    .description(
      "Wire an agent client to baton in this repository: hook entries in its settings (merged, never clobbered), the lifecycle subagent profiles, the orchestrator instructions, and for Codex the sandbox settings baton needs.",
    )
    .argument('<client>', 'claude-code or codex')
    .option('--repo <dir>', 'repository (default: the nearest ancestor of the working directory holding .git)')
    .option('--no-instructions', 'do not write the orchestrator instructions block (CLAUDE.md or AGENTS.md)')
    .option('--no-sandbox-config', "codex: leave .codex/config.toml alone (baton's commands then need another way to reach Redis)")
    .option('--trust', "trust the workspace as the client's own trust prompt does: codex, the project and baton's hooks in $CODEX_HOME/config.toml; claude-code, the workspace in ~/.claude.json")
    .option('--agent-infra-shim', "place an 'agent-infra-internal' that sends agent-infra's task-orchestration calls to 'baton task'");
  const exit = parseCommand(program, argv, { redis: 'baton install-hooks only writes settings files; it does not use Redis (hooks find it through REDIS_URL, or the private redis-server of baton start)' });
  if (exit !== null) return exit;
  const client = program.args[0];
  if (!isLifecycleClientId(client)) {
    process.stderr.write(`baton install-hooks: unknown client '${client}'; expected claude-code or codex\n`);
    return 2;
  }
  const options = program.opts<{ repo?: string; instructions: boolean; sandboxConfig: boolean; trust?: boolean; agentInfraShim?: boolean }>();
  const root = lookupRepoRoot(options.repo);
  if (!root.ok) {
    process.stderr.write(`baton install-hooks: ${root.message}\n`);
    return 1;
  }
  let plan: InstallPlan;
  try {
    plan = planInstall(root.root, client, batonCommandLine, {
      instructions: options.instructions,
      sandboxConfig: options.sandboxConfig,
      trust: options.trust === true,
      agentInfraShim: options.agentInfraShim === true,
    });
    applyInstall(root.root, plan);
  } catch (error) {
    if (!(error instanceof InstallError)) throw error;
    process.stderr.write(`baton install-hooks: ${error.message}\n`);
    return 1;
  }
  const events = CLIENTS[client].hooks.map((spec) => spec.event).join(', ');
  process.stdout.write(`baton install-hooks ${client} in ${root.root}\n`);
  for (const file of plan.files) process.stdout.write(`  ${file.outcome.padEnd(9)} ${file.path}\n`);
  process.stdout.write(`hooks (${events}) run: ${plan.command}  [timeout ${HOOK_TIMEOUT_SECONDS} s]\n`);
  for (const notice of plan.notices) process.stdout.write(`note: ${notice}\n`);
  for (const warning of plan.warnings) process.stderr.write(`baton install-hooks: warning: ${warning}\n`);
  return 0;
}
