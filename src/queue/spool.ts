import fs from 'node:fs';
import path from 'node:path';
import { spoolDir } from '../base/batonDir.ts';
import { writeFileAtomic } from '../base/atomicFile.ts';
import type { JobEnvelope } from './envelope.ts';

// The local journal a hook falls back to when Redis is unreachable ("hooks never hang an agent").
// One file per event under `<gitdir>/baton/spool/`, named so that lexical order is arrival order.
// Whoever reaches Redis next (a hook, a CLI command or a worker) drains it, in order, before
// adding anything of its own. A file is removed only after its job was added, so a later drainer
// can never overtake it; adding the same event twice is harmless (job ids and the worker journal
// deduplicate).

let sequence = 0;

export function spoolEvent(repoRoot: string, envelope: JobEnvelope): string {
  const dir = spoolDir(repoRoot);
  fs.mkdirSync(dir, { recursive: true });
  const stamp = String(Date.now()).padStart(15, '0');
  sequence += 1;
  const name = `${stamp}-${String(process.pid).padStart(8, '0')}-${String(sequence).padStart(6, '0')}-${envelope.eventId}.json`;
  const file = path.join(dir, name);
  writeFileAtomic(file, `${JSON.stringify(envelope)}\n`);
  return file;
}

export function spooledFiles(repoRoot: string): string[] {
  const dir = spoolDir(repoRoot);
  // The common case, checked without an exception: a worker looks at every checkout it serves each second.
  if (!fs.existsSync(dir)) return [];
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((name) => name.endsWith('.json')).sort();
}

export type DrainReport = { added: number; rejected: string[] };

/**
 * Adds every spooled event through `add`, oldest first, removing each file after its add
 * succeeded. Stops at the first failing add (Redis gone again): the rest stays for later.
 * Unreadable files are moved aside to `spool/rejected/` with the reason, never silently dropped.
 */
export async function drainSpool(repoRoot: string, add: (envelope: JobEnvelope) => Promise<void>): Promise<DrainReport> {
  const dir = spoolDir(repoRoot);
  const report: DrainReport = { added: 0, rejected: [] };
  const names = spooledFiles(repoRoot);
  if (names.length === 0) return report;
  // Loaded only when there is something to drain: a hook checks the spool on every event.
  const { jobEnvelopeSchema } = await import('./envelopeSchema.ts');
  for (const name of names) {
    const file = path.join(dir, name);
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // another drainer took it
      throw error;
    }
    let envelope: JobEnvelope;
    try {
      envelope = jobEnvelopeSchema.parse(JSON.parse(text));
    } catch (error) {
      reject(dir, name, error instanceof Error ? error.message : String(error));
      report.rejected.push(name);
      continue;
    }
    await add(envelope);
    fs.rmSync(file, { force: true });
    report.added += 1;
  }
  return report;
}

function reject(dir: string, name: string, reason: string): void {
  const rejected = path.join(dir, 'rejected');
  fs.mkdirSync(rejected, { recursive: true });
  try {
    fs.renameSync(path.join(dir, name), path.join(rejected, name));
    fs.writeFileSync(path.join(rejected, `${name}.reason.txt`), `${reason}\n`);
  } catch {
    // Another drainer moved it first.
  }
}
