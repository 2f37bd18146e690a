// Entry point of `baton task` (bin/baton.mjs loads it for that command only). It is bundled on its
// own (scripts/build.mjs → dist/task.mjs): an agent runs `baton task` for every lifecycle step, and
// tests and scripts run it hundreds of times. The bundle holds what a mutating intent needs (argument
// parsing, the event and envelope checks in zod/mini, the raw Redis transport, the spool); the engine
// (read-only intents), the ioredis fallback and the inline worker are lazy imports of the main
// bundle's modules.
import { exitWith } from './exit.ts';
import { run } from './taskCommand.ts';

exitWith(run(process.argv.slice(3)));
