import { describe, expect, it } from 'vitest';
import { parse } from '@decimalturn/toml-patch';
import {
  TomlConfigError,
  codexHookHash,
  codexHookKey,
  trustState,
  withCodexTrust,
  withSandboxSettings,
  withoutSandboxSettings,
} from '../../src/clients/codex/config.ts';

// The Codex trust entries and sandbox settings install-hooks writes (test/ops/codexTrust.test.ts
// checks them against the real Codex; these are the edge cases of merging into a user's file).

const ROOT = '/srv/app';
const ENTRIES = [
  { key: codexHookKey(`${ROOT}/.codex/hooks.json`, 'PreToolUse', 1, 0), hash: 'sha256:aa' },
  { key: codexHookKey(`${ROOT}/.codex/hooks.json`, 'SubagentStop', 0, 0), hash: 'sha256:bb' },
];

describe('Codex hook keys and hashes', () => {
  it('keys by file, snake_case event, group and handler index', () => {
    expect(ENTRIES.map((entry) => entry.key)).toEqual([
      '/srv/app/.codex/hooks.json:pre_tool_use:1:0',
      '/srv/app/.codex/hooks.json:subagent_stop:0:0',
    ]);
  });

  it('hashes the canonical identity (a value Codex 0.171.0 computed for this hook)', () => {
    const hook = {
      event: 'SubagentStart',
      matcher: '^agent-infra-lifecycle-(executor|reviewer)$',
      command: '/usr/bin/node /opt/baton/bin/baton.mjs hook codex --event subagent-start',
      timeoutSec: 10,
    };
    expect(codexHookHash(hook)).toBe('sha256:45d78912585b8cf1717664e4316e32de266cceb866186cdebab031e8ab6c52be');
    expect(codexHookHash({ ...hook, timeoutSec: 11 })).not.toBe(codexHookHash(hook));
    const { matcher: _matcher, ...withoutMatcher } = hook;
    expect(codexHookHash(withoutMatcher)).not.toBe(codexHookHash(hook));
  });
});

describe('withCodexTrust', () => {
  it('changes an untrusted project and a stale hash in place, and appends what is missing', () => {
    const text = `[projects."${ROOT}"]\ntrust_level = "untrusted" # was asked once\n\n[hooks.state."${ENTRIES[0]!.key}"]\ntrusted_hash = "sha256:old"\nenabled = true\n`;
    const updated = withCodexTrust(text, ROOT, ENTRIES, 'config.toml');
    expect(parse(updated)).toEqual({
      projects: { [ROOT]: { trust_level: 'trusted' } },
      hooks: {
        state: { [ENTRIES[0]!.key]: { trusted_hash: 'sha256:aa', enabled: true }, [ENTRIES[1]!.key]: { trusted_hash: 'sha256:bb' } },
      },
    });
    expect(updated).toContain('# was asked once');
    expect(trustState(updated, ROOT, ENTRIES, 'config.toml')).toEqual({ project: true, hooks: [] });
    expect(withCodexTrust(updated, ROOT, ENTRIES, 'config.toml')).toBe(updated);
  });

  it('merges into inline tables, where appending [projects."…"] would not be valid TOML', () => {
    const text = `projects = { "/srv/other" = { trust_level = "trusted" } }\n`;
    const updated = withCodexTrust(text, ROOT, ENTRIES, 'config.toml');
    expect(parse(updated)).toMatchObject({ projects: { '/srv/other': { trust_level: 'trusted' }, [ROOT]: { trust_level: 'trusted' } } });
    expect(trustState(updated, ROOT, ENTRIES, 'config.toml')).toEqual({ project: true, hooks: [] });
  });

  it('reports what is not trusted, and refuses a file that is not TOML', () => {
    expect(trustState(null, ROOT, ENTRIES, 'config.toml')).toEqual({ project: false, hooks: ENTRIES.map((entry) => entry.key) });
    expect(() => withCodexTrust('model = ', ROOT, ENTRIES, '/home/u/.codex/config.toml')).toThrow(TomlConfigError);
    expect(() => withCodexTrust('projects = 3\n', ROOT, ENTRIES, 'config.toml')).toThrow(
      "config.toml: 'projects' is not a table; nothing was written",
    );
  });
});

