import { afterEach, describe, expect, inject, it, vi } from 'vitest';
import { nativePayload } from '../../src/demo/driver.ts';
import { handleHook } from '../../src/hooks/handle.ts';
import { RepositoryQueueClient } from '../../src/queue/client.ts';
import { RawQueueClient } from '../../src/queue/hookTransport.ts';
import { requireHere } from '../support/requirements.ts';
import { uniquePrefix } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';

// handleHook in process: the Redis it resolves (--redis, REDIS_URL, the worker's endpoint) is the
// one its delivery uses, as resolved, so a plain Redis URL goes over the hook's raw RESP client and
// never loads ioredis (docs/architecture.md "One hook event through the files").

const redisUrl = inject('redisUrl');
let repo: GitRepo | null = null;
const savedEnv = { ...process.env };

afterEach(() => {
  vi.restoreAllMocks();
  process.env = { ...savedEnv };
  repo?.cleanup();
  repo = null;
});

describe('handleHook', () => {
  it('delivers to the Redis it resolved, over the raw RESP client for a plain URL', async (context) => {
    requireHere(
      context,
      /^rediss?\+/.test(redisUrl) ? `REDIS_URL is a ${redisUrl.split(':')[0]} URL; this test needs a plain redis:// or unix:// one` : null,
    );
    repo = gitRepoWithTask();
    process.env.REDIS_URL = redisUrl;
    process.env.BATON_PREFIX = uniquePrefix('handle');
    delete process.env.BATON_HOOK_TRANSPORT;
    const raw = vi.spyOn(RawQueueClient, 'connect');
    const ioredis = vi.spyOn(RepositoryQueueClient, 'connect');
    const payload = nativePayload('claude-code', 'SubagentStart', 'executor', 'child-1', repo.root);
    const run = await handleHook({ client: 'claude-code', repo: repo.root, budgetMs: 4_000, verbose: false, cwd: repo.root }, async () =>
      Buffer.from(payload),
    );
    expect(run.exitCode, run.stderr).toBe(0);
    // No worker serves the repository: the event is queued and the hook says so.
    expect(run.stderr).toContain('hook-start event queued as h-');
    expect(raw).toHaveBeenCalledTimes(1);
    expect(ioredis).not.toHaveBeenCalled();
  });
});
