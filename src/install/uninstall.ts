import fs from 'node:fs';
import path from 'node:path';
import type { InstallClient } from '../clients/installer.ts';
import type { FilePart, InstallContext, PlannedFile } from '../clients/installer.ts';
import { SKILL_NAMES, guidanceOwner } from './guidance.ts';
import { EXECUTOR, REVIEWER, profiles, withoutInstructionBlock } from './instructions.ts';
import { installContext, readText, writeKeepingMode } from './plan.ts';
import { contentDigest } from './record.ts';
import type { InitRecord, RecordedFile } from './record.ts';
import { batonHookPositions, batonOfHookCommand, parseSettings, settingsText, withoutBatonHooks } from './settings.ts';
import { withoutGitignoreLine } from './gitignore.ts';
import { jsonEqual } from './jsonText.ts';

// `baton uninstall` (docs/adopting.md "Uninstall"): takes out exactly what `baton init` put in. A
// file that still is what init wrote gets back its text from before init, byte for byte (record.ts).
// A file the user changed since, or one of a checkout without the record, loses only baton's part:
// its hook entries and permission rule, its instructions block, its .gitignore line, what the
// client's installer added; the user's changes stay. A file that is baton's own (a profile, a stage
// skill) and that the user edited is refused unless --force. Per-user state of the clients (trust)
// is left alone. Nothing is written here: the command applies the plan, or refuses it whole.

export type UninstallChange = Readonly<{
  path: string;
  client: string | null;
  /** `restored`: the text from before init; `removed`: the file goes; `updated`: baton's part taken out; `refused`: an edited file of baton's (needs --force). */
  outcome: 'restored' | 'removed' | 'updated' | 'refused';
  /** The new text; null removes the file. */
  content: string | null;
  reason?: string;
}>;

export type UninstallPlan = Readonly<{ changes: UninstallChange[]; dirs: string[]; remaining: InitRecord | null }>;

type Candidate = Readonly<{ path: string; part: FilePart; client: InstallClient | null; entry: RecordedFile | null }>;

/** What a client's installed files are, with the context its installer needs. */
type ClientFiles = Readonly<{
  client: InstallClient;
  context: InstallContext;
  command: string | null;
  without: ReadonlyMap<string, (text: string) => string>;
}>;

/** The command a client's installed hooks run baton with, as found in its settings (null: none there). */
export function installedBatonCommand(repoRoot: string, client: InstallClient): string | null {
  const text = readText(path.join(repoRoot, client.install.settingsFile), client.install.settingsFile);
  const parsed = text === null ? null : parseSettings(text, client.install.settingsFile);
  if (!parsed?.ok) return null;
  const first = batonHookPositions(parsed.settings)[0];
  return first ? batonOfHookCommand(first.command) : null;
}

async function clientFiles(repoRoot: string, client: InstallClient, recordedCommand: string | null): Promise<ClientFiles> {
  const installer = await client.install.installer();
  const context = installContext(repoRoot, client, [], {});
  const without = new Map((installer.projectFiles?.(context) ?? []).map((file) => [file.path, file.without] as const));
  return { client, context, command: installedBatonCommand(repoRoot, client) ?? recordedCommand, without };
}

/** Whether a profile is baton's as it wrote it, baton's but edited, or not baton's (agent-infra's own). */
function profileOwner(text: string, files: ClientFiles, file: string): 'baton' | 'edited' | 'foreign' {
  const { client, command } = files;
  if (command !== null) {
    const written = [true, false]
      .flatMap((guidance) => profiles(client.id, command, guidance))
      .filter((profile) => client.install.agentFile(profile.name) === file);
    if (written.some((profile) => client.install.agentProfile(profile) === text)) return 'baton';
  }
  // Only baton's profiles hand the artifact over on standard input.
  return /complete-stage .*--content -/.test(text) ? 'edited' : 'foreign';
}

