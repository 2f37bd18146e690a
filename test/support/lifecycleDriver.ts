import { driveLifecycle as drive } from '../../src/demo/driver.ts';
import type { ClientId } from '../../src/clients/registry.ts';
import type { JsonResult } from '../../src/demo/driver.ts';
import { jsonOf, runBaton } from './processes.ts';
import type { CliRun } from './processes.ts';

// The lifecycle driver of `baton demo` (src/demo/driver.ts) with everything going through the real
// CLI: `baton task` processes for intents and `baton hook` processes for native events.

export { nativePayload } from '../../src/demo/driver.ts';

export type DriverOptions = {
  root: string;
  taskRef: string;
  env: NodeJS.ProcessEnv;
  /** Extra args for every `baton task` call (e.g. --worker inline). */
  taskArgs?: readonly string[];
  client?: ClientId;
  /** Runs `baton` with another runtime (Bun, Deno) when given. */
  run?: (args: readonly string[], options: { env: NodeJS.ProcessEnv; input?: string; cwd?: string }) => Promise<CliRun>;
  onStep?: (line: string) => void;
};

export async function driveLifecycle(options: DriverOptions): Promise<{ steps: string[]; final: JsonResult }> {
  const client = options.client ?? 'claude-code';
  const run = options.run ?? ((args, opts) => runBaton(args, opts));
  const extra = options.taskArgs ?? [];
  const { steps, final } = await drive({
    root: options.root,
    taskRef: options.taskRef,
    client,
    io: {
      task: async (args) => jsonOf(await run(['task', options.taskRef, ...args, ...extra], { env: options.env, cwd: options.root })),
      hook: (payload) => run(['hook', client], { env: options.env, input: payload, cwd: options.root }),
    },
    onStage: (stage) => options.onStep?.(`${stage.stage} r${stage.round} → ${stage.status}`),
  });
  return { steps, final };
}
