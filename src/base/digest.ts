import fs from 'node:fs';
import { createRequire } from 'node:module';
import type * as NodeCrypto from 'node:crypto';
import { sha256 } from '@noble/hashes/sha2.js';

// Hex digests and random ids for code on the hook path, without loading a crypto module. In a fresh
// process, node:crypto costs Node ~3 ms and Bun ~8 ms, and Node's Web Crypto (`globalThis.crypto`,
// loaded on first use) ~2 ms more: a sizeable part of the hook's margin over its floor (start-up +
// one Redis write, bench/results/hook.md). So: Bun's native hasher under Bun; elsewhere SHA-256 in
// JavaScript (@noble/hashes: the hook hashes a few hundred bytes), SHA-1 (scripts' shas, not on the
// hook's common path: the add script's sha is computed at build time, addJob.ts) from node:crypto;
// random bytes on Node from the OS (/dev/urandom), elsewhere from Web Crypto.

type BunHasher = { update(data: string): BunHasher; digest(encoding: 'hex'): string };
type BunGlobal = { CryptoHasher: new (algorithm: string) => BunHasher };

let nodeCrypto: typeof NodeCrypto | null = null;
function crypto(): typeof NodeCrypto {
  nodeCrypto ??= createRequire(import.meta.url)('node:crypto') as typeof NodeCrypto;
  return nodeCrypto;
}

export function hexDigest(algorithm: 'sha1' | 'sha256', data: string): string {
  const bun = (globalThis as { Bun?: BunGlobal }).Bun;
  if (bun) return new bun.CryptoHasher(algorithm).update(data).digest('hex');
  if (algorithm === 'sha256') return Buffer.from(sha256(Buffer.from(data, 'utf8'))).toString('hex');
  return crypto().createHash(algorithm).update(data).digest('hex');
}

/** A random UUID (version 4). */
export function randomId(): string {
  if (!onNode()) return globalThis.crypto.randomUUID();
  const bytes = randomBytes(16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** `bytes` random bytes in hex. */
export function randomHex(bytes: number): string {
  const values = randomBytes(bytes);
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString('hex');
}

function randomBytes(count: number): Uint8Array {
  if (onNode()) {
    const bytes = osRandomBytes(count);
    if (bytes) return bytes;
  }
  return globalThis.crypto?.getRandomValues ? globalThis.crypto.getRandomValues(new Uint8Array(count)) : crypto().randomBytes(count);
}

/** Node itself, not Bun or Deno (whose Web Crypto is ready at start-up). */
function onNode(): boolean {
  return !('Bun' in globalThis) && !('Deno' in globalThis);
}

/** The OS's generator where it is a file (Linux, macOS); null elsewhere. */
function osRandomBytes(count: number): Uint8Array | null {
  let fd: number;
  try {
    fd = fs.openSync('/dev/urandom', 'r');
  } catch {
    return null;
  }
  try {
    const bytes = Buffer.alloc(count);
    let filled = 0;
    while (filled < count) {
      const read = fs.readSync(fd, bytes, filled, count - filled, null);
      if (read <= 0) return null;
      filled += read;
    }
    return bytes;
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
  }
}
