import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { describeNeeding } from '../support/requirements.ts';
import { readRun, uniquePrefix } from '../support/fixtures.ts';
import { completeStageArgs } from '../support/runSteps.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import { BATON_BIN, batonEnv, jsonOf, runProcess, startWorkerProcess } from '../support/processes.ts';
import type { CliRun, WorkerProcess } from '../support/processes.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { stageWork } from '../../src/demo/driver.ts';
import { startPrivateRedis } from '../support/redisServer.ts';
import type { PrivateRedis } from '../support/redisServer.ts';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';

// Several "machines" against one Redis, each with its own checkout at the SAME path and the SAME
// host name, as dev containers have: every machine is a private mount + UTS namespace
// (`unshare --mount --uts`, as root) in which its checkout is bind-mounted over one shared path and
// the other machines' checkouts are hidden. Each runs `baton worker`; commands and hook events run
// concurrently on all of them. Each machine's files change only by its own events. (Before checkout
// ids, the queue was named after the path, and machine B's `abort` was applied to machine A's run.)

const HOST = 'devbox';
const MACHINES = ['a', 'b', 'c'] as const;
type MachineName = (typeof MACHINES)[number];

function unshareWorks(): string | null {
  if (process.getuid?.() !== 0) return 'needs root: each machine is a mount namespace (run the suite as root, as CI does)';
  const probe = spawnSync(
    'unshare',
    ['--mount', '--uts', '--propagation', 'private', 'sh', '-c', `hostname ${HOST} && mount -t tmpfs tmpfs /mnt`],
    { encoding: 'utf8', timeout: 10_000 },
  );
  if (probe.error) return `unshare is not installed (apt-get install util-linux): ${probe.error.message}`;
  return probe.status === 0 ? null : `unshare --mount --uts is not permitted here (${probe.stderr.trim()})`;
}

const skipReason = unshareWorks();

type Machine = { name: MachineName; source: string; taskDir: string; worker: WorkerProcess | null };

let base: string;
let shared: string;
let machinesDir: string;
let redis: PrivateRedis;
let prefix: string;
const machines = new Map<MachineName, Machine>();

/** argv that runs `command…` on `machine`: its checkout at the shared path, the others hidden, host name devbox. */
function onMachine(machine: Machine, command: readonly string[]): string[] {
  const script =
    'src=$1; dst=$2; hide=$3; shift 3; hostname "$HOST_NAME" && mount --bind "$src" "$dst" && mount -t tmpfs tmpfs "$hide" && cd "$dst" && exec "$@"';
  return ['--mount', '--uts', '--propagation', 'private', 'sh', '-c', script, 'sh', machine.source, shared, machinesDir, ...command];
}

function envFor(): NodeJS.ProcessEnv {
  return batonEnv({ redisUrl: redis.url, prefix }, { HOST_NAME: HOST });
}

function runOn(machine: Machine, args: readonly string[], input?: string): Promise<CliRun> {
  // The agent reports the shared path as its cwd, as it would on that machine.
  return runProcess('unshare', onMachine(machine, [process.execPath, BATON_BIN, ...args]), {
    env: envFor(),
    input: input?.replaceAll(machine.source, shared),
    cwd: base,
    timeoutMs: 60_000,
  });
}

const checkoutOf = (machine: Machine) =>
  JSON.parse(fs.readFileSync(path.join(machine.source, '.git', 'baton', 'checkout.json'), 'utf8')) as {
    id: string;
    root: string;
    host: string;
  };

beforeAll(async () => {
  if (skipReason) return;
  base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-machines-')));
  shared = path.join(base, 'app');
  machinesDir = path.join(base, 'machines');
  fs.mkdirSync(shared);
  fs.mkdirSync(machinesDir);
  redis = await startPrivateRedis();
  prefix = uniquePrefix('machines');
  for (const name of MACHINES) {
    const repo = gitRepoWithTask();
    const source = path.join(machinesDir, name);
    fs.renameSync(repo.root, source);
    machines.set(name, { name, source, taskDir: path.join(source, path.relative(repo.root, repo.taskDir)), worker: null });
  }
  await Promise.all(
    [...machines.values()].map(async (machine) => {
      machine.worker = await startWorkerProcess(['--repo', shared], {
        env: envFor(),
        command: 'unshare',
        commandArgs: onMachine(machine, [process.execPath]),
        cwd: base,
      });
    }),
  );
}, 60_000);

afterAll(async () => {
  if (skipReason) return;
  await Promise.all([...machines.values()].map((machine) => machine.worker?.stop('SIGKILL')));
  await redis?.stop();
  if (redis) fs.rmSync(redis.dir, { recursive: true, force: true });
  fs.rmSync(base, { recursive: true, force: true });
});

