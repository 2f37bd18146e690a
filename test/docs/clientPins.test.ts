import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/processes.ts';

// docs/clients.md "Versions" names the clients the real-client tests run, and package.json pins them
// (the newest under the package's own name, the oldest supported as `<client>-oldest`). A pin moved
// by `scripts/check-client-pins.mjs`'s advice without the table, or the other way round, fails here.

const pkg = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
const table = fs
  .readFileSync(path.join(PROJECT_ROOT, 'docs', 'clients.md'), 'utf8')
  .split('## Versions')[1]!
  .split('\n## ')[0]!;

/** The rows of the Versions table: client, version, role. */
const rows = [...table.matchAll(/^\| (Claude Code|Codex|Copilot CLI) \| ([\d.]+) \| ([^|]+) \|/gm)].map(([, client, version, role]) => ({
  client: client!,
  version: version!,
  role: role!.trim(),
}));

const pinned = (spec: string | undefined) => spec?.replace(/^npm:@[^@]+@/, '');

describe('docs/clients.md "Versions" and the pinned clients', () => {
  it.each([
    ['Claude Code', '@anthropic-ai/claude-code', 'claude-code-oldest'],
    ['Codex', '@openai/codex', 'codex-oldest'],
    ['Copilot CLI', '@github/copilot', 'copilot-oldest'],
  ])('%s: the newest tested and the oldest supported are the pins', (client, name, oldestAlias) => {
    const newest = pinned(pkg.devDependencies[name]);
    const oldest = pinned(pkg.devDependencies[oldestAlias]) ?? newest;
    const ofClient = rows.filter((row) => row.client === client);
    expect(ofClient.find((row) => row.role.includes('newest tested'))?.version).toBe(newest);
    expect(ofClient.find((row) => row.role.includes('oldest supported'))?.version).toBe(oldest);
    // Every pinned version has recorded payloads (test/agents/mainPath.test.ts writes them).
    const dirName = client === 'Claude Code' ? 'claude-code' : client === 'Codex' ? 'codex' : 'copilot-cli';
    for (const version of new Set([newest, oldest]))
      expect(fs.existsSync(path.join(PROJECT_ROOT, 'test', 'fixtures', 'hooks', `${dirName}-${version}`)), `${dirName}-${version}`).toBe(
        true,
      );
  });
});
