import type { TestProject } from 'vitest/node';
import { provisionRedis } from './redisServer.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    redisKind: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const redis = await provisionRedis();
  project.provide('redisUrl', redis.url);
  project.provide('redisKind', redis.kind);
  return () => redis.stop();
}
