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
