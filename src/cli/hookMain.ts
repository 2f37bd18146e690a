// Entry point of `baton hook` (bin/baton.mjs loads it for that command only). It is bundled on its
// own (scripts/build.mjs → dist/hook.mjs): a hook starts for every agent event, and this bundle
// holds only what the hook needs to decide and enqueue. Everything else it might need (the
// ioredis fallback, zod schemas, the spawn check) is a lazy import of the main bundle's modules.
import { exitWith } from './exit.ts';
import { run } from './hook.ts';

exitWith(run(process.argv.slice(3)));
