import { describe, expect, it } from 'vitest';
import { otlpHeaders, otlpTracesUrl, parseTraceparent, traceparent } from '../../src/base/traceContext.ts';

// The standard OpenTelemetry variables as the hook and the worker read them (docs/architecture.md "Traces").

describe('otlpTracesUrl', () => {
  it('the traces endpoint as given, else the base endpoint with /v1/traces; none, or turned off, is null', () => {
    expect(otlpTracesUrl({})).toBeNull();
    expect(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe('http://collector:4318/v1/traces');
    expect(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toBe('http://collector:4318/v1/traces');
    expect(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b/traces' })).toBe(
      'http://b/traces',
    );
    expect(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeNull();
    expect(otlpTracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_SDK_DISABLED: 'true' })).toBeNull();
  });
});

describe('parseTraceparent', () => {
  it('reads what traceparent writes; refuses other versions and all-zero ids', () => {
    const [trace, span] = ['0af7651916cd43dd8448eb211c80319c', 'b7ad6b7169203331'];
    expect(parseTraceparent(traceparent(trace, span))).toEqual({ traceId: trace, spanId: span });
    expect(parseTraceparent(`01-${trace}-${span}-01`)).toBeNull();
    expect(parseTraceparent(`00-${'0'.repeat(32)}-${span}-01`)).toBeNull();
    expect(parseTraceparent(undefined)).toBeNull();
  });
});

describe('otlpHeaders', () => {
  it('k=v pairs of both variables, URL-decoded; malformed pairs left out', () => {
    expect(
      otlpHeaders({ OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20x, bad ,k=v', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-t=1' }),
    ).toEqual({
      authorization: 'Bearer x',
      k: 'v',
      'x-t': '1',
    });
  });
});
