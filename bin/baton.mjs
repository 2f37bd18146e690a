#!/usr/bin/env node
// `baton hook` (runs for every agent event), `baton task` (every lifecycle step) and `baton fingerprint`
// (measured cold against git) have their own small bundles (scripts/build.mjs).
const LEAN = { hook: '../dist/hook.mjs', task: '../dist/task.mjs', fingerprint: '../dist/fingerprint.mjs' };
await import(Object.hasOwn(LEAN, process.argv[2]) ? LEAN[process.argv[2]] : '../dist/baton.mjs');
