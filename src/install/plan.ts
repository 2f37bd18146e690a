import fs from 'node:fs';
import path from 'node:path';
import { ClientConfigError } from '../clients/installer.ts';
import type { InstallClient } from '../clients/installer.ts';
import type { FilePart, InstallContext, PlannedFile } from '../clients/installer.ts';
import { AGENT_INFRA_SHIM_ENV } from '../base/agentInfraShim.ts';
import { shimDir } from '../base/batonDir.ts';
import { commonDirOf, gitDirOf, mainRepositoryOf } from '../base/repoRoot.ts';
import { writeFileAtomic } from '../base/atomicFile.ts';
import { AGENTS_PATH } from '../core/taskLayout.ts';
import { SKILL_NAMES, guidanceOwner, stageSkill } from './guidance.ts';
import { orchestratorInstructions, profiles, withInstructionBlock } from './instructions.ts';
import { newJsonText, patchJson } from './jsonText.ts';
import { batonHookPositions, hookArgs, mergeSettings, parseSettings, settingsText } from './settings.ts';

// What `baton install-hooks <client>` (and `baton init`, for each client) writes, computed before
// anything is written (docs/wiring.md): baton's hook entries merged into the client's settings
// (settings.ts), the lifecycle subagent profiles, the orchestrator instructions, with `guidance` the
// stage skills (guidance.ts), the optional agent-infra shim, and whatever the client's installer adds
// (trust, project config). A file baton cannot read stops the command with nothing changed; a second
// run changes no byte. Each planned file says what it held before and which part of baton's wiring it
// holds, which is what `baton uninstall` needs to take it out again (uninstall.ts).

export type InstallOptions = Readonly<{
  /** Write the orchestrator instructions (CLAUDE.md / AGENTS.md block). Default true. */
  instructions?: boolean;
  /** Write baton's stage guidance where the client reads skills (baton init). Default false. */
  guidance?: boolean;
  /** Trust the workspace as the client's own trust prompt does (its installer says where). */
  trust?: boolean;
  /** The command that records the trust, named in the notices. */
  trustCommand?: string;
  /** The command the instructions say wrote them. */
  writtenBy?: string;
  /** Place the `agent-infra-internal` shim that sends `task-orchestration` to `baton task`. */
  agentInfraShim?: boolean;
  /** The values of the client's own options (`ClientAdapter.install.options`). */
  clientOptions?: Readonly<Record<string, unknown>>;
  env?: NodeJS.ProcessEnv;
}>;

/** Where the stage guidance stands for a client: written (or kept), left to agent-infra's skills, or not asked for / not possible. */
export type GuidanceState = Readonly<{ state: 'installed' | 'agent-infra' | 'none'; foreign: readonly string[] }>;

export type InstallPlan = Readonly<{
  files: PlannedFile[];
  command: string;
  warnings: string[];
  /** What the user must still know or do (client trust, PATH for the shim). */
  notices: string[];
  guidance: GuidanceState;
}>;

export class InstallError extends Error {}

export function readText(file: string, label: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new InstallError(`${label} cannot be read (${(error as Error).message}); nothing was written`);
  }
}

export function planFile(repoRoot: string, relative: string, content: string, part: FilePart, mode?: number): PlannedFile {
  const before = readText(path.resolve(repoRoot, relative), relative);
  return {
    path: relative,
    content,
    outcome: before === null ? 'created' : before === content ? 'unchanged' : 'updated',
    before,
    part,
    ...(mode !== undefined ? { mode } : {}),
  };
}

/** A client's own config file outside the repository: it keeps its permissions (new ones are private). */
function userFile(file: string, current: string | null, content: string): PlannedFile {
  let mode = 0o600;
  try {
    mode = fs.statSync(file).mode & 0o777;
  } catch {
    // a new file
  }
  return {
    path: file,
    content,
    outcome: current === null ? 'created' : current === content ? 'unchanged' : 'updated',
    mode,
    before: current,
    part: 'user',
  };
}

/**
 * agent-infra 0.9.x's lifecycle rule and hooks run `agent-infra-internal task-orchestration …` from
 * PATH. This shim answers that one subcommand with `baton task` (same grammar, codes and exit
 * codes, and 0.9.2's words where baton rewords a message: AGENT_INFRA_SHIM_ENV) and hands every other subcommand to the next `agent-infra-internal` on PATH.
 */
