import { findNodeAtLocation, type JSONPath, type Node, parseTree } from 'jsonc-parser/lib/esm/main.js';

// Real-world formattings of the files baton edits in a user's project (docs/adopting.md "Uninstall":
// every byte outside baton's own entries is kept, and uninstall gives the file back byte for byte):
// `.claude/settings.json` and `.codex/hooks.json` (JSON, or JSONC with comments), and
// `.codex/config.toml`. Each entry holds the user's own entries, written the way people (and other
// tools) write them.

export type CorpusEntry = Readonly<{ name: string; text: string }>;

const crlf = (text: string) => text.replace(/\n/g, '\r\n');

/** A user's hook baton must leave alone, as a one-line group. */
const USER_HOOK = '{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "./scripts/lint.sh" }] }';

/** Settings files (Claude Code's `.claude/settings.json`; the same shapes for Codex's `.codex/hooks.json`). */
export const JSON_CORPUS: readonly CorpusEntry[] = [
  {
    name: 'one-line arrays, deny before allow',
    text: '{\n  "permissions": {\n    "deny": ["Read(./.env)", "Read(./secrets/**)"],\n    "allow": ["Bash(ls:*)", "Read"]\n  },\n  "model": "sonnet"\n}\n',
  },
  {
    name: 'keys in the user own order, a hook of the user first',
    text: `{\n  "hooks": {\n    "PreToolUse": [\n      ${USER_HOOK}\n    ]\n  },\n  "env": { "FOO": "1" },\n  "permissions": { "allow": ["Read"], "ask": [] }\n}\n`,
  },
  {
    name: 'comments and a trailing comma (JSONC)',
    text: '// project settings\n{\n  /* who may do what */\n  "permissions": {\n    "allow": [\n      "Read", // reading is fine\n      "Bash(git status)",\n    ],\n  },\n  "hooks": {}, // none yet\n}\n',
  },
  {
    name: 'CRLF line endings',
    text: crlf('{\n  "permissions": {\n    "allow": [\n      "Read"\n    ]\n  },\n  "includeCoAuthoredBy": false\n}\n'),
  },
  {
    name: 'tabs',
    text: '{\n\t"permissions": {\n\t\t"allow": [\n\t\t\t"Read",\n\t\t\t"Edit"\n\t\t]\n\t},\n\t"hooks": {\n\t\t"PreToolUse": [\n\t\t\t{\n\t\t\t\t"matcher": "Bash",\n\t\t\t\t"hooks": [{"type": "command", "command": "./check.sh"}]\n\t\t\t}\n\t\t]\n\t}\n}\n',
  },
  {
    name: 'no final newline',
    text: '{\n  "permissions": {\n    "allow": ["Read"]\n  }\n}',
  },
  {
    name: 'four spaces and blank lines between keys',
    text: '{\n    "model": "opus",\n\n    "permissions": {\n        "allow": [\n            "Read"\n        ]\n    },\n\n    "statusLine": {\n        "type": "command",\n        "command": "~/.claude/status.sh"\n    }\n}\n',
  },
  {
    name: 'unicode and escapes',
    text: '{\n  "env": {\n    "GREETING": "Grüße → 世界 ✓ 🎉",\n    "ESCAPED": "caf\\u00e9 \\"quoted\\" tab\\t"\n  },\n  "permissions": { "allow": ["Bash(echo ünïcödé:*)"] }\n}\n',
  },
  { name: 'empty object', text: '{}\n' },
  { name: 'empty object, no final newline', text: '{}' },
  {
    name: 'everything on one line',
    text: '{"permissions":{"allow":["Read","Bash(npm test)"]},"hooks":{"PostToolUse":[{"matcher":"Edit","hooks":[{"type":"command","command":"npx prettier --write"}]}]}}\n',
  },
  {
    name: 'a CRLF file with tabs, comments and no final newline',
    text: crlf('{\n\t// mine\n\t"permissions": {"allow": ["Read"], "deny": []},\n\t"hooks": {\n\t\t"PreToolUse": []\n\t}\n}'),
  },
];

/** Codex's project config `.codex/config.toml`, as users and Codex itself write it. */
export const TOML_CORPUS: readonly CorpusEntry[] = [
  {
    name: 'a model and a profile',
    text: '# Codex settings for this project\nmodel = "gpt-5-codex"\napproval_policy = "on-request"\n\n[profiles.fast]\nmodel = "gpt-5-mini"   # cheaper\n',
  },
  {
    name: 'a sandbox section of the user, one-line array',
    text: 'sandbox_mode = "workspace-write"\n\n[sandbox_workspace_write]\nwritable_roots = ["/tmp/cache", "../build"]\nexclude_tmpdir_env_var = false\n',
  },
  {
    name: 'inline tables and comments',
    text: '[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "docs-server"]  # pinned\nenv = { "API_URL" = "http://localhost:9000", DEBUG = "1" }\n',
  },
  { name: 'CRLF line endings', text: crlf('model = "o3"\n\n[tui]\nnotifications = true\n') },
  {
    name: 'CRLF, a sandbox section of the user',
    text: crlf('[sandbox_workspace_write]\nnetwork_access = false # asked for later\nwritable_roots = [\n  "/var/cache/app",\n]\n'),
  },
  { name: 'tabs and no final newline', text: '[shell_environment_policy]\n\tinherit = "core"\n\tset = { PATH = "/usr/bin" }' },
  { name: 'unicode', text: '# Grüße → 世界 ✓\nmodel_instructions_file = "./docs/Anleitung für Agenten.md"\n' },
  { name: 'empty file', text: '' },
];

