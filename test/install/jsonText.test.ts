import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { HookSettings } from '../../src/clients/installer.ts';
import { clientAdapter } from '../../src/clients/registry.ts';
import { detectFormat, insertJson, jsonEqual, parseJsonc, patchJson, removeJson } from '../../src/install/jsonText.ts';
import { mergeSettings, settingsText } from '../../src/install/settings.ts';
import { JSON_CORPUS, userBytesChanged } from '../support/formattingCorpus.ts';

// The text patches baton makes to a user's JSON/JSONC settings (src/install/jsonText.ts): every byte
// outside baton's own entries stays, over a corpus of real-world formattings.

const commandFor = (args: readonly string[]) => ['baton', ...args].join(' ');

function readValue(text: string): HookSettings {
  const parsed = parseJsonc(text);
  if (!parsed.ok) throw new Error(parsed.message);
  return (parsed.value ?? {}) as HookSettings;
}

/** The settings `baton init` writes for a client: hooks (and Claude Code's allow rule) merged in. */
async function withBaton(client: 'claude-code' | 'codex', settings: HookSettings): Promise<HookSettings> {
  const adapter = clientAdapter(client)!;
  const installer = await adapter.install.installer();
  return mergeSettings(installer.settings?.(settings, commandFor) ?? settings, adapter, commandFor);
}

/** Whether `inner` is what is left of `outer` with some stretches cut out (every byte of it kept, in order). */
function keptIn(inner: string, outer: string): boolean {
  let at = 0;
  for (const char of outer) if (at < inner.length && inner.startsWith(char, at)) at += char.length;
  return at === inner.length;
}

describe('patchJson over the formatting corpus', () => {
  for (const client of ['claude-code', 'codex'] as const) {
    for (const entry of JSON_CORPUS) {
      it(`${client}, ${entry.name}: baton's entries go in without touching a byte of the user's, and come out again exactly`, async () => {
        const user = readValue(entry.text);
        expect(patchJson(entry.text, user)).toBe(entry.text);
        const merged = await withBaton(client, user);
        const patched = settingsText(merged, entry.text);
        expect(jsonEqual(readValue(patched), merged)).toBe(true);
        expect(keptIn(entry.text, patched)).toBe(true);
        expect(userBytesChanged(entry.text, patched)).toEqual([]);
        expect(patched.includes('\r\n')).toBe(entry.text.includes('\r\n'));
        if (entry.text.includes('\r\n')) expect(patched.replace(/\r\n/g, '')).not.toMatch(/\n/);
        expect(patched.endsWith('\n')).toBe(entry.text.endsWith('\n'));
        // What uninstall does to a file changed since init: the inverse, as text.
        expect(patchJson(patched, user)).toBe(entry.text);
        // A second init changes nothing.
        expect(settingsText(await withBaton(client, readValue(patched)), patched)).toBe(patched);
      });
    }
  }

  it("keeps one-line arrays, deny before allow, and puts baton's rule at the end of the user's allow line", async () => {
    const text = JSON_CORPUS.find((entry) => entry.name === 'one-line arrays, deny before allow')!.text;
    const patched = settingsText(await withBaton('claude-code', readValue(text)), text);
    expect(patched).toContain(
      '{\n  "permissions": {\n    "deny": ["Read(./.env)", "Read(./secrets/**)"],\n    "allow": ["Bash(ls:*)", "Read", "Bash(baton task *)"]\n  },\n  "model": "sonnet",\n  "hooks": {\n    "SubagentStart": [\n      {\n        "matcher": "agent-infra-lifecycle-(executor|reviewer)",\n',
    );
  });

  it('keeps the comments and trailing commas of a JSONC file', async () => {
    const text = JSON_CORPUS.find((entry) => entry.name === 'comments and a trailing comma (JSONC)')!.text;
    const patched = settingsText(await withBaton('claude-code', readValue(text)), text);
    expect(patched.startsWith('// project settings\n{\n  /* who may do what */\n')).toBe(true);
    expect(patched).toContain('      "Read", // reading is fine\n      "Bash(git status)",\n      "Bash(baton task *)",\n    ],\n  },\n');
    expect(patched.endsWith('    ]\n  }, // none yet\n}\n')).toBe(true);
  });

  it("writes baton's entries in the file's indentation: tabs, four spaces, one line for a minified file", async () => {
    const tabs = JSON_CORPUS.find((entry) => entry.name === 'tabs')!.text;
    expect(settingsText(await withBaton('codex', readValue(tabs)), tabs)).toContain(
      '\t\t\t{\n\t\t\t\t"matcher": "^(spawn_agent|collaborationspawn_agent|collaboration\\\\.spawn_agent)$",\n\t\t\t\t"hooks": [\n\t\t\t\t\t{\n',
    );
    const four = JSON_CORPUS.find((entry) => entry.name === 'four spaces and blank lines between keys')!.text;
    expect(settingsText(await withBaton('claude-code', readValue(four)), four)).toContain(
      '    },\n    "hooks": {\n        "SubagentStart": [\n            {\n',
    );
    const minified = JSON_CORPUS.find((entry) => entry.name === 'everything on one line')!.text;
    const patched = settingsText(await withBaton('claude-code', readValue(minified)), minified);
    expect(patched.split('\n')).toHaveLength(2);
    expect(patched.startsWith('{"permissions":{"allow":["Read","Bash(npm test)","Bash(baton task *)"]},"hooks":{"PostToolUse":')).toBe(
      true,
    );
  });

  it('fills an empty object on lines of its own, and empties it again', async () => {
    for (const text of ['{}\n', '{}']) {
      const patched = settingsText(await withBaton('codex', {}), text);
      expect(patched.startsWith('{\n  "hooks": {\n    "SubagentStart": [\n')).toBe(true);
      expect(patched.endsWith(text === '{}' ? '  }\n}' : '  }\n}\n')).toBe(true);
      expect(patchJson(patched, {})).toBe(text);
    }
  });
});