export function agentInfraShim(commandFor: (args: readonly string[]) => string): string {
  return `#!/bin/sh
# Written by 'baton install-hooks --agent-infra-shim'. agent-infra's 'task-orchestration' goes to baton;
# every other subcommand goes to the next agent-infra-internal on PATH.
if [ "$1" = task-orchestration ]; then
  shift
  ${AGENT_INFRA_SHIM_ENV}=1
  export ${AGENT_INFRA_SHIM_ENV}
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

/** The skill files of a client that are not baton's (agent-infra's, or the user's own): found, they stay in charge. */
export function foreignSkills(repoRoot: string, client: InstallClient): string[] {
  const skills = client.install.skills;
  if (!skills) return [];
  const candidates = [...new Set(SKILL_NAMES.flatMap((name) => [skills.file(name), ...skills.agentInfraFiles(name)]))];
  return candidates.filter((file) => {
    const text = readText(path.join(repoRoot, file), file);
    return text !== null && guidanceOwner(text) === 'foreign';
  });
}

/** The stage skills for a client: written, kept where the user edited baton's, none where agent-infra's are in charge. */
function planGuidance(repoRoot: string, client: InstallClient, baton: string): { files: PlannedFile[]; guidance: GuidanceState } {
  const skills = client.install.skills;
  if (!skills) return { files: [], guidance: { state: 'none', foreign: [] } };
  const foreign = foreignSkills(repoRoot, client);
  if (foreign.length > 0) return { files: [], guidance: { state: 'agent-infra', foreign } };
  const files = SKILL_NAMES.map((name) => {
    const planned = planFile(repoRoot, skills.file(name), stageSkill(name, client, baton), 'guidance');
    return planned.before !== null && guidanceOwner(planned.before) === 'edited'
      ? { ...planned, content: planned.before, outcome: 'kept' as const }
      : planned;
  });
  return { files, guidance: { state: 'installed', foreign: [] } };
}

/** The context a client's installer works in, for settings holding `hooks` (planned or as found). */
export function installContext(
  repoRoot: string,
  client: InstallClient,
  hooks: InstallContext['hooks'],
  options: Pick<InstallOptions, 'trust' | 'trustCommand' | 'clientOptions' | 'env'>,
): InstallContext {
  const realRoot = fs.realpathSync(repoRoot);
  return {
    repoRoot,
    realRoot,
    trustRoot: fs.realpathSync(mainRepositoryOf(realRoot) ?? realRoot),
    get gitDir() {
      return fs.realpathSync(gitDirOf(repoRoot));
    },
    get commonDir() {
      return fs.realpathSync(commonDirOf(fs.realpathSync(gitDirOf(repoRoot))));
    },
    get agentsDir() {
      return path.join(realRoot, AGENTS_PATH);
    },
    settingsFile: path.join(realRoot, client.install.settingsFile),
    hooks,
    trust: options.trust === true,
    trustCommand: options.trustCommand ?? `baton install-hooks ${client.id} --trust`,
    options: options.clientOptions ?? {},
    env: options.env ?? process.env,
    readText,
    planFile: (file, content, mode) => planFile(repoRoot, file, content, 'client', mode),
    userFile,
    patchJson: (text, value) => (text === null || text.trim() === '' ? newJsonText(value) : patchJson(text, value)),
  };
}

/** Everything install-hooks (or init, for one client) would write, computed without writing; throws InstallError on unreadable files. */
export async function planInstall(
  repoRoot: string,
  client: InstallClient,
  commandFor: (args: readonly string[]) => string,
  options: InstallOptions = {},
): Promise<InstallPlan> {
  const installer = await client.install.installer();
  const relative = client.install.settingsFile;
  const text = readText(path.join(repoRoot, relative), relative);
  const parsed = parseSettings(text ?? '', relative);
  if (!parsed.ok) throw new InstallError(parsed.message);
  const settings = parsed.settings;
  // What the client's installer keeps in the settings first (their keys go before `hooks`, as always).
  const merged = mergeSettings(installer.settings?.(settings, commandFor) ?? settings, client, commandFor);
  const warnings: string[] = [];
  const notices: string[] = [];
  const legacy = Object.values(settings.hooks ?? {})
    .flat()
    .flatMap((group) => group.hooks)
    .some((entry) => typeof entry.command === 'string' && entry.command.includes('lifecycle-delegation.js'));
  if (legacy) {
    warnings.push(
      `${relative} also runs agent-infra's lifecycle-delegation.js; remove those entries, or each lifecycle event is recorded twice`,
    );
  }
  const files: PlannedFile[] = [];
  // A text patch: the user's bytes stay, and a file that already holds baton's entries is unchanged.
  files.push(planFile(repoRoot, relative, settingsText(merged, text), 'settings'));
  const baton = commandFor([]);
  const guidance = options.guidance
    ? planGuidance(repoRoot, client, baton)
    : { files: [], guidance: { state: 'none' as const, foreign: [] } };
  const profileList = profiles(client.id, baton, guidance.guidance.state === 'installed');
  for (const profile of profileList)
    files.push(planFile(repoRoot, client.install.agentFile(profile.name), client.install.agentProfile(profile), 'profile'));
  if (options.instructions !== false) {
    const instructionsFile = client.install.instructions.file;
    const current = readText(path.join(repoRoot, instructionsFile), instructionsFile);
    files.push(
      planFile(
        repoRoot,
        instructionsFile,
        withInstructionBlock(current, orchestratorInstructions(client.id, baton, options.writtenBy)),
        'instructions',
      ),
    );
  }
  files.push(...guidance.files);
  const context = installContext(repoRoot, client, batonHookPositions(merged), options);
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
    files.push(
      planFile(repoRoot, path.relative(repoRoot, path.join(dir, 'agent-infra-internal')), agentInfraShim(commandFor), 'shim', 0o755),
    );
    notices.push(
      `agent-infra's lifecycle calls 'agent-infra-internal task-orchestration' from PATH: put ${dir} first on it (export PATH="${dir}:$PATH") so those calls reach baton`,
    );
  }
  return { files, command: commandFor(hookArgs(client, client.install.hooks[0]!.args)), warnings, notices, guidance: guidance.guidance };
}

/** Writes a file atomically, keeping the mode of the file it replaces (or setting `mode`). */
export function writeKeepingMode(target: string, content: string, mode?: number): void {
  let keep = mode;
  if (keep === undefined) {
    try {
      keep = fs.statSync(target).mode & 0o7777;
    } catch {
      // a new file: the umask decides
    }
  }
  fs.mkdirSync(path.dirname(target), { recursive: true });
  writeFileAtomic(target, content);
  if (keep !== undefined) fs.chmodSync(target, keep);
}

/** Writes the files a plan changes (created or updated), creating their directories. */
export function applyInstall(repoRoot: string, plan: Pick<InstallPlan, 'files'>): void {
  for (const file of plan.files) {
    if (file.outcome !== 'created' && file.outcome !== 'updated') continue;
    writeKeepingMode(path.resolve(repoRoot, file.path), file.content, file.mode);
  }
}
