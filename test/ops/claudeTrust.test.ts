import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { useRepoWithClientHome } from '../support/clientHome.ts';
import { TASK_ID } from '../support/fixtures.ts';
import { BATON_BIN, runBaton } from '../support/processes.ts';
import { runScriptedClaude } from '../support/claudeScripted.ts';
import { shellQuote } from '../../src/base/shellQuote.ts';

// `baton install-hooks claude-code` against the REAL Claude Code 2.1.337,
// headless (`claude -p`) against a scripted Messages API server on 127.0.0.1 whose main agent makes
// one Bash call, the kind baton's profiles give (`baton task …` with a heredoc), then ends the turn.
// - The orchestrator instructions written to CLAUDE.md reach the main agent's request.
// - Claude Code ignores the project's permissions.allow until the workspace is trusted: before
//   --trust, the `baton task` command "requires approval" and is refused; after it, it runs.

// This checkout's baton, given to install-hooks with --command: the client runs with the test's PATH,
// which need not have a `baton`.
const BATON = [process.execPath, BATON_BIN].map(shellQuote).join(' ');

let repo: GitRepo;
let home: string;

useRepoWithClientHome('claude', gitRepoWithTask, (made) => ({ repo, home } = made));

describe('baton install-hooks claude-code with the real Claude Code', () => {
  it('its CLAUDE.md instructions reach the main agent; --trust makes Claude Code honour the baton task permission', async () => {
    const env = { ...process.env, CLAUDE_CONFIG_DIR: path.join(home, '.claude'), HOME: home };
    const installed = await runBaton(['install-hooks', 'claude-code', '--repo', repo.root, '--command', BATON], { env });
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain("note: Claude Code ignores this repository's permissions.allow until the workspace is trusted");

    // The hand-over the executor profile gives (status stands in for complete-stage: no worker needed).
    const command = `${BATON} task ${TASK_ID} status <<'BATON_ARTIFACT'\n# Analysis\n\nText.\nBATON_ARTIFACT`;
    const claude = () =>
      runScriptedClaude({
        cwd: repo.root,
        home,
        workDir: home,
        prompt: 'drive the task',
        script: {
          parent: [{ tool: 'Bash', input: { command, description: 'hand the artifact to baton' } }, { text: 'done' }],
          child: [{ text: 'done' }],
        },
        env: { REDIS_URL: 'unix:///nonexistent/redis.sock' },
      });
    const untrusted = await claude();
    expect(untrusted.code, untrusted.stderr).toBe(0);
    const first = JSON.stringify(untrusted.recorded.requests.find((request) => request.role === 'parent')?.body ?? {});
    expect(first).toContain('## Agent-infra task lifecycle (driven by baton)');
    expect(first).toContain(`${BATON} task <task> prepare --client claude-code`);
    expect(untrusted.stderr).toContain(
      'Ignoring 1 permissions.allow entry from .claude/settings.json: this workspace has not been trusted',
    );
    expect(untrusted.recorded.toolResults.map((entry) => entry.result)).toEqual([
      expect.objectContaining({ tool_use_id: 'toolu_parent_1', is_error: true, content: 'This command requires approval' }),
    ]);

    const trusted = await runBaton(['install-hooks', 'claude-code', '--repo', repo.root, '--command', BATON, '--trust'], { env });
    expect(trusted.code, trusted.stderr).toBe(0);
    const globalConfig = path.join(home, '.claude', '.claude.json');
    expect(trusted.stdout).toMatch(/updated\s+\S+\.claude\.json/);
    expect(JSON.parse(fs.readFileSync(globalConfig, 'utf8')).projects[repo.root]).toEqual({ hasTrustDialogAccepted: true });
    expect(fs.statSync(globalConfig).mode & 0o777).toBe(0o600); // Claude Code's file stays private

    const allowed = await claude();
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stderr).not.toContain('Ignoring');
    const result = allowed.recorded.toolResults[0]?.result;
    expect(result?.tool_use_id).toBe('toolu_parent_1');
    // baton ran: the tool result is its one line of JSON (the task has no run yet).
    expect(JSON.stringify(result.content)).toContain('ORCHESTRATION_RUN_MISSING');
    // Claude Code's own keys in its config survive.
    expect(Object.keys(JSON.parse(fs.readFileSync(globalConfig, 'utf8'))).length).toBeGreaterThan(1);
  }, 180_000);
});
