import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/processes.ts';
import { redisTargetFromUrl } from '../../src/queue/connection.ts';
import { prefixProblem } from '../../src/queue/keys.ts';

// Every `export REDIS_URL='…'` in the README and docs/teams.md is a URL baton accepts, of the kind
// its scheme says, and every Cluster example comes with a prefix baton accepts on a Cluster. The
// examples live in docs/teams.md (the README links to it and may show none).

const files = ['README.md', path.join('docs', 'teams.md')];
const AT_LEAST: Record<string, number> = { 'README.md': 0, [path.join('docs', 'teams.md')]: 3 };

describe('Redis URLs in the team documentation', () => {
  it.each(files)('%s: every example URL parses, Cluster examples use a hash-tagged prefix', (file) => {
    const text = fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
    const examples = [...text.matchAll(/export REDIS_URL='([^']+)'\n\s*(?:export BATON_PREFIX='([^']+)')?/g)];
    expect(examples.length).toBeGreaterThanOrEqual(AT_LEAST[file]!);
    for (const [, url, prefix] of examples) {
      const target = redisTargetFromUrl(url!, {});
      const kind = /\+cluster:/.test(url!) ? 'cluster' : /\+sentinel:/.test(url!) ? 'sentinel' : 'single';
      expect(target.kind, url).toBe(kind);
      if (kind === 'cluster') expect(prefixProblem(url!, prefix ?? 'baton'), url).toBeNull();
    }
  });
});
