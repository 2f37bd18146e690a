// The stamp of what dist/ is built from: a hash of the sources and of everything else that decides
// the bundles (the build script, the locked dependencies). scripts/build.mjs writes it to
// dist/build-stamp.json; the tests' global setup (test/support/global-setup.ts) compares it with the
// sources as they are, so that a test never runs a dist/ built from other sources.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const STAMP_FILE = 'build-stamp.json';

/** Every file below `dir`, relative to `root`, in a stable order. */
function filesBelow(root, dir) {
  return fs
    .readdirSync(path.join(root, dir), { withFileTypes: true })
    .flatMap((entry) => {
      const relative = path.join(dir, entry.name);
      if (entry.isDirectory()) return filesBelow(root, relative);
      return entry.isFile() ? [relative] : [];
    })
    .sort();
}

/** The hash of the inputs of the build in the checkout at `root`. */
export function sourceStamp(root) {
  const hash = createHash('sha256');
  for (const file of [...filesBelow(root, 'src'), 'scripts/build.mjs', 'scripts/lazyImports.mjs', 'package-lock.json']) {
    const full = path.join(root, file);
    if (!fs.existsSync(full)) continue;
    hash.update(`${file.split(path.sep).join('/')}\0`);
    hash.update(fs.readFileSync(full));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** Why the dist/ of the checkout at `root` is not what its sources build, or null when it is. */
export function staleDist(root) {
  let recorded;
  try {
    recorded = JSON.parse(fs.readFileSync(path.join(root, 'dist', STAMP_FILE), 'utf8')).sources;
  } catch {
    return 'dist/ is missing or was built without a stamp: run npm run build';
  }
  return recorded === sourceStamp(root) ? null : 'dist/ was built from other sources than those in src/ now: run npm run build';
}
