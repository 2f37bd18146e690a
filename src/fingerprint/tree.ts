// Git tree objects: entry modes, git's entry order, serialisation and parsing.
import { Buffer } from 'node:buffer';

/** Entry modes as git writes them in tree objects (octal text, no leading zero for trees). */
export const MODE_TREE = '40000';
export const MODE_FILE = '100644';
export const MODE_EXECUTABLE = '100755';
export const MODE_SYMLINK = '120000';
export const MODE_GITLINK = '160000';

export type TreeMode = typeof MODE_TREE | typeof MODE_FILE | typeof MODE_EXECUTABLE | typeof MODE_SYMLINK | typeof MODE_GITLINK;

export type TreeEntry = {
  /** One path component, as the file system returned it (UTF-8 on disk). */
  name: string;
  mode: TreeMode;
  /** Lower-case hex object id. */
  oid: string;
};

/** The id git gives the empty tree; git knows it even when the object is not in the database. */
export const EMPTY_TREE_OID = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
/** The id of the empty blob. */
export const EMPTY_BLOB_OID = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391';

/**
 * Compares two strings by Unicode code point, which is the byte order of their UTF-8 encodings (the
 * order git uses). Plain `<` compares UTF-16 code units, which differs for astral characters.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Move surrogates (U+D800–U+DFFF, which encode code points above U+FFFF) above U+E000–U+FFFF.
    if (x >= 0xd800) x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
    if (y >= 0xd800) y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    return x - y;
  }
  return a.length - b.length;
}

/** git's tree order (base_name_compare): bytewise, a directory compared as if its name ended in '/'. */
export function compareTreeEntries(a: TreeEntry, b: TreeEntry): number {
  // compareCodePoints(`${a.name}/`, `${b.name}/`) for directories, without building those strings:
  // a cold 100,000-file capture sorts ~10,000 trees.
  const x = a.name;
  const y = b.name;
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const cx = x.charCodeAt(i);
    const cy = y.charCodeAt(i);
    if (cx !== cy) return codePointOrder(cx) - codePointOrder(cy);
  }
  // One name is a prefix of the other. Next comes the longer name's character, or '/' after a
  // directory's name, or the end (-1). A name has no '/', so two equal ones mean equal keys.
  const cx = x.length > n ? x.charCodeAt(n) : a.mode === MODE_TREE ? 0x2f : -1;
  const cy = y.length > n ? y.charCodeAt(n) : b.mode === MODE_TREE ? 0x2f : -1;
  if (cx === cy) return 0;
  if (cx === -1) return -1;
  if (cy === -1) return 1;
  return codePointOrder(cx) - codePointOrder(cy);
}

/** A UTF-16 code unit's rank in code point order (as in compareCodePoints). */
function codePointOrder(c: number): number {
  return c >= 0xd800 ? (c >= 0xe000 ? c - 0x800 : c + 0x2000) : c;
}

/**
 * Sorts in place into git's order. A listing usually arrives in that order already (byte order of
 * names, which differs only for a directory whose name is a prefix of another entry's): checked
 * first, with one comparison per entry.
 */
export function sortTreeEntries(entries: TreeEntry[]): TreeEntry[] {
  for (let i = 1; i < entries.length; i++) {
    if (compareTreeEntries(entries[i - 1] as TreeEntry, entries[i] as TreeEntry) > 0) return entries.sort(compareTreeEntries);
  }
  return entries;
}

/**
 * The content of a tree object for entries already in git order; with `wrapped`, the bytes start with
 * the `tree <size>\0` object header.
 */
export function serializeTreeWrapped(entries: readonly TreeEntry[], wrapped: boolean): Buffer {
  const bytes = serializeTreeTransient(entries);
  return Buffer.from(wrapped ? bytes : bytes.subarray(bytes.indexOf(0) + 1));
}

/** Room before a tree's entries for its `tree <size>\0` header (a size has at most 10 digits). */
const HEADER_ROOM = 16;
let scratch = Buffer.allocUnsafe(1 << 16);

