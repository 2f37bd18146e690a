import { otlpTracesUrl } from '../base/traceContext.ts';
import type { JobTracer } from './jobSpans.ts';

export type { JobTracer, SpanAttributes, SpanHandle } from './jobSpans.ts';

// The worker's spans of each job (docs/architecture.md "Traces"), as the processor and the consumer
// see them: no OpenTelemetry type here. With no OTLP endpoint in the environment, `jobTracer()` is
// null and nothing else is loaded; with one, the SDK comes in once (otel.ts, its own chunk).

let tracer: Promise<JobTracer | null> | null = null;

/** The worker's tracer, null when no endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT, …_TRACES_ENDPOINT). */
export function jobTracer(env: NodeJS.ProcessEnv = process.env): Promise<JobTracer | null> {
  tracer ??= (async () => {
    const url = otlpTracesUrl(env);
    if (url === null) return null;
    const { createJobTracer } = await import('./otel.ts');
    return createJobTracer(url, env);
  })();
  return tracer;
}

/** Exports the spans still pending, if tracing was ever started; bounded by the SDK's own timeouts. */
export async function flushJobTraces(): Promise<void> {
  const started = tracer;
  if (!started) return;
  await (await started.catch(() => null))?.shutdown().catch(() => undefined);
}
