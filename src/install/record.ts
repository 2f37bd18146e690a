import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { FilePart, PlannedFile } from '../clients/installer.ts';
import { initRecordFile } from '../base/batonDir.ts';
import { writeFileAtomic } from '../base/atomicFile.ts';
import { InstallError } from './plan.ts';

// What `baton init` changed in the project, kept in `<gitdir>/baton/init.json` (machine-local, never
// committed; docs/adopting.md "Uninstall"): for each file, its text before baton's first init and a
// digest of what init wrote, and the directories init created. `baton uninstall` puts a file back
// byte for byte when it still is what init wrote; a file the user changed since is handled by its
// part (uninstall.ts). A checkout without the record (a teammate's clone of a committed setup) is
// uninstalled by the parts alone.

const FILE_PARTS = [
  'settings',
  'profile',
  'instructions',
  'guidance',
  'client',
  'shim',
  'gitignore',
  'user',
] as const satisfies readonly FilePart[];

const recordedFileSchema = z.object({
  path: z.string().min(1),
  part: z.enum(FILE_PARTS),
  /** The client whose wiring it is; null for what every client shares (the .gitignore line). */
  client: z.string().nullable(),
  before: z.string().nullable(),
  after: z.string(),
});

const initRecordSchema = z.object({
  version: z.literal(1),
  command: z.string(),
  files: z.array(recordedFileSchema),
  /** Directories init created (repo-relative), removed again when uninstall leaves them empty. */
  dirs: z.array(z.string()),
});

export type RecordedFile = z.infer<typeof recordedFileSchema>;
export type InitRecord = z.infer<typeof initRecordSchema>;

/** The digest of a file the user edited since baton wrote it: it matches no text. */
const EDITED = 'edited';

export function contentDigest(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/** The record of this checkout, null when there is none; one that cannot be read is an error (uninstall would guess). */
export function readInitRecord(repoRoot: string): InitRecord | null {
  const file = initRecordFile(repoRoot);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new InstallError(`${file} cannot be read (${(error as Error).message})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InstallError(`${file} is not valid JSON (${(error as Error).message}); move it away to uninstall without it`);
  }
  const parsed = initRecordSchema.safeParse(value);
  if (!parsed.success)
    throw new InstallError(
      `${file} is not a record of baton init (${parsed.error.issues[0]?.message}); move it away to uninstall without it`,
    );
  return parsed.data;
}

/** Writes the record (private: it holds the text of the project's files), or removes it when empty. */
export function writeInitRecord(repoRoot: string, record: InitRecord): void {
  const file = initRecordFile(repoRoot);
  if (record.files.length === 0) {
    fs.rmSync(file, { force: true });
    return;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeFileAtomic(file, `${JSON.stringify(record, null, 2)}\n`);
  fs.chmodSync(file, 0o600);
}

/** One planned file of init, with the client it wires and the text its `before` stands for in the record. */
export type InitFile = Readonly<{ file: PlannedFile; client: string | null; original: string | null }>;

/**
 * The record after an init: a file already recorded keeps its first `before` while it still is what
 * the earlier init wrote; one the user changed since is recorded afresh (`original`: its text with
 * baton's part taken out), and so is a file init meets for the first time.
 */
export function recordInit(
  previous: InitRecord | null,
  command: string,
  files: readonly InitFile[],
  createdDirs: readonly string[],
): InitRecord {
  const entries = new Map((previous?.files ?? []).map((entry) => [entry.path, entry]));
  for (const { file, client, original } of files) {
    if (file.part === 'user') continue; // per-user state of the client: never undone
    const earlier = entries.get(file.path);
    if (file.outcome === 'kept') {
      // baton's file, edited by the user: not what init wrote, whatever the record said before.
      entries.set(file.path, { path: file.path, part: file.part, client, before: earlier?.before ?? null, after: EDITED });
      continue;
    }
    const untouchedSince = earlier !== undefined && file.before !== null && contentDigest(file.before) === earlier.after;
    const before = untouchedSince ? earlier.before : original;
    entries.set(file.path, { path: file.path, part: file.part, client, before, after: contentDigest(file.content) });
  }
  const dirs = [...new Set([...(previous?.dirs ?? []), ...createdDirs])];
  return { version: 1, command, files: [...entries.values()], dirs };
}

/** The directories writing `files` would create (repo-relative, deepest last). */
export function directoriesCreated(repoRoot: string, files: readonly PlannedFile[]): string[] {
  const created = new Set<string>();
  for (const file of files) {
    if (file.outcome !== 'created' || path.isAbsolute(file.path)) continue;
    let dir = path.dirname(file.path);
    while (dir !== '.' && dir !== '' && !fs.existsSync(path.join(repoRoot, dir))) {
      created.add(dir);
      dir = path.dirname(dir);
    }
  }
  return [...created].sort((a, b) => a.split(path.sep).length - b.split(path.sep).length);
}
