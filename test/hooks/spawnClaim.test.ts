import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spoolDir } from '../../src/base/batonDir.ts';
import { claimSpawn } from '../../src/hooks/spawnClaim.ts';
import { HookReport } from '../../src/hooks/report.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { spooledFiles } from '../../src/queue/spool.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { preparedReceiptRecord, runRecord } from '../support/runRecords.ts';

// The PreToolUse claim in process, where no worker can drain the spool meanwhile: with Redis
// unreachable the claim is spooled and the read-only check of the run files decides; a spawn that
// check blocks has its release spooled right behind its claim, so when both reach the worker, in
// order, the claim holds nothing (docs/hooks.md "Spawn claim (PreToolUse)").

let repo: GitRepo;
afterEach(() => repo.cleanup());

describe('claimSpawn with Redis unreachable', () => {
  it('a blocked spawn: its claim and then its release are spooled; an allowed one: only its claim', async () => {
    repo = gitRepoWithTask();
    const dead = { redisUrl: `unix://${path.join(repo.root, '.git', 'no-such-redis.sock')}`, prefix: 'p' };
    const claim = (toolCallId: string) => ({
      root: repo.root,
      repo: repoIdentity(repo.root),
      client: 'codex' as const,
      budgetMs: 1_000,
      verbose: false,
      queue: dead,
      nativeAgent: 'agent-infra-lifecycle-executor',
      toolCallId,
      sessionId: 'parent-session',
    });
    const spooled = () =>
      spooledFiles(repo.root).map((name) => {
        const envelope = JSON.parse(fs.readFileSync(path.join(spoolDir(repo.root), name), 'utf8')) as {
          intent: string;
          args: { toolCallId?: string };
        };
        return `${envelope.intent} ${envelope.args.toolCallId}`;
      });

    // Nothing is prepared: the run files say no.
    const report = new HookReport();
    expect(await claimSpawn(report, claim('call_1'), 'advice')).toBe(2);
    expect(report.finish(2).stderr).toContain('baton: ORCHESTRATION_DELEGATION_MISSING: no lifecycle delegation is prepared');
    expect(spooled()).toEqual(['claim-spawn call_1', 'release-spawn call_1']);

    // A prepared delegation: allowed, and its claim goes to the worker alone.
    fs.writeFileSync(
      path.join(repo.taskDir, 'orchestration.json'),
      `${JSON.stringify(
        runRecord({
          taskId: path.basename(repo.taskDir),
          nextStage: 'analysis',
          pendingDelegation: preparedReceiptRecord({ taskId: path.basename(repo.taskDir), createdAt: 'T' }),
          createdAt: 'T',
          updatedAt: 'T',
        }),
      )}\n`,
    );
    expect(await claimSpawn(new HookReport(), claim('call_2'), 'advice')).toBe(0);
    expect(spooled()).toEqual(['claim-spawn call_1', 'release-spawn call_1', 'claim-spawn call_2']);
  });
});