describe('withSandboxSettings', () => {
  const roots = [`${ROOT}/.agents`, `${ROOT}/.git`];
  it('appends the section to a file without one, and changes nothing the second time', () => {
    const first = withSandboxSettings('model = "o3"\n', roots, '.codex/config.toml');
    expect(first).toBe(
      `model = "o3"\n\n[sandbox_workspace_write]\nnetwork_access = true\nwritable_roots = ["${ROOT}/.agents", "${ROOT}/.git"]\n`,
    );
    expect(withSandboxSettings(first, roots, '.codex/config.toml')).toBe(first);
  });

  it('turns network access on and adds the missing roots to a section of the user', () => {
    const text = '[sandbox_workspace_write]\nnetwork_access = false\nwritable_roots = ["/srv/app/.git"]\nexclude_tmpdir_env_var = true\n';
    expect(parse(withSandboxSettings(text, roots, '.codex/config.toml'))).toEqual({
      sandbox_workspace_write: { network_access: true, writable_roots: [`${ROOT}/.git`, `${ROOT}/.agents`], exclude_tmpdir_env_var: true },
    });
    expect(() => withSandboxSettings('[sandbox_workspace_write]\nwritable_roots = "x"\n', roots, '.codex/config.toml')).toThrow(
      'writable_roots is not an array',
    );
  });

  it("replaces an older baton's absolute roots with the relative ones, keeping the user's", () => {
    const text = `# mine\n[sandbox_workspace_write]\nnetwork_access = true\nwritable_roots = ["/srv/cache", "${ROOT}/.agents", "${ROOT}/.git"]\n`;
    const updated = withSandboxSettings(text, ['../.agents', '../.git'], '.codex/config.toml', roots);
    expect(updated.startsWith('# mine\n')).toBe(true);
    expect(parse(updated)).toEqual({
      sandbox_workspace_write: { network_access: true, writable_roots: ['/srv/cache', '../.agents', '../.git'] },
    });
    expect(withSandboxSettings(updated, ['../.agents', '../.git'], '.codex/config.toml', roots)).toBe(updated);
  });
});

describe('withoutSandboxSettings (baton uninstall, a file changed since init)', () => {
  const ours = ['../.agents', '../.git'];
  it("takes out network access and baton's roots, and the section when nothing else is left", () => {
    const installed = withSandboxSettings('model = "o3" # keep\n', ours, '.codex/config.toml');
    expect(parse(withoutSandboxSettings(installed, ours, '.codex/config.toml'))).toEqual({ model: 'o3' });
    expect(withoutSandboxSettings(installed, ours, '.codex/config.toml')).toContain('# keep');
    const shared =
      '[sandbox_workspace_write]\nnetwork_access = true\nwritable_roots = ["/srv/cache", "../.agents", "../.git"]\nexclude_tmpdir_env_var = true\n';
    expect(parse(withoutSandboxSettings(shared, ours, '.codex/config.toml'))).toEqual({
      sandbox_workspace_write: { writable_roots: ['/srv/cache'], exclude_tmpdir_env_var: true },
    });
  });

  it("leaves a section without baton's roots alone, network access included", () => {
    const mine = '[sandbox_workspace_write]\nnetwork_access = true\nwritable_roots = ["/srv/cache"]\n';
    expect(withoutSandboxSettings(mine, ours, '.codex/config.toml')).toBe(mine);
    expect(withoutSandboxSettings('model = "o3"\n', ours, '.codex/config.toml')).toBe('model = "o3"\n');
  });
});
