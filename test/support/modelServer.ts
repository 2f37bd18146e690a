import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

// A scripted model server for the real-client tests: the Anthropic Messages API (Claude Code) and
// the OpenAI Responses API (Codex), both streaming (SSE). It listens on a unix socket (reachable
// from a private network namespace, the filesystem being shared) and on 127.0.0.1 for the
// fallback without one. Each request is routed to a conversation — the parent agent, a lifecycle
// executor or reviewer, or a side request of the client (titles, summaries) — by the system
// prompt and the agent profile text, and answered with the next turn of that conversation's
// script. The turn is derived from the request itself (how many assistant turns it carries), so a
// client's retries and concurrent children need no server-side state. Every request is recorded.

export type Api = 'anthropic' | 'openai';
/** Who is asking: the top-level agent, a lifecycle subagent, another subagent, or a side request (titles). */
export type Role = 'parent' | 'executor' | 'reviewer' | 'subagent' | 'side';

/** A tool call; `name` may be `namespace.name` for a Codex namespaced tool (`multi_agent_v1.spawn_agent`). */
export type ToolCall = { name: string; input: Record<string, unknown> };
/**
 * The token usage a response reports, in the Anthropic API's terms (the OpenAI answer maps them:
 * `input_tokens` there counts cached ones too, `cached_tokens` is `cacheRead`). Left out, a
 * response reports 10 input and 10 output tokens.
 */
export type Usage = { input: number; output: number; cacheRead?: number; cacheCreation?: number };
export type Turn = { text?: string; toolCalls?: ToolCall[]; usage?: Usage };

const DEFAULT_USAGE: Usage = { input: 10, output: 10 };

export type ModelRequest = {
  api: Api;
  path: string;
  role: Role;
  /** Assistant turns already in the conversation: 0 for its first request. */
  step: number;
  /** System prompt and developer/instruction text, joined. */
  system: string;
  /** Text of the user messages (what the parent or the spawner asked). */
  userText: string;
  /** Tool results the client sent back, in order (text only). */
  toolResults: string[];
  /** Names of the tools the client offered. */
  tools: string[];
  /** When the request arrived (ms since the epoch). */
  at: number;
  body: any;
  /** The usage its response reported (set once the script's turn is known). */
  reported?: Usage;
  /** The model its response named. */
  model?: string;
};

/** Per conversation, the next turn; it may be async (a test can change the world between turns). */
export type Script = Partial<Record<Role, (request: ModelRequest) => Turn | Promise<Turn>>>;

/** A conversation that plays its turns in order, then answers `done` forever. */
export function turns(...list: Turn[]): (request: ModelRequest) => Turn {
  return (request) => list[request.step] ?? { text: 'done' };
}

const PROFILE_MARKERS: ReadonlyArray<[Role, RegExp]> = [
  ['executor', /fresh executor subagent of the agent-infra task lifecycle/],
  ['reviewer', /fresh reviewer subagent of the agent-infra task lifecycle/],
];

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: any) => {
      if (typeof part === 'string') return part;
      if (typeof part?.text === 'string') return part.text;
      if (part?.type === 'tool_result') return textOf(part.content);
      return '';
    })
    .join('\n');
}

function describeAnthropic(body: any): Omit<ModelRequest, 'role' | 'api' | 'path' | 'body' | 'at'> {
  const system = textOf(body.system);
  const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
  const step = messages.filter((message) => message.role === 'assistant').length;
  const userText = messages
    .filter((message) => message.role === 'user')
    .map((message) =>
      Array.isArray(message.content)
        ? message.content
            .filter((part: any) => part?.type === 'text')
            .map((part: any) => part.text)
            .join('\n')
        : textOf(message.content),
    )
    .join('\n');
  const toolResults = messages.flatMap((message) =>
    Array.isArray(message.content)
      ? message.content.filter((part: any) => part?.type === 'tool_result').map((part: any) => textOf(part.content))
      : [],
  );
  const tools = (Array.isArray(body.tools) ? body.tools : []).map((tool: any) => String(tool.name));
  return { system, step, userText, toolResults, tools };
}