/**
 * The wrapped tree object (`tree <size>\0` + entries, entries already in git order) in a buffer
 * shared by every call: the result is only valid until the next call (hash it, write it, drop it).
 * A capture builds thousands of trees; this allocates nothing per tree and writes each entry with
 * two calls.
 */
export function serializeTreeTransient(entries: readonly TreeEntry[]): Buffer {
  let max = HEADER_ROOM;
  // mode (≤ 6) + ' ' + name (≤ 3 UTF-8 bytes per UTF-16 unit) + NUL + 20-byte id
  for (const e of entries) max += 28 + e.name.length * 3;
  if (scratch.length < max) scratch = Buffer.allocUnsafe(Math.max(max, scratch.length * 2));
  const out = scratch;
  let at = HEADER_ROOM;
  // Byte by byte in JavaScript: a Buffer.write call per field costs more than the copying (a
  // capture writes an entry per file). Names that are not plain ASCII go through Buffer.write.
  for (const e of entries) {
    const mode = e.mode;
    for (let i = 0; i < mode.length; i++) out[at++] = mode.charCodeAt(i);
    out[at++] = 0x20;
    const name = e.name;
    let ascii = true;
    for (let i = 0; i < name.length; i++) {
      const c = name.charCodeAt(i);
      if (c >= 0x80) {
        ascii = false;
        break;
      }
      out[at + i] = c;
    }
    at += ascii ? name.length : out.write(name, at, 'utf8');
    out[at++] = 0;
    at = writeHexId(out, at, e.oid);
  }
  const header = `tree ${at - HEADER_ROOM}\0`;
  const start = HEADER_ROOM - header.length;
  out.write(header, start, 'latin1');
  return out.subarray(start, at);
}

/** The value of a lower-case hex digit's char code (ids are lower-case hex, as git and node:crypto write them). */
function hexValue(c: number): number {
  return c <= 0x39 ? c - 0x30 : c - 0x57;
}

/** Writes a 40-digit hex id as 20 bytes; a malformed id goes through Buffer.write (which stops at the first bad digit). */
function writeHexId(out: Buffer, at: number, oid: string): number {
  if (oid.length !== 40) return at + out.write(oid, at, 'hex');
  for (let i = 0; i < 40; i += 2) {
    const hi = hexValue(oid.charCodeAt(i));
    const lo = hexValue(oid.charCodeAt(i + 1));
    if ((hi | lo) >>> 0 > 15) return at - i / 2 + out.write(oid, at - i / 2, 'hex');
    out[at++] = (hi << 4) | lo;
  }
  return at;
}

/** Parses the content of a tree object (without header). Throws on malformed data. */
export function parseTree(content: Uint8Array): TreeEntry[] {
  const buf = Buffer.isBuffer(content) ? content : Buffer.from(content.buffer, content.byteOffset, content.byteLength);
  const entries: TreeEntry[] = [];
  let at = 0;
  while (at < buf.length) {
    const space = buf.indexOf(0x20, at);
    const nul = space < 0 ? -1 : buf.indexOf(0, space + 1);
    if (space < 0 || nul < 0 || nul + 21 > buf.length) throw new Error('malformed tree object');
    const rawMode = buf.toString('latin1', at, space);
    const mode = normalizeMode(rawMode);
    const name = buf.toString('utf8', space + 1, nul);
    const oid = buf.toString('hex', nul + 1, nul + 21);
    entries.push({ name, mode, oid });
    at = nul + 21;
  }
  return entries;
}

function normalizeMode(raw: string): TreeMode {
  switch (raw) {
    case '40000':
    case '040000':
      return MODE_TREE;
    case '100644':
    case '100664': // very old git wrote group-writable modes; they mean a regular file
      return MODE_FILE;
    case '100755':
      return MODE_EXECUTABLE;
    case '120000':
      return MODE_SYMLINK;
    case '160000':
      return MODE_GITLINK;
    default:
      throw new Error(`malformed tree object: unknown entry mode ${raw}`);
  }
}
