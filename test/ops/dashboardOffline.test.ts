import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TASK_ID, uniquePrefix } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { batonEnv, jsonOf, runBaton } from '../support/processes.ts';
import { dashboardUrlOf, startBaton } from '../support/services.ts';
import type { ServiceProcess } from '../support/services.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';
import { queueNameFor } from '../../src/queue/keys.ts';

// No request leaves the machine from the dashboard (docs/run-view.md "Nothing from other hosts"):
// bull-board's page links a public font host; baton serves it without that link, and with a
// Content-Security-Policy that lets a browser load from the dashboard's own origin only. Checked over
// HTTP here, on every page and on the stylesheets and scripts they name; the browser test
// (test/ops/dashboard.test.ts) fails on any request a real page makes to another host.

const redisUrl = inject('redisUrl');
let repo: GitRepo;
let service: ServiceProcess;
let url: string;

beforeAll(async () => {
  repo = gitRepoWithTask();
  const env = batonEnv({ redisUrl, prefix: uniquePrefix('dash-offline') });
  service = await startBaton(['worker', '--repo', repo.root, '--dashboard', '--port', '0'], { env, ready: / ready:/ });
  const begun = await runBaton(['task', '01', 'begin-or-resume'], { env, cwd: repo.root });
  expect(jsonOf(begun).status, begun.stderr).toBe('running');
  url = dashboardUrlOf(service);
});
afterAll(async () => {
  await service?.stop('SIGKILL');
  repo?.cleanup();
});

/** Every URL a page names in src= or href= (links to follow and resources to load alike), resolved against the page. */
function namedUrls(html: string, page: URL): URL[] {
  return [...html.matchAll(/\b(?:src|href)\s*=\s*["']([^"']+)["']/gi)].map(([, value]) => new URL(value!, page));
}

/** What a page loads: stylesheets, icons, scripts, images (not the links a user may follow), resolved as its `<base>` says. */
function loadedUrls(html: string, page: URL): URL[] {
  const base = /<base\b[^>]*\bhref\s*=\s*["']([^"']+)["']/i.exec(html)?.[1];
  const against = base === undefined ? page : new URL(base, page);
  const tags = [...html.matchAll(/<(?:link|script|img|iframe|source)\b[^>]*>/gi)].map(([tag]) => tag);
  return tags.flatMap((tag) => namedUrls(tag, against));
}

describe('the dashboard loads nothing from another host', () => {
  it("bull-board's own page links the public font host (what baton takes out)", () => {
    const ui = path.dirname(createRequire(import.meta.url).resolve('@bull-board/ui/package.json'));
    expect(fs.readFileSync(path.join(ui, 'dist', 'index.ejs'), 'utf8')).toContain('https://fonts.googleapis.com/');
  });

  it('every page names only its own origin for what it loads, with a same-origin Content-Security-Policy', async () => {
    const queueName = queueNameFor(repoIdentity(repo.root).id);
    const pages = [
      '',
      `queue/${encodeURIComponent(`${repo.root} · ${queueName}`)}`,
      'runs',
      `runs/${repoIdentity(repo.root).id}/${TASK_ID}`,
    ];
    const origin = new URL(url).origin;
    const assets = new Set<string>();
    for (const page of pages) {
      const pageUrl = new URL(page, url);
      const response = await fetch(pageUrl);
      expect(response.status, pageUrl.href).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      const policy = response.headers.get('content-security-policy') ?? '';
      expect(policy).toMatch(/^default-src 'self' /);
      // Sources in the policy are keywords and schemes only: no host.
      expect(policy.split(/[;\s]+/).filter((source) => /[./]/.test(source) && !/^[a-z]+:$/.test(source))).toEqual([]);
      const html = await response.text();
      expect(html, pageUrl.href).not.toMatch(/fonts\.(googleapis|gstatic)\.com/);
      const loaded = loadedUrls(html, pageUrl);
      expect(loaded.filter((target) => target.origin !== origin).map(String), pageUrl.href).toEqual([]);
      for (const target of loaded) assets.add(target.href);
    }
    // bull-board's page names its stylesheet and scripts; none of them reaches for another host either.
    expect([...assets].some((asset) => asset.endsWith('.css'))).toBe(true);
    for (const asset of assets) {
      const response = await fetch(asset);
      expect(response.status, asset).toBe(200);
      if (!asset.endsWith('.css')) continue;
      const css = await response.text();
      expect(css.match(/@import[^;]*|url\(\s*["']?(?:https?:)?\/\/[^)]*\)/gi) ?? [], asset).toEqual([]);
    }
  });
});
