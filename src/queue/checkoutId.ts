import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomHex } from '../base/digest.ts';
import { checkoutFile } from '../base/batonDir.ts';
import { checkoutProblem, mainRepositoryOf } from '../base/repoRoot.ts';

// Which checkout this is, as opposed to which path it sits at. Two machines (dev containers,
// identical home layouts) often have a checkout at the same path and the same host name; a queue
// named after the path would be shared by both and either worker would apply the other's events.
// So each checkout gets a random id the first time any baton command, hook or worker touches it,
// kept in `<gitdir>/baton/checkout.json` next to its spool and journal, and the repository's queue
// is named after that id. Only node: built-ins here: the hook reads this file on every event.
//
//   moved checkout   (the recorded root no longer exists)            keeps its id; root updated
//   copied checkout  (the recorded root still holds the same id)     gets a new id
//   same checkout seen at another path (bind mount: same file)       keeps its id; file untouched
//   re-clone         (a new .git)                                    a new id; the old queue is orphaned

export const CHECKOUT_FILE_VERSION = 1;
export const CHECKOUT_ID_PATTERN = /^[0-9a-f]{16}$/;

export type CheckoutRecord = Readonly<{
  v: 1;
  id: string;
  root: string;
  host: string;
  createdAt: string;
  movedFrom?: string;
  copiedFrom?: string;
}>;

function newRecord(root: string, extra: Partial<CheckoutRecord> = {}): CheckoutRecord {
  return { v: CHECKOUT_FILE_VERSION, id: randomHex(8), root, host: os.hostname(), createdAt: new Date().toISOString(), ...extra };
}

function readRecord(file: string): CheckoutRecord | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  let parsed: Partial<CheckoutRecord>;
  try {
    parsed = JSON.parse(text) as Partial<CheckoutRecord>;
  } catch {
    throw new Error(`${file} is not valid JSON; remove it to give this checkout a new id (its queued events stay on the old queue)`);
  }
  if (typeof parsed.id !== 'string' || !CHECKOUT_ID_PATTERN.test(parsed.id) || typeof parsed.root !== 'string') {
    throw new Error(`${file} has no valid checkout id; remove it to give this checkout a new id (its queued events stay on the old queue)`);
  }
  return parsed as CheckoutRecord;
}

/** Creates the file only if nobody did: a complete temp file hard-linked into place (fails if present). */
function createExclusive(file: string, record: CheckoutRecord): boolean {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${randomHex(4)}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify(record)}\n`, { flag: 'wx' });
  try {
    fs.linkSync(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

function replaceAtomically(file: string, record: CheckoutRecord): void {
  const temp = `${file}.${process.pid}.${randomHex(4)}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify(record)}\n`, { flag: 'wx' });
  fs.renameSync(temp, file);
}

function sameFile(a: string, b: string): boolean {
  try {
    const [left, right] = [fs.statSync(a), fs.statSync(b)];
    return left.dev === right.dev && left.ino === right.ino;
  } catch {
    return false;
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Runs `update` holding `<file>.lock` (O_EXCL), so that two processes that find a moved or copied
 * checkout at once agree on one outcome. A lock older than 10 s is from a dead process and is taken over.
 */
function withLock<T>(file: string, update: () => T): T {
  const lock = `${file}.lock`;
  const deadline = Date.now() + 5_000;
  for (;;) {
    try {
      fs.closeSync(fs.openSync(lock, 'wx'));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      try {
        if (Date.now() - fs.statSync(lock).mtimeMs > 10_000) fs.rmSync(lock, { force: true });
      } catch {
        // removed meanwhile
      }
      if (Date.now() > deadline) throw new Error(`${lock} is held by another process; remove it if no baton process is running`);
      sleepSync(20);
    }
  }
  try {
    return update();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

/**
 * The checkout record of `realRoot` (a real path holding `.git`), created on first use. The hook's
 * common case is one small file read.
 */
export function checkoutRecord(realRoot: string): CheckoutRecord {
  const file = checkoutFile(realRoot);
  for (;;) {
    const existing = readRecord(file);
    if (existing === null) {
      // Never a git directory of our own making: a linked worktree's that is gone stays gone.
      const problem = checkoutProblem(realRoot);
      if (problem) throw new Error(problem);
      // Whether we created it or another process did first, read back the one that won.
      createExclusive(file, newRecord(realRoot));
      continue;
    }
    if (existing.root === realRoot) return existing;
    return reconcile(file, realRoot, existing);
  }
}

/** The recorded root is not where we are: a move, a copy, or the same checkout seen through another path. */
function reconcile(file: string, realRoot: string, recorded: CheckoutRecord): CheckoutRecord {
  let elsewhere: string | null = null;
  try {
    elsewhere = checkoutFile(recorded.root);
  } catch {
    elsewhere = null; // the recorded root is gone (or holds no repository): a move
  }
  if (elsewhere !== null && sameFile(elsewhere, file)) {
    // One checkout, two paths (a bind mount, a container's view of a host directory): same id, and
    // no rewrite, or the two views would keep overwriting each other.
    return { ...recorded, root: realRoot };
  }
  return withLock(file, () => {
    const current = readRecord(file);
    if (current === null) {
      const created = newRecord(realRoot);
      replaceAtomically(file, created);
      return created;
    }
    if (current.root === realRoot) return current; // another process reconciled it first
    let original: CheckoutRecord | null = null;
    try {
      original = readRecord(checkoutFile(current.root));
    } catch {
      original = null;
    }
    const updated =
      original !== null && original.id === current.id
        ? newRecord(realRoot, { copiedFrom: current.root })
        : { ...current, root: realRoot, movedFrom: current.root };
    replaceAtomically(file, updated);
    return updated;
  });
}

/** Which checkout (id), where it is on this machine (root), and which machine says so (host). */
export type RepoIdentity = Readonly<{
  id: string;
  root: string;
  host: string;
  /** A linked worktree's main repository root (what the repository registry records beside it). */
  main?: string;
}>;

/**
 * The identity a job carries (docs/architecture.md "Job envelope"): the checkout's random id, never
 * a function of the path (two machines with a checkout at the same path get two queues), its real
 * path and this machine's host name.
 */
export function repoIdentity(root: string): RepoIdentity {
  const real = fs.realpathSync.native(root);
  const main = mainRepositoryOf(real);
  return { id: checkoutRecord(real).id, root: real, host: os.hostname(), ...(main ? { main } : {}) };
}
