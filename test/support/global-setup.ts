import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { staleDist } from '../../scripts/sourceStamp.mjs';
import { provisionRedis } from './redisServer.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    redisKind: string;
  }
}

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Many tests run baton as users do, from dist/: one built from other sources would be tested
  // instead of the code in src/, silently (`npm test` builds first; `npx vitest run <file>` does not).
  const stale = staleDist(PROJECT_ROOT);
  if (stale) throw new Error(stale);
  const redis = await provisionRedis();
  project.provide('redisUrl', redis.url);
  project.provide('redisKind', redis.kind);
  return () => redis.stop();
}
