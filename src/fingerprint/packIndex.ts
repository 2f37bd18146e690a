// Pack files (`objects/pack/*.idx` version 2 + `.pack`): "is this id in a pack?" by binary search in
// the index bytes, without building any per-object structure, so that packed objects are not written
// again as loose objects; and reading a packed object that is stored whole (not as a delta), which
// is how a commit and most trees of a freshly cloned or gc'ed repository are stored. Deltified
// objects are left to isomorphic-git (see objects.ts), which also verifies the whole pack on first
// use and costs ~50 ms to load: too much to pay on every cold capture just to read HEAD.
import fs from 'node:fs';
import path from 'node:path';
import { Buffer } from 'node:buffer';
import { inflateSync } from 'node:zlib';

type PackIdx = { buf: Buffer; count: number; packPath: string; fd?: number; packSize?: number };

export type PackedObject = { type: 'commit' | 'tree' | 'blob' | 'tag'; content: Buffer };
const PACK_TYPES = [undefined, 'commit', 'tree', 'blob', 'tag'] as const;

const IDX_MAGIC = 0xff744f63;

export class PackIndexSet {
  private readonly packDir: string;
  private loaded = new Map<string, PackIdx | null>();
  private dirStamp = '';

  constructor(objectsDir: string) {
    this.packDir = path.join(objectsDir, 'pack');
  }

  private fresh = false;

  /** Makes the next lookup re-check the pack directory (called once per capture). */
  invalidate(): void {
    this.fresh = false;
  }

  /** True when some pack index lists the object. */
  has(oid: string): boolean {
    return this.find(oid) !== null;
  }

  private find(oid: string): { idx: PackIdx; pos: number } | null {
    if (!this.fresh) {
      this.refresh();
      this.fresh = true;
    }
    if (this.loaded.size === 0) return null;
    const key = keyOf(oid);
    if (key === null) return null;
    for (const idx of this.loaded.values()) {
      if (!idx) continue;
      const pos = lookup(idx, key);
      if (pos >= 0) return { idx, pos };
    }
    return null;
  }

  /**
   * The object, if it is packed and stored whole; null if it is not in a pack or is a delta (then
   * the caller falls back to a full pack reader).
   */
  readWhole(oid: string): PackedObject | null {
    const hit = this.find(oid);
    if (!hit) return null;
    const { idx, pos } = hit;
    const b = idx.buf;
    const n = idx.count;
    const off32At = 8 + 256 * 4 + n * 24 + pos * 4;
    let offset = b.readUInt32BE(off32At);
    if (offset & 0x80000000) {
      const at = 8 + 256 * 4 + n * 28 + (offset & 0x7fffffff) * 8;
      offset = b.readUInt32BE(at) * 2 ** 32 + b.readUInt32BE(at + 4);
    }
    try {
      if (idx.fd === undefined) {
        idx.fd = fs.openSync(idx.packPath, 'r');
        idx.packSize = fs.fstatSync(idx.fd).size;
      }
      const head = Buffer.alloc(32);
      fs.readSync(idx.fd, head, 0, 32, offset);
      let c = head[0] ?? 0;
      const typeCode = (c >> 4) & 7;
      let size = c & 15;
      let shift = 4;
      let p = 1;
      while (c & 0x80) {
        c = head[p++] ?? 0;
        size += (c & 0x7f) * 2 ** shift;
        shift += 7;
      }
      const type = PACK_TYPES[typeCode];
      if (type === undefined) return null; // OFS_DELTA / REF_DELTA
      const start = offset + p;
      let chunk = size + 64;
      for (;;) {
        const len = Math.min(chunk, (idx.packSize ?? 0) - start);
        const data = Buffer.alloc(len);
        fs.readSync(idx.fd, data, 0, len, start);
        try {
          const content = inflateSync(data);
          if (content.length !== size) return null;
          return { type, content };
        } catch (error) {
          if ((error as { code?: string }).code !== 'Z_BUF_ERROR' || len < chunk) return null;
          chunk *= 2;
        }
      }
    } catch {
      return null;
    }
  }

  /** Closes pack files opened for reading. */
  close(): void {
    for (const idx of this.loaded.values()) {
      if (idx?.fd !== undefined) {
        try {
          fs.closeSync(idx.fd);
        } catch {
          // already closed
        }
        idx.fd = undefined;
      }
    }
  }

  /** has(), re-checking the pack directory first (for a miss that must not be a stale answer). */
  hasAfterRefresh(oid: string): boolean {
    this.refresh();
    this.fresh = true;
    return this.has(oid);
  }

  /** Re-lists the pack directory when it changed (a gc or fetch added or removed packs). */
  private refresh(): void {
    let stamp: string;
    try {
      const st = fs.statSync(this.packDir, { bigint: true });
      stamp = `${st.mtimeNs}:${st.ctimeNs}:${st.ino}`;
    } catch {
      stamp = 'none';
    }
    if (stamp === this.dirStamp) return;
    this.dirStamp = stamp;
    let names: string[] = [];
    try {
      names = fs.readdirSync(this.packDir).filter((n) => n.endsWith('.idx'));
    } catch {
      names = [];
    }
    const next = new Map<string, PackIdx | null>();
    for (const name of names) {
      next.set(name, this.loaded.get(name) ?? readIdx(path.join(this.packDir, name)));
    }
    for (const [name, idx] of this.loaded) {
      if (!next.has(name) && idx?.fd !== undefined) {
        try {
          fs.closeSync(idx.fd);
        } catch {
          // ignore
        }
      }
    }
    this.loaded = next;
  }
}

function readIdx(file: string): PackIdx | null {
  try {
    const buf = fs.readFileSync(file);
    if (buf.length < 8 + 256 * 4 || buf.readUInt32BE(0) !== IDX_MAGIC || buf.readUInt32BE(4) !== 2) return null;
    const count = buf.readUInt32BE(8 + 255 * 4);
    if (buf.length < 8 + 256 * 4 + count * 20) return null;
    if (buf.length < 8 + 256 * 4 + count * 28) return null;
    return { buf, count, packPath: file.replace(/\.idx$/, '.pack') };
  } catch {
    return null;
  }
}

/** An object id as five big-endian 32-bit words, for comparisons without allocating Buffers. */
type Key = [number, number, number, number, number];

function keyOf(oid: string): Key | null {
  if (oid.length !== 40) return null;
  const k: Key = [0, 0, 0, 0, 0];
  // From the hex digits' char codes, not parseInt of slices: this runs for every object a capture asks about.
  for (let w = 0; w < 5; w++) {
    let v = 0;
    for (let i = w * 8; i < w * 8 + 8; i++) {
      const d = hexDigit(oid.charCodeAt(i));
      if (d < 0) return null;
      v = v * 16 + d;
    }
    k[w] = v;
  }
  return k;
}

/** The value of a hex digit's char code (either case), -1 for anything else. */
function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  return l >= 0x61 && l <= 0x66 ? l - 0x57 : -1;
}

function lookup(idx: PackIdx, key: Key): number {
  const { buf } = idx;
  const first = key[0] >>> 24;
  let lo = first === 0 ? 0 : buf.readUInt32BE(8 + (first - 1) * 4);
  let hi = buf.readUInt32BE(8 + first * 4);
  const base = 8 + 256 * 4;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const at = base + mid * 20;
    let cmp = 0;
    for (let w = 0; w < 5; w++) {
      const v = buf.readUInt32BE(at + w * 4);
      const k = key[w] as number;
      if (v !== k) {
        cmp = v < k ? -1 : 1;
        break;
      }
    }
    if (cmp === 0) return mid;
    if (cmp < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}
