// Entry point of `baton fingerprint` (bin/baton.mjs loads it for that command only). It is bundled on
// its own (scripts/build.mjs → dist/fingerprint.mjs): a cold fingerprint is measured against git
// (docs/architecture.md "Performance"), so it loads the fingerprint module and nothing else. Reading
// deltified pack objects (isomorphic-git) is a lazy import of the main bundle's module.
import { setFlagsFromString } from 'node:v8';
import { run } from './fingerprint.ts';

// A cold capture allocates tens of MB of short-lived objects (an fs.BigIntStats with four Dates per
// file, …). V8 starts the young generation at 1 MB and doubles it, one scavenge each time: ~20
// scavenges for 20,000 files, most of the capture's GC time. Growing it 16-fold instead reaches the
// usual maximum after two (7 scavenges, about half the GC time, bench/fingerprint.mjs). A flag V8 reads
// whenever it grows the young generation; only for this short-lived process. Bun ignores it.
try {
  setFlagsFromString('--semi-space-growth-factor=16');
} catch {
  // a runtime without V8 flags
}

process.exitCode = await run(process.argv.slice(3)).catch((error: unknown) => {
  process.stderr.write(`baton: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return 1;
});
