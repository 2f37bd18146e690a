// The object database: hashing objects as git does, writing the missing ones as loose objects, and
// reading trees and commits back (loose objects directly; packed ones through isomorphic-git).
import fs from 'node:fs';
import path from 'node:path';
import { Buffer } from 'node:buffer';
import cryptoModule, { createHash, randomBytes } from 'node:crypto';
import { deflateSync, inflateSync, constants as zlibConstants } from 'node:zlib';
import { PackIndexSet } from './packIndex.ts';
import { EMPTY_TREE_OID } from './tree.ts';

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag';

export type GitObject = { type: ObjectType; content: Buffer };

/** Thrown when an object id is not in the database. */
export class ObjectNotFoundError extends Error {
  readonly oid: string;
  constructor(oid: string) {
    super(`object ${oid} not found in the repository's object database`);
    this.name = 'ObjectNotFoundError';
    this.oid = oid;
  }
}

/** Thrown when an id that should name a tree (after peeling commits and tags) names another object. */
export class NotATreeError extends Error {
  readonly oid: string;
  readonly objectType: ObjectType;
  constructor(oid: string, objectType: ObjectType) {
    super(`${oid} is a ${objectType}, not a tree`);
    this.name = 'NotATreeError';
    this.oid = oid;
    this.objectType = objectType;
  }
}

type OneShotHash = (algorithm: string, data: Uint8Array, encoding: 'hex') => string;
/** crypto.hash (Node ≥ 20.12) avoids creating a Hash object per call; fall back where missing. */
const oneShot: OneShotHash | undefined = (cryptoModule as unknown as { hash?: OneShotHash }).hash;

/** git's object id: sha1 of `<type> <size>\0<content>`. */
export function hashObject(type: ObjectType, content: Uint8Array): string {
  return createHash('sha1').update(`${type} ${content.length}\0`, 'latin1').update(content).digest('hex');
}

/** `<type> <size>\0<content>`: the bytes an object id is the sha1 of. */
export function wrapObject(type: ObjectType, content: Uint8Array): Buffer {
  const header = `${type} ${content.length}\0`;
  const out = Buffer.allocUnsafe(header.length + content.length);
  out.write(header, 0, 'latin1');
  out.set(content, header.length);
  return out;
}

/**
 * A regular file read straight into a wrapped blob (`blob <size>\0` + its bytes) with the size its
 * stat gave: one buffer, no copy. Null if the file no longer has that size (it changed since the
 * stat): the caller then reads it whole.
 */
export function readFileAsBlob(file: string, size: number): Buffer | null {
  const header = `blob ${size}\0`;
  const end = header.length + size;
  // One byte more than the blob: reading it means the file grew since the stat.
  const out = Buffer.allocUnsafe(end + 1);
  let at = out.write(header, 0, 'latin1');
  const fd = fs.openSync(file, 'r');
  try {
    for (;;) {
      const wanted = end + 1 - at;
      const n = fs.readSync(fd, out, at, wanted, null);
      at += n;
      if (at > end) return null;
      // A short read that completes the stat's size is the end of the file: no extra read for EOF.
      if (n === 0 || (n < wanted && at === end)) break;
    }
  } finally {
    fs.closeSync(fd);
  }
  return at === end ? out.subarray(0, end) : null;
}

/** sha1 of bytes that already hold the object header. */
export function hashWrapped(wrapped: Uint8Array): string {
  return oneShot ? oneShot('sha1', wrapped, 'hex') : createHash('sha1').update(wrapped).digest('hex');
}

type PackedObjectReader = typeof import('./packedObjects.ts');

let isoGitPromise: Promise<PackedObjectReader> | undefined;
/** isomorphic-git is loaded only when a deltified packed object has to be read (it costs ~50 ms to load). */
function loadIsoGit(): Promise<PackedObjectReader> {
  isoGitPromise ??= import('./packedObjects.ts');
  return isoGitPromise;
}

