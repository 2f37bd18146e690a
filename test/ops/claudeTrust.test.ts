import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { TASK_ID } from '../support/fixtures.ts';
import { BATON_BIN, runBaton } from '../support/processes.ts';
import { shellQuote } from '../../src/cli/runtime.ts';

// `baton install-hooks claude-code` against the REAL Claude Code 2.1.332 (issue 9, items 9 and 11),
// driven headless (`claude -p`) by a scripted Anthropic Messages server on 127.0.0.1 that answers
// the first turn with one Bash call (the command baton's profiles give) and then ends the turn.
// - The orchestrator instructions written to CLAUDE.md reach the main agent's request.
// - Claude Code ignores the project's permissions.allow until the workspace is trusted: before
//   --trust, the `baton task` command "requires approval" and is refused; after it, it runs.
// Loopback only: the client runs in a private network namespace where `unshare` allows it, with
// nonessential traffic, telemetry and the updater off.

const require = createRequire(import.meta.url);
const CLAUDE = path.join(path.dirname(require.resolve('@anthropic-ai/claude-code-linux-x64/package.json')), 'claude');
/** A private network namespace whose loopback can be brought up (the scripted server lives there too). */
const CAN_UNSHARE = spawnSync('unshare', ['-rn', 'sh', '-c', 'ip link set lo up']).status === 0;
const BATON = [process.execPath, BATON_BIN].map(shellQuote).join(' ');

type Recorded = { requests: any[]; toolResults: any[] };

/**
 * Messages API (streaming), as a small node program run next to the client: a Bash tool call on the
 * first turn that offers Bash ($BATON_COMMAND), then a plain answer. On SIGTERM it writes every
 * request and tool result it saw to $BATON_RECORD.
 */
const SERVER_SOURCE = String.raw`
import http from 'node:http';
import fs from 'node:fs';
const recorded = { requests: [], toolResults: [] };
let calledTool = false;
const server = http.createServer((request, response) => {
  let body = '';
  request.on('data', (chunk) => (body += chunk));
  request.on('end', () => {
    if (!request.url.startsWith('/v1/messages') || request.url.includes('count_tokens')) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ input_tokens: 1 }));
      return;
    }
    const parsed = JSON.parse(body);
    recorded.requests.push(parsed);
    const last = parsed.messages.at(-1);
    const result = Array.isArray(last && last.content) ? last.content.find((block) => block.type === 'tool_result') : undefined;
    if (result) recorded.toolResults.push(result);
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (type, data) => response.write('event: ' + type + '\ndata: ' + JSON.stringify({ type, ...data }) + '\n\n');
    send('message_start', { message: { id: 'msg_' + recorded.requests.length, type: 'message', role: 'assistant', model: parsed.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } });
    const offersBash = (parsed.tools || []).some((tool) => tool.name === 'Bash');
    if (offersBash && !calledTool && !result) {
      calledTool = true;
      send('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_baton', name: 'Bash', input: {} } });
      send('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify({ command: process.env.BATON_COMMAND, description: 'hand the artifact to baton' }) } });
      send('content_block_stop', { index: 0 });
      send('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 1 } });
    } else {
      send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'done' } });
      send('content_block_stop', { index: 0 });
      send('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } });
    }
    send('message_stop', {});
    response.end();
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\n'));
process.on('SIGTERM', () => {
  fs.writeFileSync(process.env.BATON_RECORD, JSON.stringify(recorded));
  process.exit(0);
});
`;

let repo: GitRepo;
let home: string;

beforeEach(() => {
  repo = gitRepoWithTask();
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-claude-home-'));
});

