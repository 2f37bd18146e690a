import { Queue } from 'bullmq';
import type { ConnectionOptions } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { deliver, takeBack } from '../../src/queue/deliver.ts';
import type { HookQueue } from '../../src/queue/hookTransport.ts';
import type { JobOutcome } from '../../src/queue/outcome.ts';
import type { Withdrawal } from '../../src/queue/withdraw.ts';
import { jobKey } from '../../src/queue/keys.ts';
import { createFingerprinter } from '../../src/fingerprint/index.ts';
import { redisOptionsFromUrl } from '../../src/queue/connection.ts';
import { envelopeFor } from '../../src/queue/envelope.ts';
import { queueNameFor } from '../../src/queue/keys.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { RawQueueClient, connectHookQueue, rawTargetFor, waitForResult } from '../../src/queue/hookTransport.ts';
import { RepositoryQueueClient } from '../../src/queue/client.ts';
import { spoolEvent, spooledFiles } from '../../src/queue/spool.ts';
import { startBatonWorker } from '../../src/workers/worker.ts';
import type { BatonWorker } from '../../src/workers/worker.ts';
import { TASK_ID, readRun, uniquePrefix } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';

// deliver() (src/queue/deliver.ts) over both transports: the raw RESP client a hook uses for plain
// Redis URLs, and ioredis (RepositoryQueueClient), which serves cluster and sentinel setups and is
// forced here with BATON_HOOK_TRANSPORT=ioredis. Same assertions for both.

const redisUrl = inject('redisUrl');
let redis: Redis;
beforeAll(() => {
  redis = new Redis(redisOptionsFromUrl(redisUrl));
});
afterAll(() => redis.disconnect());

let repo: GitRepo | null = null;
let worker: BatonWorker | null = null;
const savedEnv = { ...process.env };
afterEach(async () => {
  await worker?.close(2_000);
  worker = null;
  repo?.cleanup();
  repo = null;
  process.env = { ...savedEnv };
});

function setup(transport: 'raw' | 'ioredis') {
  repo = gitRepoWithTask();
  const prefix = uniquePrefix(`deliver-${transport}`);
  process.env.REDIS_URL = redisUrl;
  process.env.BATON_PREFIX = prefix;
  if (transport === 'ioredis') process.env.BATON_HOOK_TRANSPORT = 'ioredis';
  else delete process.env.BATON_HOOK_TRANSPORT;
  const identity = repoIdentity(repo.root);
  const waitList = () => redis.lrange(`${prefix}:${queueNameFor(identity.id)}:wait`, 0, -1);
  const envelope = (eventId: string, intent: 'begin-or-resume' | 'pause' = 'pause') =>
    envelopeFor(
      intent === 'pause' ? { intent, taskRef: TASK_ID, code: 'X', message: 'm', recoverable: true } : { intent, taskRef: TASK_ID },
      identity,
      'hook',
      eventId,
    );
  return { repo, prefix, config: { redisUrl, prefix }, identity, waitList, envelope };
}

describe('connectHookQueue', () => {
  it('takes the raw client for plain URLs and ioredis for anything else', async () => {
    const identity = { id: '0123456789abcdef', root: '/srv/x' };
    const raw = await connectHookQueue({ redisUrl, prefix: 'p' }, identity, 1_000);
    const viaFlag = await connectHookQueue({ redisUrl, prefix: 'p', cluster: true } as never, identity, 1_000);
    try {
      expect(raw).toBeInstanceOf(RawQueueClient);
      expect(viaFlag).toBeInstanceOf(RepositoryQueueClient);
    } finally {
      await raw.close();
      await viaFlag.close();
    }
    expect(rawTargetFor({ redisUrl: 'redis+sentinel://127.0.0.1:26379/mymaster', prefix: 'p' })).toBeNull();
    expect(rawTargetFor({ redisUrl: 'redis://127.0.0.1:6390', prefix: 'p' }, { BATON_HOOK_TRANSPORT: 'ioredis' })).toBeNull();
    expect(rawTargetFor({ redisUrl: 'redis://127.0.0.1:6390', prefix: 'p' }, {})).toMatchObject({ host: '127.0.0.1', port: 6390 });
  });
});

