import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { TASK_ID } from '../support/fixtures.ts';
import { EXAMPLE_USAGE_DIR } from '../support/fixturePaths.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { jsonOf, runBaton } from '../support/processes.ts';
import { useWorkerHarness } from '../support/workerHarness.ts';

// OpenTelemetry traces (docs/architecture.md "Traces"): with OTEL_EXPORTER_OTLP_ENDPOINT set, a hook
// event is one trace from the hook process (its span, written by the hook itself) to the worker's
// spans (fetch, apply or seal, the usage record and the fingerprints), exported over OTLP/HTTP to an
// in-process receiver here, with the task, stage and checkout as attributes.

type Span = {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
};

const harness = useWorkerHarness();
const receivers: http.Server[] = [];
afterEach(async () => {
  for (const server of receivers.splice(0)) await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** An OTLP/HTTP receiver (JSON) on a free port: every span it was sent, and who sent it. */
async function otlpReceiver(): Promise<{ url: string; spans: Array<Span & { service: string }>; paths: string[] }> {
  const spans: Array<Span & { service: string }> = [];
  const paths: string[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      paths.push(`${request.method} ${request.url} ${request.headers['content-type']}`);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const resource of body.resourceSpans ?? []) {
        const service = resource.resource?.attributes?.find((entry: any) => entry.key === 'service.name')?.value?.stringValue;
        for (const scope of resource.scopeSpans ?? []) for (const span of scope.spans ?? []) spans.push({ ...span, service });
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  receivers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, paths };
}

function attribute(span: Span, key: string): unknown {
  const value = span.attributes.find((entry) => entry.key === key)?.value;
  return value === undefined
    ? undefined
    : (value.stringValue ?? (value.intValue === undefined ? (value.boolValue ?? value.doubleValue) : Number(value.intValue)));
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('OTLP traces of baton hook and baton worker', () => {
  it('one trace per hook event: the hook span, then the worker’s fetch and apply (seal) spans under it, with task, stage and checkout', async () => {
    const receiver = await otlpReceiver();
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_SERVICE_NAME: 'baton-test' };
    const { repo, env } = await harness.serve('traces', { env: { ...otel, BATON_HOOK_BUDGET_MS: '8000' } });
    const checkout = repoIdentity(repo.root).id;
    const task = async (...args: string[]) => jsonOf(await runBaton(['task', TASK_ID, ...args], { env, cwd: repo.root }));
    expect((await task('begin-or-resume')).status).toBe('running');
    expect((await task('prepare', '--client', 'claude-code')).run.pendingDelegation.stage).toBe('analysis');
    const hook = (phase: 'SubagentStart' | 'SubagentStop', extra: Record<string, unknown> = {}) =>
      runBaton(['hook', 'claude-code'], {
        env: { ...env, BATON_HOOK_VERBOSE: '1' },
        cwd: repo.root,
        input: JSON.stringify({ ...JSON.parse(nativePayload('claude-code', phase, 'executor', 'child-1', repo.root)), ...extra }),
      });

    const started = await hook('SubagentStart');
    expect(started.code, started.stderr).toBe(0);
    const start = await until('the hook span of SubagentStart', () => receiver.spans.find((span) => span.name === 'baton.hook hook-start'));
    expect(start).toMatchObject({ kind: 4, service: 'baton-test' });
    expect(start.parentSpanId ?? '').toBe('');
    expect(attribute(start, 'baton.checkout')).toBe(checkout);
    expect(attribute(start, 'baton.task')).toBe(TASK_ID);
    expect(attribute(start, 'baton.stage')).toBe('analysis');
    expect(attribute(start, 'baton.client')).toBe('claude-code');
    // The hook's span starts with its process: before the worker took the job.
    const ofStart = () => receiver.spans.filter((span) => span.traceId === start.traceId && span !== start);
    const [fetch, apply] = await until('the worker spans of SubagentStart', () => {
      const fetched = ofStart().find((span) => span.name === 'baton.fetch');
      const applied = ofStart().find((span) => span.name === 'baton.apply hook-start');
      return fetched && applied ? [fetched, applied] : undefined;
    });
    for (const span of [fetch, apply]) {
      expect(span.parentSpanId).toBe(start.spanId);
      expect(attribute(span, 'baton.checkout')).toBe(checkout);
      expect(attribute(span, 'baton.intent')).toBe('hook-start');
    }
    expect(BigInt(fetch.startTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(start.startTimeUnixNano));
    expect(BigInt(apply.startTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(fetch.endTimeUnixNano) - 1_000_000n);
    expect(attribute(apply, 'baton.task')).toBe(TASK_ID);
    expect(attribute(apply, 'baton.stage')).toBe('analysis');
    expect(attribute(apply, 'baton.receipt.status')).toBe('activated');

    // The stop: the worker reads the child's record and seals (baton.seal, its usage record and fingerprints under it).
    const transcript = path.join(EXAMPLE_USAGE_DIR, 'claude-code-2.1.337', 'subagent-transcript.jsonl');
    fs.writeFileSync(path.join(repo.taskDir, 'analysis.md'), '# Analysis\n\nDone.\n');
    expect(
      (await task('complete-stage', '--stage', 'analysis', '--round', '1', '--artifact', 'analysis.md', '--agent', 'claude')).status,
    ).toBe('running');
    const stopped = await hook('SubagentStop', { agent_transcript_path: transcript });
    expect(stopped.code, stopped.stderr).toBe(0);
    const stop = await until('the hook span of SubagentStop', () => receiver.spans.find((span) => span.name === 'baton.hook hook-stop'));
    const seal = await until('the seal span', () =>
      receiver.spans.find((span) => span.traceId === stop.traceId && span.name === 'baton.seal'),
    );
    expect(seal.parentSpanId).toBe(stop.spanId);
    expect(attribute(seal, 'baton.receipt.status')).toBe('sealed');
    expect(attribute(seal, 'baton.stage')).toBe('analysis');
    const children = await until('the seal’s children', () => {
      const found = receiver.spans.filter((span) => span.parentSpanId === seal.spanId).map((span) => span.name);
      return found.length >= 3 ? found.sort() : undefined;
    });
    expect(children).toEqual(['baton.fingerprint.capture', 'baton.fingerprint.diff', 'baton.usage_record']);
    const record = receiver.spans.find((span) => span.parentSpanId === seal.spanId && span.name === 'baton.usage_record')!;
    expect(attribute(record, 'baton.usage_record.requests')).toBe(2);
    // Both sides post OTLP/JSON to the traces path.
    expect(new Set(receiver.paths)).toEqual(new Set(['POST /v1/traces application/json']));
  });
});