export class ObjectDatabase {
  readonly objectsDir: string;
  /** The git dir whose `objects/` this is, as isomorphic-git wants it. */
  private readonly gitDir: string;
  private readonly packs: PackIndexSet;
  private readonly alternates: ObjectDatabase[];
  /** Ids known to be present (written or found by us); survives between captures of one instance. */
  private readonly known = new Set<string>();
  private readonly fanoutDirs = new Set<string>();
  /**
   * Loose objects per fan-out directory (`objects/ab/`), listed during the current operation. A cold
   * capture asks about thousands of objects (every tree it builds, every file it hashes): the first
   * question to a fan-out directory costs one stat, the second lists the directory, and the rest
   * are answered from that listing: at most 256 listings instead of one stat per object.
   */
  private looseListings = new Map<string, Set<string> | null>();
  /** isomorphic-git's cache of parsed pack files. */
  private readonly isoCache: object = {};

  constructor(gitDir: string, objectsDir = path.join(gitDir, 'objects'), depth = 0) {
    this.gitDir = gitDir;
    this.objectsDir = objectsDir;
    this.packs = new PackIndexSet(objectsDir);
    this.alternates = depth < 5 ? readAlternates(objectsDir, depth) : [];
  }

  /** Starts a new operation: packs may have been added or removed since the last one. */
  refresh(): void {
    this.packs.invalidate();
    this.looseListings = new Map();
    for (const alt of this.alternates) alt.refresh();
  }

  /** Releases open pack files (the database stays usable: they are reopened on demand). */
  close(): void {
    this.packs.close();
    for (const alt of this.alternates) alt.close();
  }

  loosepath(oid: string): string {
    return `${this.objectsDir}/${oid.slice(0, 2)}/${oid.slice(2)}`;
  }

  /** Whether the object exists, loose or packed (here or in an alternate object store). */
  has(oid: string): boolean {
    if (this.known.has(oid)) return true;
    if (this.hasUncached(oid)) {
      this.known.add(oid);
      return true;
    }
    return false;
  }

  private hasUncached(oid: string): boolean {
    // Packs first: an in-memory binary search, where a loose check costs a system call.
    if (this.packs.has(oid)) return true;
    if (this.hasLoose(oid)) return true;
    for (const alt of this.alternates) if (alt.has(oid)) return true;
    return false;
  }

  private hasLoose(oid: string): boolean {
    const fanout = oid.slice(0, 2);
    const listing = this.looseListings.get(fanout);
    if (listing === undefined) {
      // First question to this directory in this operation: one stat.
      this.looseListings.set(fanout, null);
      return fs.existsSync(this.loosepath(oid));
    }
    if (listing !== null) return listing.has(oid.slice(2));
    let names: string[];
    try {
      names = fs.readdirSync(`${this.objectsDir}/${fanout}`);
    } catch {
      names = [];
    }
    const set = new Set(names);
    this.looseListings.set(fanout, set);
    return set.has(oid.slice(2));
  }

  /** Hashes an object and writes it as a loose object unless it already exists. Returns its id. */
  write(type: ObjectType, content: Uint8Array): string {
    const oid = hashObject(type, content);
    this.writeWithId(oid, type, content);
    return oid;
  }

  /** Writes an object whose id the caller already computed (unless it already exists). */
  writeWithId(oid: string, type: ObjectType, content: Uint8Array): void {
    if (this.has(oid)) return;
    this.writeWrapped(oid, wrapObject(type, content));
  }

