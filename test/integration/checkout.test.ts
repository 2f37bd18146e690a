import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRun } from '../support/fixtures.ts';
import { jsonOf, runBaton } from '../support/processes.ts';
import { useWorkerHarness } from '../support/workerHarness.ts';

// A running worker whose checkout gets a new id (re-cloned, or its .git/baton/checkout.json
// removed) follows it: it serves the new queue and says the old one is orphaned.

const harness = useWorkerHarness();

const checkoutId = (root: string) => JSON.parse(fs.readFileSync(path.join(root, '.git', 'baton', 'checkout.json'), 'utf8')).id as string;

describe('checkout id changes under a running worker', () => {
  it('serves the new queue and reports the old one as orphaned', async () => {
    const { repo, env, worker } = await harness.serve('reclone');
    expect(jsonOf(await runBaton(['task', '01', 'begin-or-resume'], { env, cwd: repo.root })).status).toBe('running');
    const before = checkoutId(repo.root);

    fs.rmSync(path.join(repo.root, '.git', 'baton', 'checkout.json'));
    expect((await runBaton(['runs'], { env, cwd: repo.root })).code).toBe(0); // any baton command gives it a new id
    const after = checkoutId(repo.root);
    expect(after).not.toBe(before);
    await expect
      .poll(() => worker.output(), { timeout: 10_000 })
      .toContain(
        `${repo.root}: checkout id changed from ${before} to ${after} (re-cloned, or .git/baton/checkout.json removed); now serving queue baton-${after}; queue baton-${before} is orphaned with 0 waiting event(s)`,
      );
    const paused = jsonOf(
      await runBaton(['task', '01', 'pause', '--code', 'AFTER_RECLONE', '--message', 'm', '--recoverable', 'true'], {
        env,
        cwd: repo.root,
      }),
    );
    expect(paused).toMatchObject({ status: 'paused', changed: true });
    expect(readRun(repo.taskDir).pause?.code).toBe('AFTER_RECLONE');
  }, 40_000);
});