describe("baton's earlier entries", () => {
  it('are replaced in place: only the command changes', async () => {
    const text =
      '{\n  "hooks": {\n    "PreToolUse": [\n      { "matcher": "Task|Agent", "hooks": [{ "type": "command", "command": "node /old/bin/baton.mjs hook claude-code", "timeout": 10 }] }\n    ]\n  }\n}\n';
    const adapter = clientAdapter('claude-code')!;
    const merged = mergeSettings(readValue(text), adapter, commandFor);
    const patched = settingsText(merged, text);
    expect(patched.startsWith(text.replace('node /old/bin/baton.mjs hook claude-code', 'baton hook claude-code').slice(0, -8))).toBe(true);
  });

  it("leave a group they shared with the user's hook, which keeps its formatting", async () => {
    const text =
      '{"hooks": {"PreToolUse": [{"matcher": "Task|Agent", "hooks": [{"type": "command", "command": "./mine.sh"}, {"type": "command", "command": "baton hook claude-code", "timeout": 10}]}]}}';
    const merged = mergeSettings(readValue(text), clientAdapter('claude-code')!, commandFor);
    const patched = settingsText(merged, text);
    expect(
      patched.startsWith('{"hooks": {"PreToolUse": [{"matcher": "Task|Agent", "hooks": [{"type": "command", "command": "./mine.sh"}]}, {'),
    ).toBe(true);
    expect(jsonEqual(readValue(patched), merged)).toBe(true);
  });
});

describe('insertJson and removeJson', () => {
  it('remove the first, a middle, the last and the only item, keeping the white space around', () => {
    const text = '[\n  1,\n  2,\n  3\n]';
    expect(removeJson(text, [], 0)).toBe('[\n  2,\n  3\n]');
    expect(removeJson(text, [], 1)).toBe('[\n  1,\n  3\n]');
    expect(removeJson(text, [], 2)).toBe('[\n  1,\n  2\n]');
    expect(removeJson('["a", "b"]', [], 1)).toBe('["a"]'); // jsonc-parser's own removal would leave `["a""]`
    expect(removeJson('{ "a": 1 }', [], 'a')).toBe('{}');
    expect(removeJson('{"a": 1}', [], 'b')).toBe('{"a": 1}');
  });

  it('keep a comment next to what they remove', () => {
    expect(removeJson('[\n  "a", // mine\n  "b"\n]', [], 1)).toBe('[\n  "a" // mine\n]');
    expect(removeJson('{\n  "a": 1, // mine\n  "b": 2\n}', [], 'a')).toBe('{\n   // mine\n  "b": 2\n}');
    expect(removeJson('{ /* mine */ "a": 1 }', [], 'a')).toBe('{ /* mine */  }');
  });

  it('insert before an item with the white space the items have', () => {
    expect(insertJson('[\n  "a",\n  "b"\n]', [], 1, { x: 1 })).toBe('[\n  "a",\n  {\n    "x": 1\n  },\n  "b"\n]');
    expect(insertJson('[\n\t"a"\n]', [], 0, 'z')).toBe('[\n\t"z",\n\t"a"\n]');
    expect(insertJson('["a", "b"]', [], 0, 'z')).toBe('["z", "a", "b"]');
    expect(insertJson('["a"]', [], 0, 'z')).toBe('["z", "a"]');
  });

  it('detect the indentation and the line ending', () => {
    expect(detectFormat('{\n\t"a": 1\n}')).toEqual({ indent: '\t', eol: '\n' });
    expect(detectFormat('{\r\n    "a": 1\r\n}')).toEqual({ indent: '    ', eol: '\r\n' });
    expect(detectFormat('{}')).toEqual({ indent: '  ', eol: '\n' });
  });

  it('say where a file is not JSON', () => {
    expect(parseJsonc('{\n  "a": 1,\n  "b" 2\n}')).toEqual({ ok: false, message: 'ColonExpected at line 3 column 7' });
    expect(parseJsonc('// only a comment\n')).toMatchObject({ ok: true, value: undefined });
  });
});

describe('patchJson on any JSON', () => {
  const json = fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.parse(JSON.stringify(value)) as unknown);
  const indent = fc.constantFrom(0, 2, 4, '\t');

  it('gives a text that reads back as the value asked for', () => {
    fc.assert(
      fc.property(json, json, indent, (from, to, space) => {
        const patched = parseJsonc(patchJson(JSON.stringify(from, null, space), to));
        expect(patched.ok && jsonEqual(patched.value, to)).toBe(true);
      }),
    );
  });

  it('gives the bytes back when the keys it added are taken out again', () => {
    const object = fc.dictionary(fc.string({ maxLength: 4 }), json, { maxKeys: 4 });
    fc.assert(
      fc.property(object, object, indent, (user, added, space) => {
        const text = JSON.stringify(user, null, space);
        const extra = Object.fromEntries(Object.entries(added).filter(([key]) => !Object.hasOwn(user, key)));
        expect(patchJson(patchJson(text, { ...user, ...extra }), user)).toBe(text);
      }),
    );
  });
});
