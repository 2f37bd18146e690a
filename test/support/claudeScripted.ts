import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

// The real Claude Code (the pinned @anthropic-ai/claude-code), run headless (`claude -p`) against
// a scripted Anthropic Messages API server (streaming) on 127.0.0.1. The script says what the main
// agent and the lifecycle subagent answer, turn by turn: a tool call or a text. Requests of the
// lifecycle executor are recognised by its profile in the system prompt, the main agent's by the
// Agent tool; any other request (a title, a summary) gets a short text. Loopback only: where a
// private network namespace can be made, the server and the client both run inside it, with
// nonessential traffic, telemetry, error reporting and the updater off, in a clean environment.

const require = createRequire(import.meta.url);
export const CLAUDE_BIN = path.join(path.dirname(require.resolve('@anthropic-ai/claude-code-linux-x64/package.json')), 'claude');

/** A private network namespace whose loopback can be brought up. */
export const CAN_ISOLATE_NETWORK = spawnSync('unshare', ['-rn', 'sh', '-c', 'ip link set lo up']).status === 0;

/**
 * Whether the run is isolated: never a quiet fallback. Without a private network namespace the run
 * fails saying what to install, unless BATON_AGENT_TESTS_NETNS=0 asks for plain loopback.
 */
function isolationHere(): boolean {
  if (CAN_ISOLATE_NETWORK) return true;
  if (process.env.BATON_AGENT_TESTS_NETNS === '0') return false;
  throw new Error(
    'the scripted Claude runs need a private network namespace: unshare (apt-get install util-linux) and ip (apt-get install iproute2), with user namespaces allowed; BATON_AGENT_TESTS_NETNS=0 runs them on plain loopback',
  );
}

export type ScriptStep = { tool: string; input: Record<string, unknown> } | { text: string };
export type ClaudeScript = { parent: ScriptStep[]; child: ScriptStep[] };
export type Recorded = { requests: { role: string; body: any }[]; toolResults: { role: string; result: any }[] };

const SERVER_SOURCE = String.raw`
import http from 'node:http';
import fs from 'node:fs';
const script = JSON.parse(process.env.BATON_SCRIPT);
const recorded = { requests: [], toolResults: [] };
const turns = { parent: 0, child: 0 };
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
    const system = JSON.stringify(parsed.system || '');
    const tools = (parsed.tools || []).map((tool) => tool.name);
    const role = system.includes('You are a fresh executor subagent') ? 'child' : tools.includes('Agent') ? 'parent' : 'side';
    recorded.requests.push({ role, body: parsed });
    // Claude Code may append system reminders after a tool result: look at every message, once per tool call.
    for (const message of parsed.messages) {
      for (const block of Array.isArray(message.content) ? message.content : []) {
        if (block.type === 'tool_result' && !recorded.toolResults.some((seen) => seen.result.tool_use_id === block.tool_use_id)) {
          recorded.toolResults.push({ role, result: block });
        }
      }
    }
    let step = { text: 'ok' };
    if (role !== 'side') {
      const steps = script[role];
      step = steps[Math.min(turns[role], steps.length - 1)];
      turns[role] += 1;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (type, data) => response.write('event: ' + type + '\ndata: ' + JSON.stringify({ type, ...data }) + '\n\n');
    send('message_start', { message: { id: 'msg_' + recorded.requests.length, type: 'message', role: 'assistant', model: parsed.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } });
    if (step.tool) {
      send('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_' + role + '_' + turns[role], name: step.tool, input: {} } });
      send('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(step.input) } });
      send('content_block_stop', { index: 0 });
      send('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 1 } });
    } else {
      send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: step.text } });
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

export type ClaudeRun = { code: number | null; stdout: string; stderr: string; recorded: Recorded };

/**
 * Runs `claude -p <prompt>` in `cwd` against a server playing `script`. `workDir` holds the server
 * program and its record; `home` is the client's HOME and CLAUDE_CONFIG_DIR parent. `env` adds
 * variables (REDIS_URL, BATON_PREFIX for the hooks). `isolate` false keeps the host network (when
 * the hooks must reach a Redis on the host's loopback).
 */
export async function runScriptedClaude(options: {
  cwd: string;
  home: string;
  workDir: string;
  prompt: string;
  script: ClaudeScript;
  env?: Record<string, string>;
  isolate?: boolean;
  timeoutMs?: number;
}): Promise<ClaudeRun> {
  const serverFile = path.join(options.workDir, 'scripted-server.mjs');
  const recordFile = path.join(options.workDir, 'scripted-record.json');
  fs.rmSync(recordFile, { force: true });
  fs.writeFileSync(serverFile, SERVER_SOURCE);
  const isolate = (options.isolate ?? true) && isolationHere();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: options.home,
    CLAUDE_CONFIG_DIR: path.join(options.home, '.claude'),
    ANTHROPIC_API_KEY: 'sk-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    BATON_SCRIPT: JSON.stringify(options.script),
    BATON_SERVER: serverFile,
    BATON_RECORD: recordFile,
    BATON_NODE: process.execPath,
    BATON_CLAUDE: CLAUDE_BIN,
    BATON_PROMPT: options.prompt,
    ...(isolate ? { BATON_PRIVATE_NET: '1' } : {}),
    ...options.env,
  };
  // One shell: loopback up (private namespace), the server, then the client against it.
  const shell = `
[ -n "$BATON_PRIVATE_NET" ] && ip link set lo up
coproc SERVER { exec "$BATON_NODE" "$BATON_SERVER"; }
read -r port <&"\${SERVER[0]}"
[ -n "$port" ] || { echo "the scripted server did not start" >&2; exit 97; }
ANTHROPIC_BASE_URL="http://127.0.0.1:$port" "$BATON_CLAUDE" -p "$BATON_PROMPT" --output-format json
code=$?
kill -TERM "$SERVER_PID"
wait "$SERVER_PID"
exit $code
`;
  const [bin, args] = isolate ? ['unshare', ['-rn', 'bash', '-c', shell]] : ['bash', ['-c', shell]];
  // Its own process group, so a timeout ends the client too, not only the shell.
  const child = spawn(bin, args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const timer = setTimeout(() => {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  }, options.timeoutMs ?? 90_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  const recorded: Recorded = fs.existsSync(recordFile)
    ? JSON.parse(fs.readFileSync(recordFile, 'utf8'))
    : { requests: [], toolResults: [] };
  return { code, stdout, stderr, recorded };
}
