import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/processes.ts';

// The package ships the bundles (dist/**/*.mjs) and not their source maps (11 MB): no bundle may
// name a map, which in an installed package would point at a file that is not there (a debugger or
// `node --enable-source-maps` then warns on every start). The maps are still written beside the
// bundles of a checkout, and map back to src/.

const DIST = path.join(PROJECT_ROOT, 'dist');
const packageJson = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { files: string[] };

function filesUnder(dir: string, suffix: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter((file) => file.endsWith(suffix)).map((file) => path.join(dir, file));
}

describe('source maps of the bundles', () => {
  it('the package ships the bundles and no map', () => {
    expect(packageJson.files).toContain('dist/**/*.mjs');
    expect(packageJson.files.filter((entry) => entry.includes('map') || entry === 'dist/' || entry === 'dist')).toEqual([]);
  });

  it('no bundle names a source map', () => {
    const bundles = filesUnder(DIST, '.mjs');
    expect(bundles.length).toBeGreaterThan(30);
    const naming = bundles.filter((file) => /^\/\/[#@] sourceMappingURL=/m.test(fs.readFileSync(file, 'utf8')));
    expect(naming.map((file) => path.relative(PROJECT_ROOT, file))).toEqual([]);
  });

  it('each bundle has its map beside it in the checkout, mapping to src/', () => {
    for (const name of ['baton', 'hook', 'fingerprint']) {
      const map = JSON.parse(fs.readFileSync(path.join(DIST, `${name}.mjs.map`), 'utf8')) as { sources: string[] };
      expect(
        map.sources.some((source) => /(^|\/)src\/cli\/\w+\.ts$/.test(source)),
        name,
      ).toBe(true);
    }
  });
});