/** `text` with baton's part taken out (null: nothing of the user's is left, the file goes); the same text when baton has no part in it. */
export async function withoutBaton(
  part: FilePart,
  text: string,
  file: string,
  client: InstallClient | null,
  without?: (text: string) => string,
): Promise<string | null> {
  switch (part) {
    case 'settings': {
      const parsed = parseSettings(text, file);
      if (!parsed.ok || client === null) return text;
      const installer = await client.install.installer();
      const kept = withoutBatonHooks(installer.withoutSettings?.(parsed.settings) ?? parsed.settings);
      if (jsonEqual(kept, parsed.settings)) return text;
      return Object.keys(kept).length === 0 ? null : settingsText(kept, text);
    }
    case 'instructions':
      return emptyIsGone(withoutInstructionBlock(text));
    case 'gitignore':
      return emptyIsGone(withoutGitignoreLine(text));
    case 'client':
      return without ? emptyIsGone(without(text)) : null;
    default:
      return null; // baton's own file
  }
}

/**
 * What a file was without baton, for the record of init (record.ts): the user's text with baton's
 * part taken out; for baton's own files, null, unless the file there is not baton's (agent-infra's
 * own profile, which init replaces and uninstall puts back).
 */
export async function originalOf(repoRoot: string, file: PlannedFile, client: InstallClient | null): Promise<string | null> {
  if (file.before === null || file.outcome === 'created') return null;
  // An empty file holds nothing of baton's: the user's, as it is.
  if (file.before.trim() === '' && file.part !== 'shim') return file.before;
  if (file.part === 'gitignore' || file.part === 'settings' || file.part === 'instructions')
    return withoutBaton(file.part, file.before, file.path, client);
  if (file.part === 'client' && client) {
    const files = await clientFiles(repoRoot, client, null);
    const without = files.without.get(file.path);
    return without ? withoutBaton('client', file.before, file.path, client, without) : file.before;
  }
  if (file.part === 'profile' && client)
    return profileOwner(file.before, await clientFiles(repoRoot, client, null), file.path) === 'foreign' ? file.before : null;
  if (file.part === 'guidance') return guidanceOwner(file.before) === 'foreign' ? file.before : null;
  return file.part === 'shim' ? null : file.before;
}

function emptyIsGone(text: string): string | null {
  return text.trim() === '' ? null : text;
}

function candidatesOf(files: ClientFiles): Omit<Candidate, 'entry'>[] {
  const { client } = files;
  const list: Omit<Candidate, 'entry'>[] = [
    { path: client.install.settingsFile, part: 'settings', client },
    { path: client.install.agentFile(EXECUTOR), part: 'profile', client },
    { path: client.install.agentFile(REVIEWER), part: 'profile', client },
    { path: client.install.instructions.file, part: 'instructions', client },
  ];
  const skills = client.install.skills;
  if (skills) for (const name of SKILL_NAMES) list.push({ path: skills.file(name), part: 'guidance', client });
  for (const file of files.without.keys()) list.push({ path: file, part: 'client', client });
  return list;
}

async function changeFor(
  repoRoot: string,
  candidate: Candidate,
  files: ClientFiles | null,
  force: boolean,
): Promise<UninstallChange | null> {
  const absolute = path.resolve(repoRoot, candidate.path);
  const current = readText(absolute, candidate.path);
  if (current === null || candidate.part === 'user') return null;
  const { entry } = candidate;
  const client = candidate.client?.id ?? null;
  const to = (content: string | null, outcome?: UninstallChange['outcome']): UninstallChange | null =>
    content === current
      ? null
      : {
          path: candidate.path,
          client,
          outcome: outcome ?? (content === null ? 'removed' : entry && content === entry.before ? 'restored' : 'updated'),
          content,
        };
  if (entry && contentDigest(current) === entry.after) return to(entry.before);
  // Changed since init, or not recorded: by its part.
  const own =
    candidate.part === 'guidance' ||
    candidate.part === 'profile' ||
    candidate.part === 'shim' ||
    (candidate.part === 'client' && !files?.without.has(candidate.path));
  if (!own) return to(await withoutBaton(candidate.part, current, candidate.path, candidate.client, files?.without.get(candidate.path)));
  const owner =
    candidate.part === 'guidance'
      ? guidanceOwner(current)
      : candidate.part === 'profile' && files
        ? profileOwner(current, files, candidate.path)
        : entry
          ? 'edited'
          : 'foreign';
  if (owner === 'foreign' && !entry) return null; // not baton's (agent-infra's, or the user's)
  if (owner === 'baton') return to(entry?.before ?? null);
  if (!force)
    return {
      path: candidate.path,
      client,
      outcome: 'refused',
      content: current,
      reason: 'edited since baton init wrote it; --force removes it',
    };
  return to(entry?.before ?? null);
}

