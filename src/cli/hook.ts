import fs from 'node:fs';
import { CLIENT_IDS } from '../clients/registry.ts';
import { HOOK_INPUT_LIMIT, handleHook } from '../hooks/handle.ts';
import { headlessSessionOf } from '../hooks/decide.ts';

// `baton hook <client> [--event NAME]`: the command a native hook runs (docs/hooks.md). It reads
// its arguments and stdin and hands them to src/hooks/handle.ts, which decides and delivers; what it
// gets back goes to stdout and stderr as the client expects.

export const DEFAULT_HOOK_BUDGET_MS = 4_000;

export async function run(argv: string[]): Promise<number> {
  const args = parseHookArgs(argv);
  if ('help' in args) {
    process.stdout.write(HOOK_USAGE);
    return 0;
  }
  if ('error' in args) {
    process.stderr.write(`${args.error}\n${HOOK_USAGE}`);
    return 1;
  }
  const outcome = await handleHook(
    { ...args, verbose: process.env.BATON_HOOK_VERBOSE === '1', cwd: process.cwd(), headless: headlessSessionOf(process.env) },
    () => readStdin(HOOK_INPUT_LIMIT),
  );
  if (outcome.stderr) process.stderr.write(outcome.stderr);
  if (outcome.stdout) process.stdout.write(outcome.stdout);
  return outcome.exitCode;
}

async function readStdin(limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  // Blocking reads of fd 0 first: iterating process.stdin costs a fresh process 5 ms (Node) to
  // 13 ms (Bun) before the first byte, a read(2) a fraction of one (bench/results/hook.md).
  const buffer = Buffer.alloc(16 * 1024);
  for (;;) {
    let count: number;
    try {
      count = fs.readSync(0, buffer, 0, buffer.length, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EOF') return Buffer.concat(chunks);
      if (code === 'EAGAIN') break; // a non-blocking stdin: read the rest as a stream
      throw error;
    }
    if (count === 0) return Buffer.concat(chunks);
    chunks.push(Buffer.from(buffer.subarray(0, count)));
    size += count;
    if (size > limit) return Buffer.concat(chunks); // enough to know it is too large
  }
  for await (const chunk of process.stdin) {
    const data = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    chunks.push(data);
    size += data.length;
    if (size > limit) break; // enough to know it is too large
  }
  return Buffer.concat(chunks);
}

type HookArgs = { client: string | undefined; event?: string; repo?: string; redis?: string; budgetMs: number };

function parseHookArgs(argv: readonly string[]): HookArgs | { help: true } | { error: string } {
  const args: HookArgs = { client: undefined, budgetMs: Number(process.env.BATON_HOOK_BUDGET_MS) || DEFAULT_HOOK_BUDGET_MS };
  for (let index = 0; index < argv.length; index += 1) {
    const token = argv[index]!;
    if (token === '--help' || token === '-h') return { help: true };
    const value = argv[index + 1];
    const takeValue = () => {
      index += 1;
      return value;
    };
    if (token === '--event') args.event = takeValue();
    else if (token === '--client') args.client = takeValue();
    else if (token === '--repo') args.repo = takeValue();
    else if (token === '--redis') args.redis = takeValue();
    else if (token === '--budget') args.budgetMs = Number(takeValue());
    else if (!token.startsWith('--') && args.client === undefined) args.client = token;
    else return { error: `unknown argument '${token}'` };
  }
  if (!Number.isFinite(args.budgetMs) || args.budgetMs <= 0) return { error: '--budget must be a positive number of milliseconds' };
  return args;
}

const HOOK_USAGE = `Usage: baton hook <${CLIENT_IDS.join('|')}> [--event NAME] [--repo DIR] [--redis URL] [--budget MS]

Reads a native hook payload on stdin. SubagentStart/SubagentStop of agent-infra-lifecycle-executor
or -reviewer become hook-start/hook-stop events on the repository queue (stdout stays empty);
PreToolUse of the spawning tool claims the prepared delegation for that tool call and blocks
(exit 2, reason on stderr) a lifecycle spawn that cannot have it. Other agents: exit 0, silent.
BATON_HOOK_VERBOSE=1 waits for the worker and prints the orchestration result on stderr.

Options:
  --event NAME  the hook event (default: the payload's hook_event_name)
  --repo DIR    repository (default: the nearest ancestor of the payload's cwd holding .git)
  --redis URL   Redis URL (default: $REDIS_URL, then the Redis the repository's worker recorded)
  --budget MS   the most the hook takes: Redis not answering by then, it spools the event;
                a spawn claim no worker answered by then is blocked
                (default: $BATON_HOOK_BUDGET_MS, then ${DEFAULT_HOOK_BUDGET_MS})
  -h, --help    display help for command
`;
