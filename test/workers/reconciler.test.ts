import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyEventNow } from '../../src/core/engine.ts';
import { parseEnvelope } from '../../src/queue/envelopeSchema.ts';
import { EVENT_ID_PATTERN } from '../../src/queue/eventIds.ts';
import { readEndpoint, recordEndpoint } from '../../src/queue/endpoint.ts';
import { duration } from '../../src/cli/options.ts';
import { DEFAULT_GRACES, dueReconcileJobs, reconcileEventId, scanForReconciliation, scanIntervalMs } from '../../src/workers/reconciler.ts';
import type { JobEnvelope } from '../../src/queue/envelope.ts';
import { TASK_ID, fakeFingerprinter, readRun, tempRepo, writeTask } from '../support/fixtures.ts';
import type { Fixture } from '../support/fixtures.ts';

// The worker's side of reconciliation (docs/architecture.md "Reconciliation"): which jobs a scan
// queues and when, their ids, how often it looks, and the graces as the CLI reads and records them.

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
let fixture: Fixture;

beforeEach(() => {
  fixture = tempRepo();
  writeTask(fixture);
});
afterEach(() => fixture.cleanup());

async function prepareAt(ms: number): Promise<void> {
  const deps = { repoRoot: fixture.root, fingerprinter: fakeFingerprinter(), now: () => new Date(ms).toISOString() };
  await applyEventNow({ intent: 'begin-or-resume', taskRef: TASK_ID }, deps);
  expect((await applyEventNow({ intent: 'prepare', taskRef: TASK_ID, client: 'claude-code' }, deps)).error).toBeNull();
}

const repository = () => ({ id: '0123456789abcdef', root: fixture.root });

describe('scanForReconciliation', () => {
  it('queues nothing before the grace, then one reconcile job whose envelope a worker accepts', async () => {
    await prepareAt(T0);
    expect(dueReconcileJobs(repository(), DEFAULT_GRACES, T0 + DEFAULT_GRACES.spawnGraceMs - 1).envelopes).toEqual([]);
    const { envelopes } = dueReconcileJobs(repository(), DEFAULT_GRACES, T0 + DEFAULT_GRACES.spawnGraceMs);
    expect(envelopes).toHaveLength(1);
    const receipt = readRun(fixture.taskDir()).pendingDelegation!;
    const parsed = parseEnvelope(envelopes[0]);
    expect(parsed.ok && parsed.event).toEqual({
      intent: 'reconcile',
      taskRef: TASK_ID,
      receiptId: receipt.id,
      kind: 'not-started',
      since: receipt.createdAt,
      graceMs: DEFAULT_GRACES.spawnGraceMs,
    });
    expect(envelopes[0]).toMatchObject({ source: 'worker', eventId: reconcileEventId(receipt.id, 'not-started', receipt.createdAt) });
  });

  it('the same receipt and clock give the same job id whatever the grace or the worker; ids are valid BullMQ ids', () => {
    const id = reconcileEventId('receipt-1', 'sealed', '2026-01-01T00:03:00.000Z');
    expect(id).toMatch(EVENT_ID_PATTERN);
    expect(id).not.toContain(':');
    expect(reconcileEventId('receipt-1', 'sealed', '2026-01-01T00:03:00.000Z')).toBe(id);
    expect(reconcileEventId('receipt-1', 'sealed', '2026-01-01T00:04:00.000Z')).not.toBe(id);
    expect(reconcileEventId('receipt-1', 'stalled', '2026-01-01T00:03:00.000Z')).not.toBe(id);
  });

  it('goes over every served checkout; one that is gone does not stop the scan', async () => {
    await prepareAt(T0);
    const queued: JobEnvelope[] = [];
    const count = await scanForReconciliation({
      graces: DEFAULT_GRACES,
      served: () => [{ id: 'fedcba9876543210', root: '/nonexistent/checkout' }, repository()],
      enqueue: async (_repository, envelope) => void queued.push(envelope),
      log: () => undefined,
      now: () => T0 + DEFAULT_GRACES.spawnGraceMs,
    });
    expect(count).toBe(1);
    expect(queued.map((envelope) => envelope.intent)).toEqual(['reconcile']);
  });

  it('looks a quarter of the shorter grace apart, between 250 ms and 30 s', () => {
    expect(scanIntervalMs(DEFAULT_GRACES)).toBe(30_000);
    expect(scanIntervalMs({ stopGraceMs: 2_000, spawnGraceMs: 60_000 })).toBe(500);
    expect(scanIntervalMs({ stopGraceMs: 100, spawnGraceMs: 100 })).toBe(250);
  });
});

describe('graces on the command line and in the endpoint record', () => {
  it('reads durations as people write them; the defaults are those of --help', () => {
    expect(duration('90s')).toBe(90_000);
    expect(duration('10m')).toBe(DEFAULT_GRACES.stopGraceMs);
    expect(duration('5m')).toBe(DEFAULT_GRACES.spawnGraceMs);
    expect(duration('1.5h')).toBe(5_400_000);
    expect(duration('250')).toBe(250);
    for (const bad of ['', 'soon', '-5m', '0', '10 parsecs'])
      expect(() => duration(bad), bad).toThrow('must be a duration such as 90s, 10m or 1h');
  });

  it('a worker records its graces with its endpoint, for baton runs and the run page', () => {
    recordEndpoint(fixture.root, { redisUrl: 'redis://127.0.0.1:1', prefix: 'p' }, new Date(T0), {
      stopGraceMs: 120_000,
      spawnGraceMs: 60_000,
    });
    expect(readEndpoint(fixture.root)?.graces).toEqual({ stopGraceMs: 120_000, spawnGraceMs: 60_000 });
    recordEndpoint(fixture.root, { redisUrl: 'redis://127.0.0.1:1', prefix: 'p' }, new Date(T0));
    expect(readEndpoint(fixture.root)?.graces).toBeUndefined();
  });
});
