import fs from 'node:fs';
import path from 'node:path';
import { randomId } from './digest.ts';

// Atomic file replacement, shared by run files, the event journal and the hook spool. Its own
// module (no schema, no zod) so the hook can spool without loading the run-file validation.

/**
 * Atomic replace: write a uniquely named temp file next to the target (exclusive create), then rename
 * it over the target, so a reader sees either the old or the new content, never a torn file.
 */
export function writeFileAtomic(file: string, content: string): void {
  const temp = `${file}.${randomId()}.tmp`;
  try {
    fs.writeFileSync(temp, content, { encoding: 'utf8', flag: 'wx' });
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
}

const TEMP_SUFFIX = /^\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.tmp$/;

/**
 * Removes the temp files of writeFileAtomic calls on `file` that never reached their rename (the
 * writer was killed in between). Only the one writer of `file` may call this: it would remove the
 * temp file of a write in flight. Returns the names removed.
 */
export function removeInterruptedWrites(file: string): string[] {
  const dir = path.dirname(file);
  const base = path.basename(file);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const removed = names.filter((name) => name.startsWith(base) && TEMP_SUFFIX.test(name.slice(base.length)));
  for (const name of removed) fs.rmSync(path.join(dir, name), { force: true });
  return removed;
}
