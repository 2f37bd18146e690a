import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { queueNameFor } from '../../src/queue/keys.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { builtBundle } from '../support/bundles.ts';
import { tempRepo, uniquePrefix } from '../support/fixtures.ts';
import { PROJECT_ROOT, batonEnv, runBaton } from '../support/processes.ts';

// `baton hook` starts for every agent event and loads dist/hook.mjs, a bundle of its own
// (scripts/build.mjs). What it may contain is what keeps it near the floor of bench/hook.mjs:
// no Redis client library, no BullMQ, no full zod. Checked on the built file (npm run build).

describe('dist/hook.mjs', () => {
  const { text, modules } = builtBundle('hook.mjs');

  it('holds the hook, its RESP transport, BullMQ add script and a JavaScript SHA-256, and no ioredis, BullMQ runtime or full zod', () => {
    expect(modules).toEqual(
      expect.arrayContaining(['src/cli/hook.ts', 'src/queue/resp.ts', 'src/queue/hookTransport.ts', 'src/queue/spool.ts']),
    );
    const packages = modules.filter((module) => module.startsWith('node_modules/'));
    expect(
      packages.filter(
        (module) =>
          !/^node_modules\/(zod\/v4\/(mini|core)\/|bullmq\/dist\/cjs\/(scripts\/addStandardJob-\d+|version)\.js$|@noble\/hashes\/)/.test(
            module,
          ),
      ),
    ).toEqual([]);
    expect(modules).not.toContain('src/queue/client.ts');
    expect(modules).not.toContain('src/core/runSchema.ts');
  });

  it('loads what it imports lazily from the main bundle, and those files exist', () => {
    const lazy = [...text.matchAll(/import\("(\.\/lib\/[^"]+)"\)/g)].map((match) => match[1]!);
    expect(lazy).toEqual(expect.arrayContaining(['./lib/queue-client.mjs', './lib/core-runSchema.mjs']));
    for (const file of lazy) expect(fs.existsSync(path.join(PROJECT_ROOT, 'dist', file))).toBe(true);
  });

  it('bin/baton.mjs runs it for `baton hook` and the main bundle for everything else', async () => {
    const hookHelp = await runBaton(['hook', '--help']);
    expect(hookHelp.code).toBe(0);
    expect(hookHelp.stdout).toMatch(/^Usage: baton hook <claude-code\|codex\|copilot-cli>/);
    const mainHelp = await runBaton(['--help']);
    expect(mainHelp.code).toBe(0);
    expect(mainHelp.stdout).toMatch(/^Usage: baton <command> \[options\]/);
  });
});

describe('the built hook enqueues over both transports', () => {
  it.each(['raw', 'ioredis'])('%s: SubagentStart is queued as a BullMQ job', async (transport) => {
    const repo = tempRepo();
    const redis = new Redis(redisOptionsFromUrl(inject('redisUrl')));
    try {
      const prefix = uniquePrefix(`hook-bundle-${transport}`);
      const env = batonEnv({ redisUrl: inject('redisUrl'), prefix }, transport === 'ioredis' ? { BATON_HOOK_TRANSPORT: 'ioredis' } : {});
      const input = JSON.stringify({
        hook_event_name: 'SubagentStart',
        agent_type: 'agent-infra-lifecycle-executor',
        agent_id: `child-${transport}`,
        session_id: 'parent',
        cwd: repo.root,
      });
      const run = await runBaton(['hook', 'claude-code'], { env, input, cwd: repo.root });
      expect(run.code).toBe(0);
      expect(run.stderr).toMatch(/^baton: no worker serves .*; hook-start event queued as h-[0-9a-f]{40} and applied when one starts/);
      const jobId = /queued as (h-[0-9a-f]{40})/.exec(run.stderr)![1]!;
      const base = `${prefix}:${queueNameFor(repoIdentity(repo.root).id)}`;
      expect(await redis.lrange(`${base}:wait`, 0, -1)).toEqual([jobId]);
      expect(JSON.parse((await redis.hget(`${base}:${jobId}`, 'data'))!)).toMatchObject({
        intent: 'hook-start',
        eventId: jobId,
        source: 'hook',
        args: { childId: `child-${transport}` },
      });
    } finally {
      redis.disconnect();
      repo.cleanup();
    }
  });
});
