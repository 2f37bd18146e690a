// The shapes of the worker's spans of a job (docs/architecture.md "Traces"), without an
// OpenTelemetry type: what the processor and the consumer use (jobTrace.ts), and what the SDK's
// side (otel.ts) implements.

export type SpanAttributes = Readonly<Record<string, string | number | boolean | null | undefined>>;

export type SpanHandle = {
  /** A span under this one, started now. */
  child(name: string, attributes?: SpanAttributes): SpanHandle;
  set(attributes: SpanAttributes): void;
  rename(name: string): void;
  end(error?: unknown): void;
};

export type JobTracer = {
  /**
   * The spans of one job: `baton.fetch` (in the queue: added → taken) and the returned `baton.apply`
   * span, started now, both children of the caller's span when the envelope carries its traceparent.
   */
  job(
    trace: string | undefined,
    attributes: SpanAttributes,
    queued: Readonly<{ addedAt: number; takenAt: number | undefined }>,
  ): SpanHandle;
  /** Exports what is pending (at the worker's stop). */
  shutdown(): Promise<void>;
};