function describeOpenAI(body: any): Omit<ModelRequest, 'role' | 'api' | 'path' | 'body' | 'at'> {
  const input: any[] = Array.isArray(body.input) ? body.input : [];
  const isAssistantItem = (item: any) =>
    item.type === 'function_call' ||
    item.type === 'custom_tool_call' ||
    item.type === 'reasoning' ||
    (item.type === 'message' && item.role === 'assistant');
  // One model response is a contiguous run of assistant items (reasoning, text, calls); the
  // tool outputs and messages the client adds after it end that turn.
  let step = 0;
  let inTurn = false;
  for (const item of input) {
    const assistant = isAssistantItem(item);
    if (assistant && !inTurn) step += 1;
    inTurn = assistant;
  }
  const system = [
    body.instructions,
    ...input
      .filter((item) => item.type === 'message' && (item.role === 'developer' || item.role === 'system'))
      .map((item) => textOf(item.content)),
  ]
    .filter(Boolean)
    .join('\n');
  const userText = input
    .filter((item) => item.type === 'message' && item.role === 'user')
    .map((item) => textOf(item.content))
    .join('\n');
  const toolResults = input
    .filter((item) => item.type === 'function_call_output' || item.type === 'custom_tool_call_output')
    .map((item) => (typeof item.output === 'string' ? item.output : textOf(item.output?.content ?? item.output)));
  // Codex groups its multi-agent tools in a namespace (`multi_agent_v1`); list them as `ns.name`.
  const tools = (Array.isArray(body.tools) ? body.tools : []).flatMap((tool: any) =>
    tool.type === 'namespace' && Array.isArray(tool.tools)
      ? tool.tools.map((child: any) => `${tool.name}.${child.name}`)
      : [String(tool.name ?? tool.type)],
  );
  return { system, step, userText, toolResults, tools };
}

function roleOf(api: Api, described: Omit<ModelRequest, 'role' | 'api' | 'path' | 'body' | 'at'>): Role {
  // Codex puts a spawned agent's profile in the child's developer message; Claude Code makes the
  // profile body the subagent's system prompt.
  for (const [role, marker] of PROFILE_MARKERS) if (marker.test(described.system)) return role;
  if (api === 'anthropic') {
    // Side requests (titles, summaries) offer no tools. Later releases mark a subagent's requests
    // in the billing header line of the system prompt (and offer it the Agent tool too); earlier
    // ones offer a subagent no spawning tool.
    if (described.tools.length === 0) return 'side';
    if (/cc_is_subagent=true/.test(described.system)) return 'subagent';
    return described.tools.some((name) => /^(Agent|Task)$/.test(name)) ? 'parent' : 'subagent';
  }
  // Codex offers the multi-agent tools to the root thread only; Copilot CLI's spawning tool is `task`.
  if (described.tools.some((name) => /spawn_agent$/.test(name) || name === 'task')) return 'parent';
  return described.tools.length > 0 ? 'subagent' : 'side';
}

let counter = 0;
const nextId = (prefix: string) => `${prefix}_${Date.now().toString(36)}${(counter += 1).toString(36).padStart(4, '0')}`;

function sse(response: http.ServerResponse, events: ReadonlyArray<[string, unknown]>): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'close' });
  for (const [event, data] of events) response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  response.end();
}

function anthropicUsage(usage: Usage): Record<string, number> {
  return {
    input_tokens: usage.input,
    cache_creation_input_tokens: usage.cacheCreation ?? 0,
    cache_read_input_tokens: usage.cacheRead ?? 0,
    output_tokens: usage.output,
  };
}

function anthropicMessage(body: any, turn: Turn): { message: any; stopReason: string } {
  const content: any[] = [];
  if (turn.text) content.push({ type: 'text', text: turn.text });
  for (const call of turn.toolCalls ?? []) content.push({ type: 'tool_use', id: nextId('toolu'), name: call.name, input: call.input });
  const stopReason = turn.toolCalls?.length ? 'tool_use' : 'end_turn';
  const message = {
    id: nextId('msg'),
    type: 'message',
    role: 'assistant',
    model: body.model ?? 'claude-scripted',
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: anthropicUsage(turn.usage ?? DEFAULT_USAGE),
  };
  return { message, stopReason };
}

function answerAnthropic(response: http.ServerResponse, body: any, turn: Turn): void {
  const { message, stopReason } = anthropicMessage(body, turn);
  if (!body.stream) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(message));
    return;
  }
  const events: Array<[string, unknown]> = [
    [
      'message_start',
      // As the API streams it: message_start has the input side and a first output count, message_delta the final output count.
      { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } } },
    ],
  ];
  message.content.forEach((block: any, index: number) => {
    if (block.type === 'text') {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } }]);
    } else {
      events.push([
        'content_block_start',
        { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } },
      ]);
      events.push([
        'content_block_delta',
        { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } },
      ]);
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  events.push([
    'message_delta',
    {
      type: 'message_delta',
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: message.usage.output_tokens },
    },
  ]);
  events.push(['message_stop', { type: 'message_stop' }]);
  sse(response, events);
}