/** What uninstalling `clients` would change; `record` is this checkout's record of init (null: none). */
export async function planUninstall(
  repoRoot: string,
  clients: readonly InstallClient[],
  record: InitRecord | null,
  options: { force?: boolean } = {},
): Promise<UninstallPlan> {
  const ids = new Set(clients.map((client) => client.id));
  const others = new Set((record?.files ?? []).map((entry) => entry.client).filter((id): id is string => id !== null && !ids.has(id)));
  const covered = (entry: RecordedFile) => (entry.client === null ? others.size === 0 : ids.has(entry.client));
  const perClient = new Map<string, ClientFiles>();
  for (const client of clients) perClient.set(client.id, await clientFiles(repoRoot, client, record?.command ?? null));
  const candidates = new Map<string, Candidate>();
  for (const entry of record?.files ?? []) {
    if (!covered(entry)) continue;
    candidates.set(entry.path, {
      path: entry.path,
      part: entry.part,
      client: clients.find((client) => client.id === entry.client) ?? null,
      entry,
    });
  }
  for (const files of perClient.values()) {
    for (const candidate of candidatesOf(files))
      if (!candidates.has(candidate.path)) candidates.set(candidate.path, { ...candidate, entry: null });
  }
  const changes: UninstallChange[] = [];
  for (const candidate of candidates.values()) {
    const change = await changeFor(
      repoRoot,
      candidate,
      candidate.client ? (perClient.get(candidate.client.id) ?? null) : null,
      options.force === true,
    );
    if (change) changes.push(change);
  }
  const handled = new Set([...candidates.values()].filter((candidate) => candidate.entry).map((candidate) => candidate.path));
  const refused = new Set(changes.filter((change) => change.outcome === 'refused').map((change) => change.path));
  const remainingFiles = (record?.files ?? []).filter((entry) => !handled.has(entry.path) || refused.has(entry.path));
  // Without a record, the directories a removed file leaves empty go too (never the repository's own).
  const removedDirs = changes.filter((change) => change.content === null).flatMap((change) => ancestors(path.dirname(change.path)));
  const dirs = record ? record.dirs : [...new Set(removedDirs)];
  return { changes, dirs, remaining: record ? { ...record, files: remainingFiles } : null };
}

/** Applies a plan without refusals: files written or removed, then the directories left empty (deepest first). */
export function applyUninstall(repoRoot: string, plan: UninstallPlan): string[] {
  for (const change of plan.changes) {
    const file = path.resolve(repoRoot, change.path);
    if (change.content === null) fs.rmSync(file, { force: true });
    else writeKeepingMode(file, change.content);
  }
  const removed: string[] = [];
  const ordered = [...plan.dirs].sort((a, b) => b.split(path.sep).length - a.split(path.sep).length);
  for (const dir of ordered) {
    try {
      fs.rmdirSync(path.join(repoRoot, dir)); // only when empty
      removed.push(dir);
    } catch {
      // not empty, or not there
    }
  }
  return removed;
}

/** `a/b/c` → `a/b/c`, `a/b`, `a`. */
function ancestors(dir: string): string[] {
  const list: string[] = [];
  for (let current = dir; current !== '.' && current !== '' && current !== path.sep; current = path.dirname(current)) list.push(current);
  return list;
}
