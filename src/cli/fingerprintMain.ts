// Entry point of `baton fingerprint` (bin/baton.mjs loads it for that command only). It is bundled on
// its own (scripts/build.mjs → dist/fingerprint.mjs): a cold fingerprint is measured against git
// (docs/architecture.md "Performance"), so it loads the fingerprint module and nothing else. Reading
// deltified pack objects (isomorphic-git) is a lazy import of the main bundle's module.
import { run } from './fingerprint.ts';

process.exitCode = await run(process.argv.slice(3)).catch((error: unknown) => {
  process.stderr.write(`baton: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return 1;
});
