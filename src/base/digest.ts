import { createRequire } from 'node:module';
import type * as NodeCrypto from 'node:crypto';

// Hex digests and random ids for code on the hook path, without importing node:crypto up front.
// Under Bun, loading node:crypto costs a fresh process ~8 ms, about half of its floor (start-up +
// one Redis write, bench/results/hook.md); Bun's native hasher costs nothing. Node loads
// node:crypto on first use only.

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
  return crypto().createHash(algorithm).update(data).digest('hex');
}

export function randomId(): string {
  return globalThis.crypto?.randomUUID?.() ?? crypto().randomUUID();
}

/** `bytes` random bytes in hex (Web Crypto's generator: no node:crypto to load). */
export function randomHex(bytes: number): string {
  const values = globalThis.crypto?.getRandomValues
    ? globalThis.crypto.getRandomValues(new Uint8Array(bytes))
    : crypto().randomBytes(bytes);
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString('hex');
}
