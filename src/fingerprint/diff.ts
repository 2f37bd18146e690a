// Changed paths between two fingerprints: what `git diff --name-only --no-renames <a> <b>` lists,
// in git's order (a merge walk of both trees in tree order), skipping subtrees whose ids are equal.
import { CodedError } from '../core/errorCodes.ts';
import { NotATreeError, ObjectNotFoundError, peelToTree, type ObjectDatabase } from './objects.ts';
import { compareTreeEntries, EMPTY_TREE_OID, MODE_TREE, parseTree, type TreeEntry } from './tree.ts';

const OID_RE = /^[0-9a-fA-F]{40}$/;

/** Why a fingerprint was refused: not a 40-hex id, not in the repository, or not a tree. */
export type InvalidFingerprintCode = 'malformed' | 'unknown' | 'not-a-tree';

/** Thrown for a fingerprint that is not a 40-hex id or not a tree in the repository. */
export class InvalidFingerprintError extends CodedError<InvalidFingerprintCode> {
  constructor(code: InvalidFingerprintCode, message: string) {
    super('InvalidFingerprintError', code, message);
  }
}

/** Resolves a fingerprint argument to a tree id (commits and tags are peeled, as `git diff` does). */
export async function resolveTreeId(db: ObjectDatabase, id: string): Promise<string> {
  if (typeof id !== 'string' || !OID_RE.test(id)) {
    throw new InvalidFingerprintError('malformed', `invalid fingerprint ${JSON.stringify(id)}: expected a 40-character hex tree id`);
  }
  const oid = id.toLowerCase();
  try {
    return await peelToTree(db, oid);
  } catch (error) {
    if (error instanceof ObjectNotFoundError) {
      throw new InvalidFingerprintError('unknown', `unknown fingerprint ${oid}: no such object in the repository`);
    }
    if (error instanceof NotATreeError) {
      throw new InvalidFingerprintError('not-a-tree', `invalid fingerprint ${oid}: ${error.message}`);
    }
    throw error;
  }
}

export async function diffTrees(db: ObjectDatabase, before: string, after: string): Promise<string[]> {
  const out: string[] = [];
  const read = async (oid: string): Promise<TreeEntry[]> => {
    if (oid === EMPTY_TREE_OID) return [];
    const obj = await db.read(oid);
    if (obj.type !== 'tree') throw new Error(`object ${oid} is a ${obj.type}, expected a tree`);
    return parseTree(obj.content);
  };
  const listAll = async (prefix: string, oid: string): Promise<void> => {
    for (const e of await read(oid)) {
      const p = prefix + e.name;
      if (e.mode === MODE_TREE) await listAll(`${p}/`, e.oid);
      else out.push(p);
    }
  };
  const one = async (prefix: string, e: TreeEntry): Promise<void> => {
    if (e.mode === MODE_TREE) await listAll(`${prefix + e.name}/`, e.oid);
    else out.push(prefix + e.name);
  };
  const walk = async (prefix: string, a: string, b: string): Promise<void> => {
    if (a === b) return;
    const [ea, eb] = await Promise.all([read(a), read(b)]);
    let i = 0;
    let j = 0;
    while (i < ea.length || j < eb.length) {
      const x = ea[i];
      const y = eb[j];
      const cmp = x === undefined ? 1 : y === undefined ? -1 : compareTreeEntries(x, y);
      if (cmp < 0 && x) {
        await one(prefix, x);
        i++;
      } else if (cmp > 0 && y) {
        await one(prefix, y);
        j++;
      } else if (x && y) {
        if (x.mode === MODE_TREE) {
          // Both are trees (equal order keys imply the same kind).
          await walk(`${prefix + x.name}/`, x.oid, y.oid);
        } else if (x.oid !== y.oid || x.mode !== y.mode) {
          out.push(prefix + x.name);
        }
        i++;
        j++;
      }
    }
  };
  await walk('', before, after);
  return out;
}