function answerOpenAI(response: http.ServerResponse, turn: Turn): void {
  const responseId = nextId('resp');
  const items: any[] = [];
  if (turn.text)
    items.push({
      type: 'message',
      role: 'assistant',
      id: nextId('msg'),
      status: 'completed',
      content: [{ type: 'output_text', text: turn.text, annotations: [] }],
    });
  for (const call of turn.toolCalls ?? []) {
    const dot = call.name.lastIndexOf('.');
    const named = dot > 0 ? { namespace: call.name.slice(0, dot), name: call.name.slice(dot + 1) } : { name: call.name };
    items.push({
      type: 'function_call',
      id: nextId('fc'),
      call_id: nextId('call'),
      ...named,
      arguments: JSON.stringify(call.input),
      status: 'completed',
    });
  }
  const events: Array<[string, unknown]> = [['response.created', { type: 'response.created', response: { id: responseId } }]];
  items.forEach((item, index) => {
    events.push(['response.output_item.added', { type: 'response.output_item.added', output_index: index, item }]);
    events.push(['response.output_item.done', { type: 'response.output_item.done', output_index: index, item }]);
  });
  const reported = turn.usage ?? DEFAULT_USAGE;
  const input = reported.input + (reported.cacheRead ?? 0);
  const usage = {
    input_tokens: input,
    input_tokens_details: { cached_tokens: reported.cacheRead ?? 0 },
    output_tokens: reported.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + reported.output,
  };
  events.push([
    'response.completed',
    { type: 'response.completed', response: { id: responseId, status: 'completed', output: items, usage } },
  ]);
  sse(response, events);
}

export type ModelServer = {
  socket: string;
  /** http://127.0.0.1:PORT, for clients in this network namespace. */
  url: string;
  requests: ModelRequest[];
  /** Errors thrown by the script's turns (a test asserts there are none). */
  scriptErrors: Error[];
  setScript(script: Script): void;
  byRole(role: Role): ModelRequest[];
  close(): Promise<void>;
};

export async function startModelServer(dir: string = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-model-'))): Promise<ModelServer> {
  let script: Script = {};
  const requests: ModelRequest[] = [];
  const scriptErrors: Error[] = [];
  const handler: http.RequestListener = (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://model');
      let body: any = {};
      try {
        body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
      } catch {
        body = {};
      }
      if (request.method === 'POST' && url.pathname.endsWith('/messages/count_tokens')) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ input_tokens: 100 }));
        return;
      }
      const api: Api | null = url.pathname.endsWith('/messages') ? 'anthropic' : url.pathname.endsWith('/responses') ? 'openai' : null;
      if (request.method !== 'POST' || api === null) {
        // Model lists and anything else: an empty, valid answer.
        response.writeHead(url.pathname.endsWith('/models') ? 200 : 404, { 'content-type': 'application/json' });
        response.end(url.pathname.endsWith('/models') ? JSON.stringify({ data: [], models: [] }) : '{}');
        return;
      }
      const described = api === 'anthropic' ? describeAnthropic(body) : describeOpenAI(body);
      const role = roleOf(api, described);
      const recorded: ModelRequest = { api, path: url.pathname, role, at: Date.now(), body, ...described };
      requests.push(recorded);
      const answer = (turn: Turn) => {
        recorded.reported = turn.usage ?? DEFAULT_USAGE;
        recorded.model = api === 'anthropic' ? (body.model ?? 'claude-scripted') : body.model;
        return api === 'anthropic' ? answerAnthropic(response, body, turn) : answerOpenAI(response, turn);
      };
      Promise.resolve()
        .then(() => script[role]?.(recorded) ?? { text: 'ok' })
        .then(answer, (error: Error) => {
          scriptErrors.push(error);
          answer({ text: `script error: ${error.message}` });
        });
    });
  };
  const socket = path.join(dir, 'model.sock');
  const onSocket = http.createServer(handler);
  const onTcp = http.createServer(handler);
  await new Promise<void>((resolve) => onSocket.listen(socket, resolve));
  await new Promise<void>((resolve) => onTcp.listen(0, '127.0.0.1', resolve));
  const port = (onTcp.address() as AddressInfo).port;
  const close = (server: http.Server) =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    socket,
    url: `http://127.0.0.1:${port}`,
    requests,
    scriptErrors,
    setScript(next) {
      script = next;
    },
    byRole: (role) => requests.filter((request) => request.role === role),
    async close() {
      await Promise.all([close(onSocket), close(onTcp)]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
