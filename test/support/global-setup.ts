import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { staleDist } from '../../scripts/sourceStamp.mjs';
import { takeMachineCaCerts } from './machineCaCerts.ts';
import { provisionRedis } from './redisServer.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    redisKind: string;
    /** The NODE_EXTRA_CA_CERTS the tests were started with ('' if none), for the npm the package test runs. */
    machineNodeCaCerts: string;
  }
}

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Many tests run baton as users do, from dist/: one built from other sources would be tested
  // instead of the code in src/, silently (`npm test` builds first; `npx vitest run <file>` does not).
  const stale = staleDist(PROJECT_ROOT);
  if (stale) throw new Error(stale);
  // The CA bundle out of every process vitest starts, and back to the package test's npm only
  // (machineCaCerts.ts says why); the same value for every project, whichever sets up first.
  project.provide('machineNodeCaCerts', takeMachineCaCerts());
  const redis = await provisionRedis();
  project.provide('redisUrl', redis.url);
  project.provide('redisKind', redis.kind);
  return () => redis.stop();
}
