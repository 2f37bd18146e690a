import { ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import type { Context, Span } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { batonVersion } from '../base/batonPackage.ts';
import { parseTraceparent } from '../base/traceContext.ts';
import type { JobTracer, SpanAttributes, SpanHandle } from './jobSpans.ts';

// The worker's spans through the OpenTelemetry SDK (docs/architecture.md "Traces"): a tracer
// provider with a batch processor and the OTLP/HTTP exporter (JSON), which reads the standard
// variables itself (headers, timeouts, OTEL_BSP_*). Loaded only when an endpoint is set (jobTrace.ts).

function clean(attributes: SpanAttributes): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== null && value !== undefined) out[key] = value;
  return out;
}

function handle(span: Span, tracerOf: () => ReturnType<TracerProvider['getTracer']>): SpanHandle {
  return {
    child(name, attributes = {}) {
      const context = trace.setSpan(ROOT_CONTEXT, span);
      return handle(tracerOf().startSpan(name, { kind: SpanKind.INTERNAL, attributes: clean(attributes) }, context), tracerOf);
    },
    set(attributes) {
      span.setAttributes(clean(attributes));
    },
    rename(name) {
      span.updateName(name);
    },
    end(error) {
      if (error !== undefined) {
        span.recordException(error instanceof Error ? error : String(error));
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      }
      span.end();
    },
  };
}

export function createJobTracer(url: string, env: NodeJS.ProcessEnv): JobTracer {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || 'baton', 'service.version': batonVersion() }),
    // OTEL_BSP_SCHEDULE_DELAY as the specification names it (this SDK's processor reads no variable itself).
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url }),
        scheduledDelayMillis: Number(env.OTEL_BSP_SCHEDULE_DELAY) || 5_000,
      }),
    ],
  });
  const tracer = provider.getTracer('baton.worker', batonVersion());
  const tracerOf = () => tracer;
  return {
    job(traceparent, attributes, queued) {
      const parent = parseTraceparent(traceparent);
      const context: Context = parent
        ? trace.setSpanContext(ROOT_CONTEXT, {
            traceId: parent.traceId,
            spanId: parent.spanId,
            traceFlags: TraceFlags.SAMPLED,
            isRemote: true,
          })
        : ROOT_CONTEXT;
      const base = clean(attributes);
      // Without the caller's span, the job's own spans make a trace of their own.
      const apply = tracer.startSpan(
        `baton.apply ${String(attributes['baton.intent'] ?? '')}`.trim(),
        { kind: SpanKind.CONSUMER, attributes: base },
        context,
      );
      const fetchParent = parent ? context : trace.setSpan(ROOT_CONTEXT, apply);
      if (queued.takenAt !== undefined) {
        tracer
          .startSpan('baton.fetch', { kind: SpanKind.CONSUMER, startTime: queued.addedAt, attributes: base }, fetchParent)
          .end(queued.takenAt);
      }
      return handle(apply, tracerOf);
    },
    shutdown: () => provider.shutdown(),
  };
}
