import fs from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

// A trace for the bench and the tests: with BATON_TRACE_FILE=<file> the worker appends one JSON
// line per step of a checkout's first event (the watch woke it, its consumer opened, the job was
// fetched, applied), each with the wall-clock time, plus the event loop's delay once a second, so
// the bench (bench/busyBox.mjs) can break an event's latency into its parts from timestamps rather
// than guesses; and one per error of a Redis connection (`redis-error`), which its log says only
// once while it repeats, so a test can see the retries the log keeps quiet about
// (test/cli/userErrors.test.ts). Unset (always, outside both) it costs one comparison per step.

const file = typeof process !== 'undefined' ? process.env.BATON_TRACE_FILE : undefined;
let buffer: string[] = [];
const RESOLUTION_MS = 10;

function flush(): void {
  if (!file || buffer.length === 0) return;
  const lines = buffer.join('');
  buffer = [];
  fs.appendFileSync(file, lines);
}

if (file) {
  // Deno has no event loop delay histogram; the trace then goes without it.
  let histogram: ReturnType<typeof monitorEventLoopDelay> | null = null;
  try {
    histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    histogram.enable();
  } catch {
    histogram = null;
  }
  const timer = setInterval(() => {
    if (histogram) {
      buffer.push(
        `${JSON.stringify({ step: 'loop', at: Date.now(), p99Ms: histogram.percentile(99) / 1e6, maxMs: histogram.max / 1e6 })}\n`,
      );
      histogram.reset();
    }
    flush();
  }, 1_000);
  timer.unref?.();
  process.on('exit', flush);
}

export const tracing = file !== undefined;

/** Records one step (`at`: now) with what identifies it: the checkout, the job. */
export function trace(step: string, fields: Readonly<Record<string, unknown>>): void {
  if (!file) return;
  buffer.push(`${JSON.stringify({ step, at: Date.now(), ...fields })}\n`);
}
