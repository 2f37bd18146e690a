import http from 'node:http';
import { randomHex } from '../base/digest.ts';
import { otlpHeaders, traceparent } from '../base/traceContext.ts';

// The hook's span, written as OTLP/JSON by hand (docs/architecture.md "Traces"). The hook starts
// for every agent event and must stay near the runtime's start-up (docs/hooks.md "Transport and
// cost"); the OpenTelemetry SDK with its OTLP/HTTP exporter is ~90 KB of bundle to load before the
// first span (the worker's chunk: 17 ms to import in a fresh Node against 8 ms for this module with
// node:http, medians of 15 at load ~9), for one span per process. So the hook builds its one span
// and POSTs it once, in the specification's OTLP/JSON encoding (hex ids, nanosecond times as
// strings), within a small part of its budget, and never fails the event for it. This module is
// imported only when an endpoint is set (src/base/traceContext.ts); the worker uses the SDK
// (src/workers/otel.ts).

export type HookSpan = Readonly<{ traceId: string; spanId: string; startMs: number; traceparent: string }>;

/** A new trace whose root span started with this process (performance.timeOrigin). */
export function startHookSpan(): HookSpan {
  const traceId = randomHex(16);
  const spanId = randomHex(8);
  return { traceId, spanId, startMs: performance.timeOrigin, traceparent: traceparent(traceId, spanId) };
}

type AttributeValue = string | number | boolean;

type OtlpValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };

function otlpValue(value: AttributeValue): OtlpValue {
  if (typeof value === 'number') return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  return typeof value === 'boolean' ? { boolValue: value } : { stringValue: value };
}

function attributes(values: Readonly<Record<string, AttributeValue | null | undefined>>): Array<{ key: string; value: OtlpValue }> {
  return Object.entries(values).flatMap(([key, value]) =>
    value === null || value === undefined ? [] : [{ key, value: otlpValue(value) }],
  );
}

function nanos(ms: number): string {
  return (BigInt(Math.round(ms * 1000)) * 1000n).toString();
}

/** The OTLP/JSON request body of the hook's one span (kind PRODUCER: it puts the event on the queue). */
export function hookSpanRequest(
  span: HookSpan,
  end: { name: string; endMs: number; ok: boolean; message?: string },
  values: Readonly<Record<string, AttributeValue | null | undefined>>,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: attributes({ 'service.name': env.OTEL_SERVICE_NAME || 'baton', 'process.pid': process.pid }) },
        scopeSpans: [
          {
            scope: { name: 'baton.hook' },
            spans: [
              {
                traceId: span.traceId,
                spanId: span.spanId,
                name: end.name,
                kind: 4,
                startTimeUnixNano: nanos(span.startMs),
                endTimeUnixNano: nanos(end.endMs),
                attributes: attributes(values),
                status: end.ok ? { code: 1 } : { code: 2, message: end.message ?? '' },
              },
            ],
          },
        ],
      },
    ],
  });
}

/** POSTs the body to the endpoint; resolves (never rejects) when answered, failed or after `timeoutMs`. */
export async function postSpans(
  url: string,
  body: string,
  timeoutMs: number,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<string | null> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return `not a URL: ${url}`;
  }
  // node:https loads TLS and crypto (~10 ms): only for an https endpoint.
  const transport: Pick<typeof http, 'request'> = target.protocol === 'https:' ? await import('node:https') : http;
  return new Promise((resolve) => {
    const request = transport.request(
      target,
      {
        method: 'POST',
        headers: { ...otlpHeaders(env), 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        timeout: timeoutMs,
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode && response.statusCode < 300 ? null : `HTTP ${response.statusCode}`));
      },
    );
    request.on('timeout', () => {
      request.destroy();
      resolve(`no answer within ${timeoutMs} ms`);
    });
    request.on('error', (error) => resolve(error.message));
    request.end(body);
  });
}