describeNeeding(skipReason, 'many machines, one repository each, one Redis', () => {
  it('every machine has its own checkout id for the same path and host name', () => {
    const ids = MACHINES.map((name) => checkoutOf(machines.get(name)!));
    expect(new Set(ids.map((id) => id.id)).size).toBe(MACHINES.length);
    for (const id of ids) expect(id).toMatchObject({ root: shared, host: HOST });
  });

  it("an abort on machine B changes B's run only (the issue's reproduction)", async () => {
    const [a, b] = [machines.get('a')!, machines.get('b')!];
    for (const machine of [a, b]) {
      expect(jsonOf(await runOn(machine, ['task', '01', 'begin-or-resume'])).status).toBe('running');
      expect(jsonOf(await runOn(machine, ['task', '01', 'prepare', '--client', 'claude-code'])).status).toBe('running');
    }
    const aborted = jsonOf(await runOn(b, ['task', '01', 'abort', '--reason', 'machine B gives up']));
    expect(aborted).toMatchObject({ status: 'paused', changed: true });
    expect(readRun(b.taskDir)).toMatchObject({
      status: 'paused',
      pendingDelegation: null,
      pause: { code: 'ORCHESTRATION_DELEGATION_ABORTED' },
    });
    expect(readRun(a.taskDir)).toMatchObject({ status: 'running', pendingDelegation: { status: 'prepared' }, pause: null });
    // Back to the same state on A, by A's own command.
    expect(jsonOf(await runOn(a, ['task', '01', 'abort', '--reason', 'machine A gives up'])).status).toBe('paused');
  }, 60_000);

  it('concurrent commands and hook events on every machine: each changes only its own files', async () => {
    // Two stages per machine (analysis, review-analysis), all machines at once; child ids name the
    // machine, so an event applied on the wrong machine would show up in that machine's receipts.
    const STAGES = 2;
    await Promise.all(
      MACHINES.map(async (name) => {
        const machine = machines.get(name)!;
        const task = async (...args: string[]) => {
          const result = jsonOf(await runOn(machine, ['task', '01', ...args]));
          if (result.status !== 'running')
            throw new Error(`machine ${name}: task ${args.join(' ')} -> ${JSON.stringify(result)}\n${machine.worker?.output()}`);
          return result;
        };
        const hook = async (phase: 'SubagentStart' | 'SubagentStop', role: string, childId: string) => {
          const run = await runOn(machine, ['hook', 'claude-code'], nativePayload('claude-code', phase, role, childId, machine.source));
          // A hook only enqueues and prints nothing (docs/hooks.md); the next task intent, applied after
          // it by the same queue, shows whether it applied.
          if (run.code !== 0 || run.stdout !== '')
            throw new Error(`machine ${name}: ${phase} -> ${run.code} ${run.stdout}${run.stderr}\n${machine.worker?.output()}`);
        };
        await task('begin-or-resume');
        for (let stage = 1; stage <= STAGES; stage += 1) {
          const next = (await task('route')).next as { role: string; stage: string; round: number; artifact: string };
          await task('prepare', '--client', 'claude-code');
          await hook('SubagentStart', next.role, `${name}-child-${stage}`);
          stageWork(machine.taskDir, machine.source, next.stage, next.artifact);
          await task(...completeStageArgs(next));
          await hook('SubagentStop', next.role, `${name}-child-${stage}`);
          await task('advance');
        }
      }),
    );
    const redisClient = new Redis(redisOptionsFromUrl(redis.url));
    try {
      const registry = await redisClient.hgetall(`${prefix}:baton:repos`);
      for (const name of MACHINES) {
        const machine = machines.get(name)!;
        const run = readRun(machine.taskDir);
        expect(run).toMatchObject({ status: 'running', stepCount: STAGES, pause: null, pendingDelegation: null });
        const consumed = run.receipts.filter((receipt) => receipt.status === 'consumed');
        expect(consumed.map((receipt) => `${receipt.stage}:${receipt.childId}`)).toEqual([
          `analysis:${name}-child-1`,
          `review-analysis:${name}-child-2`,
        ]);
        // A and B also hold the delegation aborted in the previous test, by their own command.
        expect(run.receipts.filter((receipt) => receipt.status !== 'consumed').map((receipt) => receipt.status)).toEqual(
          name === 'c' ? [] : ['aborted'],
        );
        const checkout = checkoutOf(machine);
        expect(JSON.parse(registry[checkout.id]!)).toEqual({ root: shared, host: HOST });
        // Its worker applied every job of its own queue and nothing else.
        const journal = fs.readdirSync(path.join(machine.source, '.git', 'baton', 'journal')).map((file) => file.replace(/\.json$/, ''));
        const completed = await redisClient.zrange(`${prefix}:baton-${checkout.id}:completed`, '0', '-1');
        expect(journal.sort()).toEqual(completed.sort());
        expect(machine.worker!.output()).not.toContain('BATON_CHECKOUT_MISMATCH');
      }
      expect(Object.keys(registry)).toHaveLength(MACHINES.length);
    } finally {
      redisClient.disconnect();
    }
  }, 150_000);
});
