#!/usr/bin/env node
// `baton hook` runs for every agent event: it has its own small bundle (scripts/build.mjs).
await import(process.argv[2] === 'hook' ? '../dist/hook.mjs' : '../dist/baton.mjs');