/**
 * Case `index` of a project formatted as the corpus has it: Claude Code's settings (entry `index`),
 * Codex's hooks file (five entries on) and project config, and guidance files whose line ends
 * alternate between cases.
 */
export function corpusProject(index: number) {
  const settings = JSON_CORPUS[index]!;
  const codexHooks = JSON_CORPUS[(index + 5) % JSON_CORPUS.length]!;
  const codexConfig = TOML_CORPUS[index % TOML_CORPUS.length]!;
  const eol = index % 2 === 0 ? '\n' : '\r\n';
  const files: Record<string, string> = {
    '.claude/settings.json': settings.text,
    '.codex/hooks.json': codexHooks.text,
    '.codex/config.toml': codexConfig.text,
    'CLAUDE.md': `# Mine${eol}${eol}Tabs, not spaces.`,
    'AGENTS.md': `# Agents${eol}${eol}Run the tests.${eol}`,
  };
  return { settings, codexHooks, codexConfig, files };
}

/** Whether `inner` is what is left of `outer` with some stretches cut out (every byte of it kept, in order). */
export function keptIn(inner: string, outer: string): boolean {
  let at = 0;
  for (const char of outer) if (at < inner.length && inner.startsWith(char, at)) at += char.length;
  return at === inner.length;
}

/**
 * Where a user's JSON text `after` (baton's entries added) breaks `before`'s bytes: every value of
 * `before` must be in `after` with the same bytes around and between its items, baton's additions
 * going only after the last item of an object or array (one-line arrays stay on their line, key
 * order and comments stay). Empty: nothing broken.
 */
export function userBytesChanged(before: string, after: string): string[] {
  const afterTree = parseTree(after, [], { allowTrailingComma: true });
  const changed: string[] = [];
  const end = (node: Node) => node.offset + node.length;
  const walk = (node: Node, path: JSONPath) => {
    const there = afterTree && findNodeAtLocation(afterTree, path);
    if (!there) {
      changed.push(`${JSON.stringify(path)}: gone`);
      return;
    }
    const children = node.type === 'object' || node.type === 'array' ? (node.children ?? []) : [];
    if (node.type !== 'object' && node.type !== 'array') {
      if (before.slice(node.offset, end(node)) !== after.slice(there.offset, end(there)))
        changed.push(`${JSON.stringify(path)}: ${before.slice(node.offset, end(node))} became ${after.slice(there.offset, end(there))}`);
      return;
    }
    const pathOf = (child: Node, index: number): JSONPath =>
      node.type === 'object' ? [...path, child.children![0]!.value as string] : [...path, index];
    // The item (a property: key and value) in `after` that stands for `child`.
    const counterpart = (child: Node, index: number) => {
      const value = findNodeAtLocation(afterTree!, pathOf(child, index));
      return node.type === 'object' ? value?.parent : value;
    };
    let previous: [Node, Node] | null = null;
    children.forEach((child, index) => {
      const other = counterpart(child, index);
      if (!other) return;
      const gapBefore = previous ? before.slice(end(previous[0]), child.offset) : before.slice(node.offset, child.offset);
      const gapAfter = previous ? after.slice(end(previous[1]), other.offset) : after.slice(there.offset, other.offset);
      if (gapBefore !== gapAfter)
        changed.push(`${JSON.stringify(pathOf(child, index))}: ${JSON.stringify(gapBefore)} before it became ${JSON.stringify(gapAfter)}`);
      if (node.type === 'object') {
        const key = (text: string, property: Node) => text.slice(property.offset, property.children![1]!.offset);
        if (key(before, child) !== key(after, other))
          changed.push(`${JSON.stringify(pathOf(child, index))}: its key became ${key(after, other)}`);
        walk(child.children![1]!, pathOf(child, index));
      } else walk(child, pathOf(child, index));
      previous = [child, other];
    });
    // After the last item, baton's go in; what closed the container still closes it.
    const last = children.at(-1);
    const closing = last ? before.slice(end(last), end(node)) : '';
    if (last && !after.slice(there.offset, end(there)).endsWith(closing))
      changed.push(`${JSON.stringify(path)}: no longer ends in ${JSON.stringify(closing)}`);
  };
  const tree = parseTree(before, [], { allowTrailingComma: true });
  if (tree) walk(tree, []);
  return changed;
}
