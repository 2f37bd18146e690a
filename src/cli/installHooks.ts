import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { parseCommand } from './options.ts';
import { z } from 'zod';
import { writeFileAtomic } from '../core/runStore.ts';
import { lookupRepoRoot } from './common.ts';
import { batonCommandLine } from './runtime.ts';

// `baton install-hooks claude-code|codex`: wires a client to baton in one repository. It merges
// baton's hook entries into the client's settings (keeping every other entry; replacing only
// baton's own earlier ones) and writes the lifecycle subagent profiles (docs/lifecycle.md §10.1).
// Everything is computed before anything is written, so a settings file baton cannot read stops
// the command with nothing changed; a second run changes no byte.

export type InstallClient = 'claude-code' | 'codex';
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
  return { ...existing, hooks };
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
// Subagent profiles (docs/lifecycle.md §10.1)

type Profile = Readonly<{ name: string; description: string; instructions: string }>;

const PROFILES: readonly Profile[] = [
  {
    name: 'agent-infra-lifecycle-executor',
    description:
      'Fresh executor for exactly one agent-infra lifecycle stage (analysis, plan, code or commit), spawned by the run-task orchestrator for a prepared delegation. Never reviews.',
    instructions: `You are a fresh executor subagent of the agent-infra task lifecycle. The orchestrator spawned you
for exactly one stage of one task and gave you the short task reference and the skill to run.

- Run only the requested non-review lifecycle skill (analyze-task, plan-task, code-task or commit)
  for the task reference you were given. Never run a review-* skill and never review your own work.
- Produce the stage artifact that skill names in the task directory and record the stage as the
  skill instructs; then stop. Do not start the next stage, route the lifecycle, spawn other agents
  or reuse another agent's context.
- If the stage cannot be completed (missing input, human decision needed, permissions), stop and
  report why instead of improvising. baton pauses the run; the orchestrator decides what is next.
`,
  },
  {
    name: 'agent-infra-lifecycle-reviewer',
    description:
      'Fresh reviewer for exactly one agent-infra lifecycle review (review-analysis, review-plan or review-code), spawned by the run-task orchestrator for a prepared delegation. Writes only its review artifact.',
    instructions: `You are a fresh reviewer subagent of the agent-infra task lifecycle. The orchestrator spawned you
for exactly one review of one task and gave you the short task reference and the review skill to run.

- Run only the requested review-* skill (review-analysis, review-plan or review-code) for the task
  reference you were given.
- Do not modify business code or any other file: write only your review artifact (with its Review
  Summary) and the task metadata the skill generates. baton compares the workspace before and after
  you and pauses the run on any other write (DELEGATION_REVIEWER_WRITE_FORBIDDEN).
- Stop after producing and finalizing the review artifact. Do not fix what you found, start another
  stage or spawn other agents.
`,
  },
];

function claudeProfile(profile: Profile): string {
  return `---\nname: ${profile.name}\ndescription: ${JSON.stringify(profile.description)}\n---\n\n${profile.instructions}`;
}

function codexProfile(profile: Profile): string {
  // A TOML literal multi-line string: no escapes needed (the text has no ''').
  return `name = ${JSON.stringify(profile.name)}\ndescription = ${JSON.stringify(profile.description)}\ndeveloper_instructions = '''\n${profile.instructions}'''\n`;
}

// ---------------------------------------------------------------------------------------------

export type PlannedFile = Readonly<{ path: string; content: string; outcome: 'created' | 'updated' | 'unchanged' }>;

export type InstallPlan = Readonly<{ files: PlannedFile[]; command: string; warnings: string[] }>;

function planFile(repoRoot: string, relative: string, content: string): PlannedFile {
  const file = path.join(repoRoot, relative);
  let current: string | null = null;
  try {
    current = fs.readFileSync(file, 'utf8');
  } catch {
    current = null;
  }
  return { path: relative, content, outcome: current === null ? 'created' : current === content ? 'unchanged' : 'updated' };
}

/** Everything install-hooks would write, computed without writing; throws InstallError on unreadable settings. */
export function planInstall(repoRoot: string, client: InstallClient, commandFor: (args: readonly string[]) => string = batonCommandLine): InstallPlan {
  const relative = CLIENTS[client].settings;
  const { settings, text } = readSettings(path.join(repoRoot, relative), relative);
  const merged = mergeSettings(settings, client, commandFor);
  const warnings: string[] = [];
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
  for (const profile of PROFILES) {
    if (client === 'claude-code') files.push(planFile(repoRoot, `.claude/agents/${profile.name}.md`, claudeProfile(profile)));
    else files.push(planFile(repoRoot, `.codex/agents/${profile.name}.toml`, codexProfile(profile)));
  }
  return { files, command: commandFor(CLIENTS[client].hooks[0]!.args), warnings };
}

export function applyInstall(repoRoot: string, plan: InstallPlan): void {
  for (const file of plan.files) {
    if (file.outcome === 'unchanged') continue;
    const target = path.join(repoRoot, file.path);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    writeFileAtomic(target, file.content);
  }
}

export async function run(argv: string[]): Promise<number> {
  const program = new Command('baton install-hooks')
    .description("Wire an agent client to baton in this repository: hook entries in its settings (merged, never clobbered) and the lifecycle subagent profiles.")
    .argument('<client>', 'claude-code or codex')
    .option('--repo <dir>', 'repository (default: the nearest ancestor of the working directory holding .git)');
  const exit = parseCommand(program, argv, { redis: 'baton install-hooks only writes settings files; it does not use Redis (hooks find it through REDIS_URL, or the private redis-server of baton start)' });
  if (exit !== null) return exit;
  const client = program.args[0];
  if (client !== 'claude-code' && client !== 'codex') {
    process.stderr.write(`baton install-hooks: unknown client '${client}'; expected claude-code or codex\n`);
    return 2;
  }
  const options = program.opts<{ repo?: string }>();
  const root = lookupRepoRoot(options.repo);
  if (!root.ok) {
    process.stderr.write(`baton install-hooks: ${root.message}\n`);
    return 1;
  }
  let plan: InstallPlan;
  try {
    plan = planInstall(root.root, client);
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
  for (const warning of plan.warnings) process.stderr.write(`baton install-hooks: warning: ${warning}\n`);
  return 0;
}