  /** Writes `<type> <size>\0<content>` bytes under `oid` (unless the object already exists). */
  writeWrapped(oid: string, wrapped: Uint8Array): void {
    if (this.has(oid)) return;
    // git writes loose objects with core.looseCompression, default Z_BEST_SPEED.
    const deflated = deflateSync(wrapped, { level: zlibConstants.Z_BEST_SPEED });
    const dir = `${this.objectsDir}/${oid.slice(0, 2)}`;
    if (!this.fanoutDirs.has(dir)) {
      fs.mkdirSync(dir, { recursive: true });
      this.fanoutDirs.add(dir);
    }
    const final = `${dir}/${oid.slice(2)}`;
    const tmp = `${dir}/tmp_obj_${randomBytes(6).toString('hex')}`;
    fs.writeFileSync(tmp, deflated, { mode: 0o444 });
    try {
      fs.renameSync(tmp, final);
    } catch (error) {
      fs.rmSync(tmp, { force: true });
      if (!fs.existsSync(final)) throw error;
    }
    this.known.add(oid);
  }

  /** Reads an object: loose objects directly, packed ones through isomorphic-git. */
  async read(oid: string): Promise<GitObject> {
    const loose = this.readLoose(oid);
    if (loose) return loose;
    if (oid === EMPTY_TREE_OID) return { type: 'tree', content: Buffer.alloc(0) };
    if (this.packs.has(oid) || this.packs.hasAfterRefresh(oid)) {
      const whole = this.packs.readWhole(oid);
      if (whole && hashObject(whole.type, whole.content) === oid) return whole;
      const git = await loadIsoGit();
      const result = await git.readObject({ fs, gitdir: this.gitDir, oid, format: 'content', cache: this.isoCache });
      const object = result.object;
      if (!(object instanceof Uint8Array)) throw new Error(`unexpected object format reading ${oid}`);
      const content = Buffer.from(object.buffer, object.byteOffset, object.byteLength);
      return { type: result.type as ObjectType, content };
    }
    for (const alt of this.alternates) {
      if (alt.has(oid)) return alt.read(oid);
    }
    throw new ObjectNotFoundError(oid);
  }

  private readLoose(oid: string): GitObject | null {
    let raw: Buffer;
    try {
      raw = fs.readFileSync(this.loosepath(oid));
    } catch {
      return null;
    }
    const data = inflateSync(raw);
    const nul = data.indexOf(0);
    const header = nul > 0 ? data.toString('latin1', 0, nul) : '';
    const match = /^(blob|tree|commit|tag) (\d+)$/.exec(header);
    if (!match || Number(match[2]) !== data.length - nul - 1) throw new Error(`corrupt loose object ${oid}`);
    return { type: match[1] as ObjectType, content: data.subarray(nul + 1) };
  }
}

function readAlternates(objectsDir: string, depth: number): ObjectDatabase[] {
  let text: string;
  try {
    text = fs.readFileSync(path.join(objectsDir, 'info', 'alternates'), 'utf8');
  } catch {
    return [];
  }
  const out: ObjectDatabase[] = [];
  for (const line of text.split('\n')) {
    const p = line.trim();
    if (!p || p.startsWith('#')) continue;
    const dir = path.resolve(objectsDir, p);
    out.push(new ObjectDatabase(path.dirname(dir), dir, depth + 1));
  }
  return out;
}

/** The tree id a commit (or an annotated tag pointing at one) refers to. */
export async function peelToTree(db: ObjectDatabase, oid: string): Promise<string> {
  let current = oid;
  for (let depth = 0; depth < 10; depth++) {
    if (current === EMPTY_TREE_OID && !db.has(current)) return current;
    const obj = await db.read(current);
    if (obj.type === 'tree') return current;
    const text = obj.content.toString('utf8', 0, Math.min(obj.content.length, 200));
    if (obj.type === 'commit') {
      const m = /^tree ([0-9a-f]{40})/.exec(text);
      if (!m?.[1]) throw new Error(`malformed commit ${current}`);
      return m[1];
    }
    if (obj.type === 'tag') {
      const m = /^object ([0-9a-f]{40})/.exec(text);
      if (!m?.[1]) throw new Error(`malformed tag ${current}`);
      current = m[1];
      continue;
    }
    throw new NotATreeError(oid, obj.type);
  }
  throw new Error(`tag chain too long at ${oid}`);
}
