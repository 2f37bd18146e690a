// OpenTelemetry's standard variables and W3C trace context, for the hook and the worker
// (docs/architecture.md "Traces"). Reading them is all that happens on the hook's path when tracing
// is off: no exporter, no SDK, nothing else is loaded (the hook's span writer, hooks/otlpSpan.ts,
// and the worker's SDK, workers/otel.ts, are imported only when an endpoint is set).

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Where spans go over OTLP/HTTP: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else
 * OTEL_EXPORTER_OTLP_ENDPOINT with `/v1/traces` appended (the specification's rule); null when
 * neither is set or OTEL_TRACES_EXPORTER is `none`.
 */
export function otlpTracesUrl(env: Env): string | null {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return null;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!base) return null;
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

/** A W3C `traceparent`: version 00, the trace and parent span ids, sampled. */
export function traceparent(traceId: string, spanId: string): string {
  return `00-${traceId}-${spanId}-01`;
}

export const TRACEPARENT_PATTERN = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

export function parseTraceparent(value: string | undefined): { traceId: string; spanId: string } | null {
  const match = value === undefined ? null : TRACEPARENT_PATTERN.exec(value);
  if (!match || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return null;
  return { traceId: match[1]!, spanId: match[2]! };
}

/** OTEL_EXPORTER_OTLP_HEADERS (and its _TRACES_ form): `k=v,k2=v2`, values URL-encoded. */
export function otlpHeaders(env: Env): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const list of [env.OTEL_EXPORTER_OTLP_HEADERS, env.OTEL_EXPORTER_OTLP_TRACES_HEADERS]) {
    for (const pair of (list ?? '').split(',')) {
      const at = pair.indexOf('=');
      if (at <= 0) continue;
      try {
        headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
      } catch {
        // a malformed pair is left out, as the SDK does
      }
    }
  }
  return headers;
}
