// The shortcuts a cold capture takes (docs/architecture.md "Performance"), each checked against the
// plain way it replaces: exact timestamp comparison without bigint division, reading a file straight
// into a wrapped blob, writing tree entries byte by byte, and answering "is this object loose?" from
// fan-out directory listings.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { hashObject, ObjectDatabase, readFileAsBlob, wrapObject } from '../../src/fingerprint/objects.ts';
import { sameTime } from '../../src/fingerprint/statCache.ts';
import {
  MODE_EXECUTABLE,
  MODE_FILE,
  MODE_GITLINK,
  MODE_SYMLINK,
  MODE_TREE,
  serializeTreeTransient,
  type TreeEntry,
} from '../../src/fingerprint/tree.ts';
import { cleanup, git, makeRepo, tempDir } from './helpers.ts';

afterAll(cleanup);

const NS = 1_000_000_000n;
const U32 = 0xffffffffn;

describe('sameTime (stat time in ns against the index seconds + nanoseconds)', () => {
  /** What the index comparison used to be: bigint division, exact by construction. */
  const exact = (ns: bigint, sec: number, nsec: number) => Number((ns / NS) & U32) === sec && Number(ns % NS) === nsec;
  // Times from 1970 to 2106 (the index's 32-bit seconds), plus near misses of real ones.
  const instant = fc.bigInt({ min: 0n, max: (1n << 32n) * NS - 1n });

  it('agrees with exact bigint arithmetic on the index fields of the same instant', () => {
    fc.assert(
      fc.property(instant, (ns) => {
        const sec = Number(ns / NS);
        const nsec = Number(ns % NS);
        expect(sameTime(ns, sec, nsec)).toBe(true);
        expect(exact(ns, sec, nsec)).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });

  it('tells apart instants that differ by any amount, however small or large', () => {
    const delta = fc.oneof(
      fc.bigInt({ min: -5000n, max: 5000n }),
      fc.bigInt({ min: -(1n << 40n), max: 1n << 40n }),
      fc.constantFrom(1n << 32n, -(1n << 32n), 4096n, -4096n),
    );
    fc.assert(
      fc.property(instant, delta, (ns, d) => {
        const other = ns + d;
        if (other < 0n || other >= (1n << 32n) * NS) return;
        const sec = Number(other / NS);
        const nsec = Number(other % NS);
        expect(sameTime(ns, sec, nsec)).toBe(d === 0n);
      }),
      { numRuns: 20_000 },
    );
  });
});

describe('readFileAsBlob', () => {
  it('reads a file into `blob <size>\\0<bytes>` when its size is the stat size, else null', () => {
    const dir = tempDir();
    const file = path.join(dir, 'f');
    for (const content of ['', 'x', 'hello\n', 'é'.repeat(70_000)]) {
      fs.writeFileSync(file, content);
      const size = fs.statSync(file).size;
      const wrapped = readFileAsBlob(file, size);
      expect(wrapped?.equals(wrapObject('blob', fs.readFileSync(file)))).toBe(true);
      // The file changed since its stat: grown or shrunk.
      expect(readFileAsBlob(file, size + 1)).toBeNull();
      if (size > 0) expect(readFileAsBlob(file, size - 1)).toBeNull();
    }
  });
});

describe('loose object lookups from fan-out directory listings', () => {
  it('answers like a stat per object, for present and missing ids, many per directory', () => {
    const root = makeRepo({}, false);
    const db = new ObjectDatabase(path.join(root, '.git'));
    // 1,500 loose objects: every fan-out directory holds several, so lookups go through listings.
    const present: string[] = [];
    for (let i = 0; i < 1500; i++) present.push(db.write('blob', Buffer.from(`object ${i}\n`)));
    const missing = Array.from({ length: 1500 }, (_, i) => hashObject('blob', Buffer.from(`never written ${i}\n`)));
    // A fresh instance knows nothing: every answer comes from the file system.
    const fresh = new ObjectDatabase(path.join(root, '.git'));
    fresh.refresh();
    for (let i = 0; i < 1500; i++) {
      expect(fresh.has(present[i]!)).toBe(true);
      expect(fresh.has(missing[i]!)).toBe(false);
    }
    // An object another process writes during the operation may be missed (then it is written again,
    // which is harmless); the next operation lists again and sees it.
    const late = missing[0]!;
    fs.writeFileSync(path.join(root, 'late.txt'), 'never written 0\n');
    expect(git(root, ['hash-object', '-w', 'late.txt']).trim()).toBe(late);
    fresh.refresh();
    expect(fresh.has(late)).toBe(true);
    expect(git(root, ['cat-file', '-t', late]).trim()).toBe('blob');
  });
});

describe('serializeTreeTransient (entries written byte by byte)', () => {
  /** The plain way: each entry as `<mode> <name>\0` plus the id's 20 bytes, concatenated. */
  const plain = (entries: TreeEntry[]) => {
    const body = Buffer.concat(entries.flatMap((e) => [Buffer.from(`${e.mode} ${e.name}\0`, 'utf8'), Buffer.from(e.oid, 'hex')]));
    return Buffer.concat([Buffer.from(`tree ${body.length}\0`, 'latin1'), body]);
  };
  const entry = fc.record({
    name: fc.oneof(fc.string({ minLength: 1, maxLength: 30 }), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 })),
    mode: fc.constantFrom(MODE_TREE, MODE_FILE, MODE_EXECUTABLE, MODE_SYMLINK, MODE_GITLINK),
    oid: fc.oneof(
      fc.stringMatching(/^[0-9a-f]{40}$/),
      // Not a lower-case id (never produced by baton): written as Buffer.write would.
      fc.stringMatching(/^[0-9a-fA-F]{40}$/),
    ),
  });

  it('writes what concatenating Buffer.from of each field writes, for any names (UTF-8) and ids', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 40 }), (entries) => {
        expect(Buffer.from(serializeTreeTransient(entries)).equals(plain(entries))).toBe(true);
      }),
      { numRuns: 3_000 },
    );
  });
});