afterEach(() => {
  for (const dir of [repo.root, home]) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * Runs `claude -p` in the repository against the scripted server. With `unshare`, the server runs in
 * the same private network namespace (a small node process started by the same shell).
 */
async function runClaude(command: string): Promise<{ code: number | null; stderr: string; recorded: Recorded; output: any }> {
  const script = path.join(home, 'server.mjs');
  const recordFile = path.join(home, 'recorded.json');
  fs.rmSync(recordFile, { force: true });
  fs.writeFileSync(script, SERVER_SOURCE);
  // A clean environment: none of the test runner's variables (NODE_ENV=test, FORCE_TTY, …).
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    ANTHROPIC_API_KEY: 'sk-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    BATON_SERVER: script,
    BATON_RECORD: recordFile,
    BATON_COMMAND: command,
    BATON_NODE: process.execPath,
    ...(CAN_UNSHARE ? { BATON_PRIVATE_NET: '1' } : {}),
    BATON_CLAUDE: CLAUDE,
    REDIS_URL: 'unix:///nonexistent/redis.sock',
  };
  // One shell: bring loopback up (private namespace), start the server, run claude against it.
  const shell = `
[ -n "$BATON_PRIVATE_NET" ] && ip link set lo up
coproc SERVER { exec "$BATON_NODE" "$BATON_SERVER"; }
read -r port <&"\${SERVER[0]}"
[ -n "$port" ] || { echo "the scripted server did not start" >&2; exit 97; }
ANTHROPIC_BASE_URL="http://127.0.0.1:$port" "$BATON_CLAUDE" -p "drive the task" --output-format json
code=$?
kill -TERM "$SERVER_PID"
wait "$SERVER_PID"
exit $code
`;
  const [bin, args] = CAN_UNSHARE ? ['unshare', ['-rn', 'bash', '-c', shell]] : ['bash', ['-c', shell]];
  const child = spawn(bin, args, { cwd: repo.root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  const recorded: Recorded = fs.existsSync(recordFile) ? JSON.parse(fs.readFileSync(recordFile, 'utf8')) : { requests: [], toolResults: [] };
  let output: any = null;
  try {
    output = JSON.parse(stdout);
  } catch {
    output = stdout;
  }
  return { code, stderr, recorded, output };
}

describe('baton install-hooks claude-code with the real Claude Code', () => {
  it('its CLAUDE.md instructions reach the main agent; --trust makes Claude Code honour the baton task permission', async () => {
    const env = { ...process.env, CLAUDE_CONFIG_DIR: path.join(home, '.claude'), HOME: home };
    const installed = await runBaton(['install-hooks', 'claude-code', '--repo', repo.root], { env });
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain("note: Claude Code ignores this repository's permissions.allow until the workspace is trusted");

    // The hand-over the executor profile gives (status stands in for complete-stage: no worker needed).
    const command = `${BATON} task ${TASK_ID} status <<'BATON_ARTIFACT'\n# Analysis\n\nText.\nBATON_ARTIFACT`;
    const untrusted = await runClaude(command);
    expect(untrusted.code, untrusted.stderr).toBe(0);
    const first = JSON.stringify(untrusted.recorded.requests[0] ?? {});
    expect(first).toContain('## Agent-infra task lifecycle (driven by baton)');
    expect(first).toContain(`${BATON} task <task> prepare --client claude-code`);
    expect(untrusted.stderr).toContain('Ignoring 1 permissions.allow entry from .claude/settings.json: this workspace has not been trusted');
    expect(untrusted.recorded.toolResults).toEqual([expect.objectContaining({ tool_use_id: 'toolu_baton', is_error: true, content: 'This command requires approval' })]);

    const trusted = await runBaton(['install-hooks', 'claude-code', '--repo', repo.root, '--trust'], { env });
    expect(trusted.code, trusted.stderr).toBe(0);
    const globalConfig = path.join(home, '.claude', '.claude.json');
    expect(trusted.stdout).toMatch(/updated\s+\S+\.claude\.json/);
    expect(JSON.parse(fs.readFileSync(globalConfig, 'utf8')).projects[repo.root]).toEqual({ hasTrustDialogAccepted: true });

    const allowed = await runClaude(command);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stderr).not.toContain('Ignoring');
    const result = allowed.recorded.toolResults[0];
    expect(result?.tool_use_id).toBe('toolu_baton');
    // baton ran: the tool result is its one line of JSON (the task has no run yet).
    expect(JSON.stringify(result.content)).toContain('ORCHESTRATION_RUN_MISSING');
    // Claude Code's own keys in its config survive.
    expect(Object.keys(JSON.parse(fs.readFileSync(globalConfig, 'utf8'))).length).toBeGreaterThan(1);
  }, 180_000);
});
