import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { staleDist } from '../../scripts/sourceStamp.mjs';
import { provisionRedis } from './redisServer.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    redisKind: string;
    /** The NODE_EXTRA_CA_CERTS the tests were started with ('' if none), for the npm the package test runs. */
    machineNodeCaCerts: string;
  }
}

// Read once, before setup() removes it (setup runs for each project).
const MACHINE_NODE_CA_CERTS = process.env.NODE_EXTRA_CA_CERTS ?? '';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Many tests run baton as users do, from dist/: one built from other sources would be tested
  // instead of the code in src/, silently (`npm test` builds first; `npx vitest run <file>` does not).
  const stale = staleDist(PROJECT_ROOT);
  if (stale) throw new Error(stale);
  // Node parses the NODE_EXTRA_CA_CERTS bundle at every start (docs/hooks.md "Transport and cost"),
  // and the suite starts ~2,300 Node processes, none of which needs a CA beyond the ones the TLS tests
  // make and pass explicitly: taken out before vitest starts its workers. Only the package test
  // reaches the registry (npm install); it gives npm the machine's bundle back (machineNodeCaCerts).
  delete process.env.NODE_EXTRA_CA_CERTS;
  project.provide('machineNodeCaCerts', MACHINE_NODE_CA_CERTS);
  const redis = await provisionRedis();
  project.provide('redisUrl', redis.url);
  project.provide('redisKind', redis.kind);
  return () => redis.stop();
}
