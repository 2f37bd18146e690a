import path from 'node:path';
import type { ClientName } from './agentClients.ts';
import type { ModelRequest, ToolCall, Turn } from './modelServer.ts';

// The tool calls a scripted model makes, in each client's own vocabulary: Claude Code's `Agent`,
// `Bash`, `Read`, `Edit` and `Write`, Codex's `multi_agent_v1.spawn_agent`, `wait_agent`,
// `exec_command` and `apply_patch`.

export const EXECUTOR = 'agent-infra-lifecycle-executor';
export const REVIEWER = 'agent-infra-lifecycle-reviewer';

/** The agent name `complete-stage --agent` takes for a client. */
export function agentName(client: ClientName): string {
  return client === 'claude-code' ? 'claude' : client === 'codex' ? 'codex' : 'copilot';
}

export function shell(client: ClientName, command: string): ToolCall {
  if (client === 'claude-code') return { name: 'Bash', input: { command, description: 'run a command' } };
  if (client === 'copilot-cli') return { name: 'bash', input: { command, description: 'run a command' } };
  // Not a login shell: a login profile would reset PATH (and with it `baton`).
  return { name: 'exec_command', input: { cmd: command, login: false } };
}

export function spawn(client: ClientName, agentType: string, prompt: string, extra: Record<string, unknown> = {}): ToolCall {
  if (client === 'claude-code')
    return {
      name: 'Agent',
      input: { subagent_type: agentType, description: 'lifecycle stage', prompt, run_in_background: false, ...extra },
    };
  // Copilot CLI's `task` requires a name and a description; `sync` returns when the child has finished.
  if (client === 'copilot-cli')
    return {
      name: 'task',
      input: { name: 'stage', agent_type: agentType, description: 'lifecycle stage', prompt, mode: 'sync', ...extra },
    };
  return { name: 'multi_agent_v1.spawn_agent', input: { agent_type: agentType, message: prompt, ...extra } };
}

/**
 * Claude Code's spawning tool as this version offers it: `Agent` (2.1.x later releases) or `Task`
 * (earlier), with only the parameters its schema declares (`run_in_background` is newer).
 */
export function asOffered(call: ToolCall, request: ModelRequest): ToolCall {
  if (request.api !== 'anthropic' || call.name !== 'Agent') return call;
  const name = request.tools.includes('Agent') ? 'Agent' : 'Task';
  const schema = (request.body.tools as Array<{ name: string; input_schema?: { properties?: Record<string, unknown> } }>).find(
    (tool) => tool.name === name,
  );
  const declared = schema?.input_schema?.properties;
  const input = declared ? Object.fromEntries(Object.entries(call.input).filter(([key]) => key in declared)) : call.input;
  return { name, input };
}

/** Agent ids that Codex's spawn_agent returned so far in this conversation. */
export function spawnedIds(request: ModelRequest): string[] {
  return request.toolResults.flatMap((result) => {
    try {
      const parsed = JSON.parse(result) as { agent_id?: string };
      return parsed.agent_id ? [parsed.agent_id] : [];
    } catch {
      return [];
    }
  });
}

/** Codex's wait_agent on every child spawned so far in this conversation. */
export function waitForChildren(request: ModelRequest): Turn {
  return { toolCalls: [{ name: 'multi_agent_v1.wait_agent', input: { targets: spawnedIds(request), timeout_ms: 30_000 } }] };
}

/** The orchestration result a `baton task` printed inside a tool result (clients add their own framing). */
export function batonResult(toolResult: string | undefined): Record<string, any> {
  const line = (toolResult ?? '').split('\n').find((text) => text.trim().startsWith('{"status"'));
  if (!line) throw new Error(`no baton result in ${JSON.stringify(toolResult)}`);
  return JSON.parse(line) as Record<string, any>;
}

/** A Codex wait_agent result saying its timeout passed before every child finished. */
function timedOutWait(result: string): boolean {
  try {
    return (JSON.parse(result) as { timed_out?: unknown }).timed_out === true;
  } catch {
    return false;
  }
}

/**
 * Codex's wait_agent returns when the children are done or when its timeout passes, whichever comes
 * first (and it clamps the timeout to its own bounds). On a loaded machine a child can outlast it,
 * and a script that went on would race the child. This parent waits again while a wait timed out,
 * and its script sees the steps counted without those extra waits: the step after a wait always
 * finds the children done (docs/architecture.md "Testing").
 */
export function waitingOutChildren(
  script: (request: ModelRequest) => Turn | Promise<Turn>,
): (request: ModelRequest) => Turn | Promise<Turn> {
  return (request) => {
    const last = request.toolResults.at(-1);
    if (last !== undefined && timedOutWait(last)) return waitForChildren(request);
    return script({ ...request, step: request.step - request.toolResults.filter(timedOutWait).length });
  };
}

/**
 * A parent that spawns, waits for the child (Codex's spawn_agent runs it in the background; a
 * Claude `Agent` call with run_in_background false returns when it is done), then runs `after`
 * in its shell one command per turn, then ends its turn.
 */
