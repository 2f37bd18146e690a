import { afterAll } from 'vitest';

// The parallel project runs several test files one after another in each worker process
// (`isolate: false` in vitest.config.ts: the modules a file imports are loaded once per worker, not
// once per file). What a file changes in the process's environment must not reach the next file:
// the environment is put back as it was when the file started.
const atStart = { ...process.env };

afterAll(() => {
  for (const name of Object.keys(process.env)) if (!(name in atStart)) delete process.env[name];
  Object.assign(process.env, atStart);
});
