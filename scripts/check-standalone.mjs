#!/usr/bin/env node
// Fails when a tracked file reaches outside the checkout: the checkout's own absolute path, its
// parent's path, or a sibling folder such as `../shared/`. A clone on another machine has none of
// these, so a test or script that names one passes only where it was written.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const parent = path.dirname(root);
const self = path.relative(root, fileURLToPath(import.meta.url));
const needles = [`${root}/`, `${parent}/shared`, '../shared/', '/shared/examples', '/shared/spec', '/shared/seed'];
const skip = new Set([self, 'package-lock.json']);

const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
const offenders = [];
for (const file of files) {
  if (skip.has(file)) continue;
  let text;
  try {
    text = fs.readFileSync(path.join(root, file), 'utf8');
  } catch {
    continue; // a tracked file deleted in the work tree
  }
  text.split('\n').forEach((line, index) => {
    const needle = needles.find((n) => line.includes(n));
    if (needle) offenders.push(`${file}:${index + 1}: names '${needle}'`);
  });
}
if (offenders.length > 0) {
  console.error('check-standalone: tracked files name paths outside the checkout:');
  for (const offender of offenders) console.error(`  ${offender}`);
  process.exit(1);
}
console.log(`check-standalone: ${files.length} tracked files, none names a path outside the checkout`);