export function parentThatSpawns(client: ClientName, spawnCall: ToolCall, after: string[] = []): (request: ModelRequest) => Turn {
  const steps: Array<(request: ModelRequest) => Turn> = [(request) => ({ toolCalls: [asOffered(spawnCall, request)] })];
  if (client === 'codex') {
    steps.push((request) => {
      return spawnedIds(request).length > 0 ? waitForChildren(request) : { text: 'spawn refused' };
    });
  }
  for (const command of after) steps.push(() => ({ toolCalls: [shell(client, command)] }));
  return (request) => steps[request.step]?.(request) ?? { text: 'done' };
}

/**
 * An executor that hands its artifact to baton as the installed profile tells it to
 * (`complete-stage --content -` with the text on stdin: Claude Code refuses a subagent's Write of
 * `analysis.md`, Codex's sandbox keeps `.agents/` read-only), then reports.
 */
export function executorThatCompletes(
  client: ClientName,
  baton: string,
  options: { artifact?: string; extraTaskArgs?: string } = {},
): (request: ModelRequest) => Turn {
  const artifact = options.artifact ?? 'analysis.md';
  const command = `${baton} task 01 complete-stage --stage analysis --round 1 --artifact ${artifact} --agent ${agentName(client)}${options.extraTaskArgs ? ` ${options.extraTaskArgs}` : ''} --content - <<'BATON_ARTIFACT'\n# Analysis\n\nDone.\nBATON_ARTIFACT`;
  return (request) => (request.step === 0 ? { toolCalls: [shell(client, command)] } : { text: `${artifact} written; stage completed.` });
}

/** A file an agent writes: `file` relative to the repository root; `before` its content when it exists. */
export type FileEdit = { file: string; before?: string; after: string };

/**
 * What a Claude Code run needs for its agents' file edits to be made without a prompt
 * (`claude -p` denies an `Edit` or `Write` its permissions do not allow): the user's own choice to
 * accept edits. Codex needs nothing: its default `workspace-write` sandbox lets it write in the
 * workspace, and `approval_policy = "never"` asks no one.
 */
export const ACCEPT_EDITS: Readonly<Record<ClientName, readonly string[]>> = {
  'claude-code': ['--permission-mode', 'acceptEdits'],
  codex: [],
  'copilot-cli': [],
};

/** The lines of an apply_patch hunk for `text`, each with its `prefix`. */
function patchLines(prefix: string, text: string): string[] {
  return text
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => `${prefix}${line}`);
}

/**
 * The tool calls, one a turn, with which a client makes `edit` with its own edit tool: Claude
 * Code's `Edit` of an existing file (after the `Read` it insists on) or `Write` of a new one;
 * Codex's `apply_patch`, asked for through its shell (Codex parses the patch and applies it itself,
 * as its own tool; it offers no separate patch tool to a provider without model metadata).
 */
export function editCalls(client: ClientName, root: string, edit: FileEdit): ToolCall[] {
  const file = path.join(root, edit.file);
  if (client === 'claude-code') {
    return edit.before === undefined
      ? [{ name: 'Write', input: { file_path: file, content: edit.after } }]
      : [
          { name: 'Read', input: { file_path: file } },
          { name: 'Edit', input: { file_path: file, old_string: edit.before, new_string: edit.after } },
        ];
  }
  if (client === 'copilot-cli') {
    return edit.before === undefined
      ? [{ name: 'create', input: { path: file, file_text: edit.after } }]
      : [{ name: 'edit', input: { path: file, old_str: edit.before, new_str: edit.after } }];
  }
  const hunk =
    edit.before === undefined
      ? [`*** Add File: ${edit.file}`, ...patchLines('+', edit.after)]
      : [`*** Update File: ${edit.file}`, '@@', ...patchLines('-', edit.before), ...patchLines('+', edit.after)];
  const patch = ['*** Begin Patch', ...hunk, '*** End Patch'].join('\n');
  return [shell(client, `apply_patch <<'BATON_PATCH'\n${patch}\nBATON_PATCH`)];
}

/** What the client's edit tool answers once it made `edit` (the tool result after the last of `editCalls`). */
export function editMade(client: ClientName, edit: FileEdit): RegExp {
  const file = edit.file
    .split(path.sep)
    .join('/')
    .replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // Copilot CLI's edit and create tools (1.0.102).
  if (client === 'copilot-cli')
    return edit.before === undefined
      ? new RegExp(`^Created file \\S*${file} with \\d+ characters$`)
      : new RegExp(`^File \\S*${file} updated with changes\\.$`);
  if (client === 'claude-code') {
    return edit.before === undefined
      ? new RegExp(`File created successfully at: \\S*${file}`)
      : new RegExp(`The file \\S*${file} has been updated successfully`);
  }
  return new RegExp(`Success\\. Updated the following files:\\n${edit.before === undefined ? 'A' : 'M'} ${file}$`, 'm');
}

/**
 * A lifecycle child's turns from step `from` on: `edit` made with its client's own tool, one call
 * a turn, then `text`. `answer()` is what the edit tool answered (empty until it did).
 */
export function editingTurns(
  client: ClientName,
  root: string,
  edit: FileEdit,
  text: string,
): { turn(request: ModelRequest, from: number): Turn; answer(): string } {
  const calls = editCalls(client, root, edit);
  let answer = '';
  return {
    turn(request, from) {
      const index = request.step - from;
      if (index === calls.length) answer = request.toolResults.at(-1) ?? '';
      const call = calls[index];
      return call ? { toolCalls: [call] } : { text };
    },
    answer: () => answer,
  };
}
