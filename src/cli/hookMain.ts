// Entry point of `baton hook` (bin/baton.mjs loads it for that command only). It is bundled on its
// own (scripts/build.mjs → dist/hook.mjs): a hook starts for every agent event, and this bundle
// holds only what the hook needs to decide and enqueue. Everything else it might need (the
// ioredis fallback, zod schemas, the spawn check) is a lazy import of the main bundle's modules.
import { run } from './hook.ts';

run(process.argv.slice(3)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`baton: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