describe.each(['raw', 'ioredis'] as const)('deliver over %s', (transport) => {
  it('no worker: queues the event, says so, exits 0', async () => {
    const { envelope, config, waitList } = setup(transport);
    const event = envelope(`h-${transport}-alone`);
    const run = await deliver(event, { queue: config, budgetMs: 2_000 }, { waitForResult: false });
    expect(run).toEqual({
      exitCode: 0,
      stdout: '',
      stderr: `baton: no worker serves ${event.repo.root}; pause event queued as ${event.eventId} and applied when one starts: baton worker --repo ${event.repo.root}\n`,
      fate: 'queued',
    });
    expect(await waitList()).toEqual([event.eventId]);
  });

  it("no worker, withdrawUnanswered (a blocked spawn's claim): the job is withdrawn and never applied; a worker started then finds nothing", async () => {
    const { envelope, config, waitList, prefix, repo: checkout } = setup(transport);
    const event = envelope(`h-${transport}-withdrawn`);
    const run = await deliver(event, { queue: config, budgetMs: 2_000 }, { waitForResult: true, withdrawUnanswered: { graceMs: 500 } });
    expect(run).toEqual({
      exitCode: 0,
      stdout: '',
      stderr: `baton: no worker serves ${event.repo.root}, so the pause event ${event.eventId} was not applied; it was withdrawn before any worker took it: it is never applied\n`,
      fate: 'withdrawn',
    });
    expect(await waitList()).toEqual([]);
    expect(await redis.exists(jobKey(prefix, queueNameFor(event.repo.id), event.eventId))).toBe(0);
    worker = await startBatonWorker({ queue: { redisUrl, prefix }, repos: [checkout.root], createFingerprinter });
    const later = envelope(`h-${transport}-after`, 'begin-or-resume');
    expect(JSON.parse((await deliver(later, { queue: config, budgetMs: 10_000 }, { waitForResult: true })).stdout)).toMatchObject({
      status: 'running',
    });
    expect(readRun(checkout.taskDir).status).toBe('running');
  });

  it('a worker that does not answer within the budget (queue paused from the dashboard), withdrawUnanswered: withdrawn, not applied after the queue resumes', async () => {
    const { envelope, config, prefix, repo: checkout, identity } = setup(transport);
    worker = await startBatonWorker({ queue: { redisUrl, prefix }, repos: [checkout.root], createFingerprinter });
    expect(
      JSON.parse(
        (await deliver(envelope(`h-${transport}-begin`, 'begin-or-resume'), { queue: config, budgetMs: 10_000 }, { waitForResult: true }))
          .stdout,
      ),
    ).toMatchObject({ status: 'running' });
    const queue = new Queue(queueNameFor(identity.id), {
      connection: redisOptionsFromUrl(redisUrl) as ConnectionOptions,
      prefix,
      skipVersionCheck: true,
    });
    try {
      await queue.pause();
      const paused = envelope(`h-${transport}-unanswered`);
      const run = await deliver(paused, { queue: config, budgetMs: 600 }, { waitForResult: true, withdrawUnanswered: { graceMs: 200 } });
      expect(run).toMatchObject({ exitCode: 0, stdout: '', fate: 'withdrawn' });
      expect(run.stderr).toBe(
        `baton: the pause event ${paused.eventId} was not applied within the hook budget (600 ms); it was withdrawn before any worker took it: it is never applied\n`,
      );
      await queue.resume();
      const marker = envelope(`h-${transport}-marker`, 'begin-or-resume');
      expect((await deliver(marker, { queue: config, budgetMs: 10_000 }, { waitForResult: true })).fate).toBe('answered');
      expect(readRun(checkout.taskDir).status).toBe('running');
    } finally {
      await queue.close();
    }
  });

  it('drains the spool first, in order, then adds its own event', async () => {
    const { envelope, config, waitList, repo: checkout } = setup(transport);
    const first = envelope(`h-${transport}-spooled-1`);
    const second = envelope(`h-${transport}-spooled-2`);
    spoolEvent(checkout.root, first);
    spoolEvent(checkout.root, second);
    const own = envelope(`h-${transport}-own`);
    const run = await deliver(own, { queue: config, budgetMs: 2_000 }, { waitForResult: false });
    expect(run.exitCode).toBe(0);
    // BullMQ's wait list is LPUSHed: the newest job first.
    expect(await waitList()).toEqual([own.eventId, second.eventId, first.eventId]);
    expect(spooledFiles(checkout.root)).toEqual([]);
  });

  it('Redis unreachable: spools the event and says where', async () => {
    const { envelope, config, repo: checkout } = setup(transport);
    const event = envelope(`h-${transport}-down`);
    const run = await deliver(
      event,
      { queue: { ...config, redisUrl: `unix:///nonexistent-${process.pid}/redis.sock` }, budgetMs: 500 },
      { waitForResult: false },
    );
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe('');
    const files = spooledFiles(checkout.root);
    expect(files).toHaveLength(1);
    expect(files[0]).toContain(event.eventId);
    expect(run.stderr).toMatch(
      new RegExp(
        `^baton: Redis unreachable \\(.+\\); pause event spooled to .*${event.eventId}\\.json; it is applied, in order, once Redis and a worker are back\\n$`,
      ),
    );
    // The raw client names the server and the system's reason.
    if (transport === 'raw')
      expect(run.stderr).toContain(`(cannot connect to Redis at unix:///nonexistent-${process.pid}/redis.sock: connect ENOENT`);
  });

  it('with a worker: waitForResult prints the applied result; without it, returns once queued and the worker applies it', async () => {
    const { envelope, config, prefix, repo: checkout, identity } = setup(transport);
    worker = await startBatonWorker({ queue: { redisUrl, prefix }, repos: [checkout.root], createFingerprinter });
    const begun = await deliver(
      envelope(`h-${transport}-begin`, 'begin-or-resume'),
      { queue: config, budgetMs: 10_000 },
      { waitForResult: true },
    );
    expect(begun.exitCode).toBe(0);
    expect(begun.stderr).toBe('');
    expect(JSON.parse(begun.stdout)).toMatchObject({ status: 'running', taskId: TASK_ID });

    const paused = envelope(`h-${transport}-pause`);
    const queued = await deliver(paused, { queue: config, budgetMs: 10_000 }, { waitForResult: false });
    expect(queued).toEqual({ exitCode: 0, stdout: '', stderr: '', fate: 'queued' });
    const outcome = await waitForResult({ redisUrl, prefix }, identity, paused.eventId, 10_000);
    expect(outcome).toMatchObject({ kind: 'completed', value: { status: 'paused' } });
    expect(readRun(checkout.taskDir).status).toBe('paused');
  });
});

