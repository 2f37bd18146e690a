import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

// Full zod's English messages for the schemas written with zod's small build (zod/mini): events.ts,
// taskRef.ts, runSchema.ts and queue/envelopeSchema.ts, which `baton task` loads. The CLI starts a
// process for every lifecycle step: leaving full zod out saved ~14 ms of its ~145 ms of CPU.
// Both builds share zod's core, so the checks and their issues are the same; only the messages
// differ: zod/mini registers no locale (every message would read "Invalid input"), so this module
// registers English as full zod does, when no locale has been set yet. Users read these messages
// (usage errors, malformed jobs, run files), so they stay full zod's, word for word.
// Import it for its effect, before the module's first parse. Each schema module imports zod/mini
// itself, as a namespace used only for its members, so the bundle keeps only what they use.
if (!config().localeError) config(en());
