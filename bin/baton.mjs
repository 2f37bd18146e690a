#!/usr/bin/env node
// `baton hook` (runs for every agent event) and `baton fingerprint` (measured cold against git) have
// their own small bundles (scripts/build.mjs).
const command = process.argv[2];
await import(command === 'hook' ? '../dist/hook.mjs' : command === 'fingerprint' ? '../dist/fingerprint.mjs' : '../dist/baton.mjs');
