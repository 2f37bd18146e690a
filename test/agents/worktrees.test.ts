import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clientVersions } from '../support/agentClients.ts';
import { EXECUTOR, executorThatCompletes, parentThatSpawns, spawn } from '../support/agentScripts.ts';
import { worktreeAgent, worldFor } from '../support/agentWorld.ts';
import type { WorktreeAgent } from '../support/agentWorld.ts';

// The real Claude Code and Codex (the newest of each, scripted model servers), each in a linked
// worktree of one repository, at the same time, served by the one `baton worker --repo MAIN`
// (docs/architecture.md "Worktrees"): each worktree is a checkout of its own, so neither waits on
// the other's pending delegation, and each seal measures its own work tree.

const [claude] = clientVersions('claude-code');
const [codex] = clientVersions('codex');

describe('real clients in linked worktrees', { timeout: 240_000 }, () => {
  it(`${claude!.label} and ${codex!.label} drive a stage each in two worktrees at once with one baton worker --repo MAIN`, async (context) => {
    // The world's repository is the main checkout; its worker serves the worktrees.
    const world = await worldFor(context, claude!, { install: false });
    // Installed once in the main checkout and committed; Codex's sandbox roots need `baton init` in
    // its worktree too (the committed "../.git" names a file there: docs/adopting.md).
    const agents = [await worktreeAgent(world, 'claude', claude!), await worktreeAgent(world, 'codex', codex!, { worktreeInstall: true })];
    // Each prepares its own delegation: the guard is per worktree.
    for (const agent of agents) {
      expect((await agent.task('begin-or-resume')).status).toBe('running');
      expect((await agent.task('prepare', '--client', agent.version.client)).status).toBe('running');
    }
    // Both pending at once, one per worktree.
    expect(agents.map((agent) => agent.runFile().pendingDelegation.status)).toEqual(['prepared', 'prepared']);
    const drive = (agent: WorktreeAgent) =>
      agent.run('Drive task 01 through its analysis stage.', {
        parent: parentThatSpawns(agent.version.client, spawn(agent.version.client, EXECUTOR, 'Run analyze-task for task 01.'), [
          `${agent.baton} task 01 advance`,
        ]),
        executor: executorThatCompletes(agent.version.client, agent.baton),
      });
    const runs = await Promise.all(agents.map(drive));
    for (const [index, agent] of agents.entries()) {
      expect(runs[index]!.code, runs[index]!.stderr).toBe(0);
      const receipt = agent.runFile().receipts[0];
      expect(receipt, agent.version.label).toMatchObject({ status: 'consumed', client: agent.version.client, stage: 'analysis' });
      // Sealed on its own worktree: the analysis it wrote there, nothing of the other's.
      expect(receipt.changedPaths.filter((file: string) => !file.startsWith('.agents/'))).toEqual([]);
      expect(fs.readFileSync(path.join(agent.repo.taskDir, 'analysis.md'), 'utf8')).toContain('# Analysis');
    }
    // Nothing in the main checkout.
    expect(fs.existsSync(path.join(world.repo.taskDir, 'orchestration.json'))).toBe(false);
    expect(world.worker!.output()).toContain(`serving ${agents[0]!.repo.root} `);
  });
});