describe('deliver against a server that accepts connections and never answers', () => {
  it('spools the event once the budget is spent instead of holding the agent', async () => {
    const net = await import('node:net');
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-mute-'));
    const socket = path.join(dir, 'mute.sock');
    const received: Buffer[] = [];
    const server = net.createServer((connection) => connection.on('data', (chunk) => received.push(chunk)));
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      const { envelope, config, repo: checkout } = setup('raw');
      const event = envelope('h-mute');
      const run = await deliver(event, { queue: { ...config, redisUrl: `unix://${socket}` }, budgetMs: 300 }, { waitForResult: false });
      expect(run.exitCode).toBe(0);
      expect(run.stderr).toContain(
        'baton: Redis unreachable (Redis did not answer within the hook budget (300 ms)); pause event spooled to ',
      );
      expect(spooledFiles(checkout.root)).toHaveLength(1);
      // It did talk RESP to the server: the pipeline that adds the job.
      expect(Buffer.concat(received).toString()).toContain('EVALSHA');
    } finally {
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('takeBack: what giving up on an unanswered event finds', () => {
  const envelope = envelopeFor({ intent: 'advance', taskRef: TASK_ID }, { id: '0123456789abcdef', root: '/srv/x' }, 'hook', 'h-taken');
  const result = { status: 'running', changed: true, taskId: TASK_ID, run: null, next: null, error: null } as const;
  /** A queue whose withdrawal finds `withdrawal` and whose wait ends with `late`. */
  const queueFinding = (withdrawal: Withdrawal, late: JobOutcome): HookQueue & { waited: number[] } => {
    const waited: number[] = [];
    return {
      waited,
      enqueue: async () => undefined,
      workerAvailable: async () => true,
      waitFor: async (_id, timeoutMs) => {
        waited.push(timeoutMs);
        return late;
      },
      withdraw: async () => withdrawal,
      close: async () => undefined,
    };
  };

  it('a worker took it at that moment and answers within the grace: the answer counts', async () => {
    const queue = queueFinding({ kind: 'taken' }, { kind: 'completed', value: result });
    expect(await takeBack(queue, envelope, 'why', 700)).toEqual({
      exitCode: 0,
      stdout: `${JSON.stringify(result)}\n`,
      stderr: '',
      fate: 'answered',
    });
    expect(queue.waited).toEqual([700]);
  });

  it('a worker took it and does not answer within the grace: it may still be applied, and the caller is told', async () => {
    expect(await takeBack(queueFinding({ kind: 'taken' }, { kind: 'timeout' }), envelope, 'why', 700)).toEqual({
      exitCode: 0,
      stdout: '',
      stderr: 'baton: why; a worker took it at that moment and gave no result within 700 ms more: it may still be applied\n',
      fate: 'queued',
    });
  });

  it('it finished meanwhile: its outcome; gone from the queue: unknown, so it may have been applied', async () => {
    const finished = await takeBack(
      queueFinding({ kind: 'finished', outcome: { kind: 'failed', reason: 'boom' } }, { kind: 'timeout' }),
      envelope,
      'why',
      700,
    );
    expect(finished).toEqual({ exitCode: 1, stdout: '', stderr: 'baton: the worker could not apply h-taken: boom\n', fate: 'answered' });
    expect((await takeBack(queueFinding({ kind: 'missing' }, { kind: 'timeout' }), envelope, 'why', 700)).fate).toBe('queued');
  });
});
