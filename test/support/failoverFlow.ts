import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { RepositoryQueueClient } from '../../src/queue/client.ts';
import { envelopeFor, repoIdentity } from '../../src/queue/envelope.ts';
import { batonDir as batonStateDir } from '../../src/core/batonDir.ts';
import { TASK_ID, readRun } from './fixtures.ts';

// Events flowing while Redis fails over (a Cluster master or a Sentinel-managed master stops and its
// replica takes over): a producer adds `count` pause events one after the other through baton's own
// queue client, re-adding an event whose add failed (same event id, as a hook's spool drain does),
// while `failOver` runs after the `failAt`-th event. Then, from the worker's journal:
//   nothing lost      every event has a record, the last event's code is the run's;
//   never twice       one record per event, and each event's run-file write starts from the content
//                     the previous event wrote (a second application would break the chain);
//   order kept        that chain runs 1, 2, …, count.

export type FailoverFlow = Readonly<{
  redisUrl: string;
  prefix: string;
  root: string;
  taskDir: string;
  failOver: () => Promise<unknown>;
  count?: number;
  failAt?: number;
  log?: (line: string) => void;
}>;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export type FailoverReport = { count: number; retries: number; addedDuringFailover: number; addedAfterFailover: number };

export async function eventsThroughFailover(flow: FailoverFlow): Promise<FailoverReport> {
  // At least `count` events; more while the failover is under way, and 5 after it completed.
  let count = flow.count ?? 20;
  const failAt = flow.failAt ?? 8;
  const identity = repoIdentity(flow.root);
  const config = { redisUrl: flow.redisUrl, prefix: flow.prefix };
  const before = fs.readFileSync(path.join(flow.taskDir, 'orchestration.json'), 'utf8');
  let client: RepositoryQueueClient | null = null;
  let retries = 0;
  let failover: Promise<unknown> | null = null;
  let failoverDone = false;
  let addedDuringFailover = 0;
  let addedAfterFailover = 0;
  const eventId = (index: number) => `c-seq-${index}`;
  for (let index = 1; index <= count; index += 1) {
    const envelope = envelopeFor(
      { intent: 'pause', taskRef: TASK_ID, code: `SEQ_${index}`, message: `event ${index}`, recoverable: true },
      identity,
      'cli',
      eventId(index),
    );
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
        if (attempt > 150) throw new Error(`event ${index} could not be added: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    if (failover && !failoverDone) addedDuringFailover += 1;
    if (failoverDone) addedAfterFailover += 1;
    if (index === failAt) {
      failover = flow.failOver().finally(() => {
        failoverDone = true;
      });
    }
    if (index === count && failover && (!failoverDone || addedAfterFailover < 5)) count += 1;
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  await failover;
  await client?.close();
  // Every event is applied (the last one decides the run's pause code).
  await expect.poll(() => readRun(flow.taskDir).pause?.code, { timeout: 30_000, interval: 100 }).toBe(`SEQ_${count}`);

  const journal = path.join(batonStateDir(flow.root), 'journal');
  const records = fs
    .readdirSync(journal)
    .filter((name) => name.startsWith('c-seq-'))
    .map((name) => JSON.parse(fs.readFileSync(path.join(journal, name), 'utf8')) as { eventId: string; state: string; writes: { content: string; beforeSha256: string | null }[] });
  expect(records.map((record) => record.eventId).sort()).toEqual(Array.from({ length: count }, (_, index) => eventId(index + 1)).sort());
  expect(records.every((record) => record.state === 'done' && record.writes.length === 1)).toBe(true);
  const byId = new Map(records.map((record) => [record.eventId, record]));
  let previous = before;
  for (let index = 1; index <= count; index += 1) {
    const write = byId.get(eventId(index))!.writes[0]!;
    expect(write.beforeSha256, `event ${index} was applied on top of event ${index - 1}`).toBe(sha256(previous));
    expect(JSON.parse(write.content).pause.code).toBe(`SEQ_${index}`);
    previous = write.content;
  }
  expect(fs.readFileSync(path.join(flow.taskDir, 'orchestration.json'), 'utf8')).toBe(previous);
  return { count, retries, addedDuringFailover, addedAfterFailover };
}
