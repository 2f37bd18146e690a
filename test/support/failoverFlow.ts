import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { RepositoryQueueClient } from '../../src/queue/client.ts';
import { envelopeFor } from '../../src/queue/envelope.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { batonDir as batonStateDir } from '../../src/base/batonDir.ts';
import { TASK_ID, readRun } from './fixtures.ts';

// Events flowing while Redis fails over (a Cluster master or a Sentinel-managed master stops and its
// replica takes over): a producer adds pause events one after the other through baton's own queue
// client, re-adding an event whose add failed (same event id, as a hook's spool drain does). After
// the `failAt`-th event it stops the master, and the very next add is sent at once, while the master
// is down and before any promotion can have been observed: the failover window always holds at
// least one event, by construction rather than by timing (docs/architecture.md "Testing"). It keeps
// adding until the promotion is observed, then 5 more. Then, from the worker's journal:
//   nothing lost      every event has a record, the last event's code is the run's;
//   never twice       one record per event, and each event's run-file write starts from the content
//                     the previous event wrote (a second application would break the chain);
//   order kept        that chain runs 1, 2, …, count.

export type FailoverFlow = Readonly<{
  redisUrl: string;
  prefix: string;
  root: string;
  taskDir: string;
  /** Stops the master (resolves once it is down) and returns its port. */
  stopMaster: () => Promise<number>;
  /** Resolves with the promoted master's port once the promotion is observed. */
  promotedAfter: (stopped: number) => Promise<number>;
  count?: number;
  failAt?: number;
  log?: (line: string) => void;
}>;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export type FailoverReport = {
  count: number;
  retries: number;
  /** Events whose add was sent after the master stopped and before the promotion was observed. */
  sentDuringFailover: number;
  /** Events whose add was sent after the promotion was observed. */
  sentAfterFailover: number;
  stopped: number;
  promoted: number;
};

export async function eventsThroughFailover(flow: FailoverFlow): Promise<FailoverReport> {
  // At least `count` events; more while the failover is under way, and 5 after it completed.
  let count = flow.count ?? 20;
  const failAt = flow.failAt ?? 8;
  const identity = repoIdentity(flow.root);
  const config = { redisUrl: flow.redisUrl, prefix: flow.prefix };
  const before = fs.readFileSync(path.join(flow.taskDir, 'orchestration.json'), 'utf8');
  let client: RepositoryQueueClient | null = null;
  let retries = 0;
  // Changed by the promotion watcher as well as by the loop.
  const failover: { phase: 'before' | 'failing-over' | 'promoted'; stopped: number; promoted: number; error: unknown } = {
    phase: 'before',
    stopped: 0,
    promoted: 0,
    error: null,
  };
  let promotion: Promise<void> | null = null;
  let sentDuringFailover = 0;
  let sentAfterFailover = 0;
  const eventId = (index: number) => `c-seq-${index}`;
  for (let index = 1; index <= count; index += 1) {
    const envelope = envelopeFor(
      { intent: 'pause', taskRef: TASK_ID, code: `SEQ_${index}`, message: `event ${index}`, recoverable: true },
      identity,
      'cli',
      eventId(index),
    );
    // Where the failover stands when this add is sent (not when it returns: an add sent while the
    // master is down may only complete once the replica has taken over).
    if (failover.error) throw failover.error;
    if (failover.phase === 'failing-over') sentDuringFailover += 1;
    if (failover.phase === 'promoted') sentAfterFailover += 1;
    for (let attempt = 0; ; attempt += 1) {
      try {
        client ??= await RepositoryQueueClient.connect(config, identity, 2_000);
        await client.enqueue(envelope);
        break;
      } catch (error) {
        retries += 1;
        flow.log?.(`event ${index}: add failed (${(error as Error).message}); adding it again`);
        await client?.close().catch(() => undefined);
        client = null;
        if (attempt > 300) throw new Error(`event ${index} could not be added: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    if (index === failAt) {
      failover.stopped = await flow.stopMaster();
      failover.phase = 'failing-over';
      promotion = flow.promotedAfter(failover.stopped).then(
        (port) => {
          failover.promoted = port;
          failover.phase = 'promoted';
        },
        (error: unknown) => {
          failover.error = error;
        },
      );
      // No pause here: the next add is sent while the master is down and the promotion unobserved.
      if (index === count) count += 1;
      continue;
    }
    if (index === count && (failover.phase !== 'promoted' || sentAfterFailover < 5)) count += 1;
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  await promotion;
  if (failover.error) throw failover.error;
  await client?.close();
  // Every event is applied (the last one decides the run's pause code).
  await expect.poll(() => readRun(flow.taskDir).pause?.code, { timeout: 60_000, interval: 100 }).toBe(`SEQ_${count}`);

  const journal = path.join(batonStateDir(flow.root), 'journal');
  type JournalEntry = { eventId: string; state: string; writes: { content: string; beforeSha256: string | null }[] };
  const readRecords = (): JournalEntry[] =>
    fs
      .readdirSync(journal)
      .filter((name) => name.startsWith('c-seq-'))
      .map((name) => JSON.parse(fs.readFileSync(path.join(journal, name), 'utf8')) as JournalEntry);
  // The worker writes the run file and then marks the event's record done: the run file showing the
  // last event does not prove the mark is in yet. Wait for the marks (a record left pending fails here).
  await expect
    .poll(
      () =>
        readRecords()
          .filter((record) => record.state !== 'done')
          .map((record) => record.eventId),
      { timeout: 10_000, interval: 50 },
    )
    .toEqual([]);
  const records = readRecords();
  expect(records.map((record) => record.eventId).sort()).toEqual(Array.from({ length: count }, (_, index) => eventId(index + 1)).sort());
  expect(records.filter((record) => record.writes.length !== 1).map((record) => record.eventId)).toEqual([]);
  const byId = new Map(records.map((record) => [record.eventId, record]));
  let previous = before;
  for (let index = 1; index <= count; index += 1) {
    const write = byId.get(eventId(index))!.writes[0]!;
    expect(write.beforeSha256, `event ${index} was applied on top of event ${index - 1}`).toBe(sha256(previous));
    expect(JSON.parse(write.content).pause.code).toBe(`SEQ_${index}`);
    previous = write.content;
  }
  expect(fs.readFileSync(path.join(flow.taskDir, 'orchestration.json'), 'utf8')).toBe(previous);
  return { count, retries, sentDuringFailover, sentAfterFailover, stopped: failover.stopped, promoted: failover.promoted };
}

/**
 * eventsThroughFailover, with `worker`'s output added to any error it throws, and what every
 * failover has to show: another master promoted, and events sent both during the failover (by
 * construction, not by luck of timing) and after it.
 */
export async function failoverWithEvents(flow: FailoverFlow, worker: { output(): string }): Promise<FailoverReport> {
  const report = await eventsThroughFailover(flow).catch((error) => {
    throw new Error(`${(error as Error).message}\nworker output:\n${worker.output()}`);
  });
  expect(report.promoted).not.toBe(report.stopped);
  expect(report.sentDuringFailover).toBeGreaterThan(0);
  expect(report.sentAfterFailover).toBeGreaterThanOrEqual(5);
  return report;
}
