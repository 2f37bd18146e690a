import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { userEnvIn } from '../support/agentClients.ts';
import { JSON_CORPUS, TOML_CORPUS, keptIn, userBytesChanged } from '../support/formattingCorpus.ts';
import { git } from '../support/gitRepo.ts';
import { projectDirs, projectFiles } from '../support/projectFiles.ts';
import type { CliRun } from '../support/processes.ts';
import { runBaton } from '../support/processes.ts';

// `baton init` then `baton uninstall` on the command line, over every formatting of the corpus
// (docs/adopting.md "Uninstall"): init leaves every byte of the user's own entries in Claude Code's
// settings, Codex's hooks file and Codex's project config (and in the clients' per-user config it
// trusts the project in); its record keeps each file's exact bytes from before; uninstall gives
// every file back byte for byte. A file the user changed since init loses only baton's part.

let work: string;
let root: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-bytes-')));
  root = path.join(work, 'project');
  fs.mkdirSync(root);
  git(root, ['init', '-q']);
  env = userEnvIn(work);
});
afterEach(() => fs.rmSync(work, { recursive: true, force: true }));

const baton = (args: string[]): Promise<CliRun> => runBaton(args, { cwd: root, env });
const read = (file: string) => fs.readFileSync(file, 'utf8');

function write(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/** Claude Code's own config is JSON without comments. */
const STRICT_JSON = JSON_CORPUS.filter((entry) => {
  try {
    JSON.parse(entry.text);
    return true;
  } catch {
    return false;
  }
});

describe('baton init → uninstall over the formatting corpus', () => {
  JSON_CORPUS.forEach((entry, index) => {
    const codexHooks = JSON_CORPUS[(index + 5) % JSON_CORPUS.length]!;
    const codexConfig = TOML_CORPUS[index % TOML_CORPUS.length]!;
    const claudeUserConfig = STRICT_JSON[index % STRICT_JSON.length]!;
    it(`settings: ${entry.name}; hooks.json: ${codexHooks.name}; config.toml: ${codexConfig.name}`, async () => {
      const eol = index % 2 === 0 ? '\n' : '\r\n';
      const files: Record<string, string> = {
        '.claude/settings.json': entry.text,
        '.codex/hooks.json': codexHooks.text,
        '.codex/config.toml': codexConfig.text,
        'CLAUDE.md': `# Mine${eol}${eol}Tabs, not spaces.`,
        'AGENTS.md': `# Agents${eol}${eol}Run the tests.${eol}`,
        '.gitignore': 'node_modules/',
      };
      for (const [file, text] of Object.entries(files)) write(path.join(root, file), text);
      // The clients' per-user config, which --trust changes (and uninstall leaves as it is).
      const claudeConfig = path.join(work, 'claude-home', '.claude.json');
      const codexUserConfig = path.join(work, 'codex-home', 'config.toml');
      write(claudeConfig, claudeUserConfig.text);
      write(codexUserConfig, codexConfig.text);
      const before = projectFiles(root);
      const dirs = projectDirs(root);

      const init = await baton(['init', '--trust']);
      expect(init.code, init.stderr).toBe(0);
      for (const file of ['.claude/settings.json', '.codex/hooks.json', 'CLAUDE.md', 'AGENTS.md', '.gitignore']) {
        const after = read(path.join(root, file));
        expect(after, file).not.toBe(files[file]);
        expect(keptIn(files[file]!, after), `${file} keeps every byte of the user's`).toBe(true);
        if (file.endsWith('.json')) expect(userBytesChanged(files[file]!, after), file).toEqual([]);
      }
      // The user's own sandbox table gets network access turned on; any other config keeps every byte.
      if (!codexConfig.text.includes('[sandbox_workspace_write]'))
        expect(keptIn(codexConfig.text, read(path.join(root, '.codex/config.toml')))).toBe(true);
      expect(userBytesChanged(claudeUserConfig.text, read(claudeConfig)), 'the Claude Code config keeps every byte').toEqual([]);
      expect(keptIn(codexConfig.text, read(codexUserConfig)), 'the Codex config keeps every byte').toBe(true);
      // The record keeps each file's exact bytes from before.
      const record = JSON.parse(read(path.join(root, '.git', 'baton', 'init.json'))) as {
        files: { path: string; before: string | null }[];
      };
      for (const [file, text] of Object.entries(files))
        expect(record.files.find((recorded) => recorded.path === file)?.before, file).toBe(text);

      const uninstall = await baton(['uninstall']);
      expect(uninstall.code, uninstall.stderr).toBe(0);
      expect(projectFiles(root)).toEqual(before);
      expect(projectDirs(root)).toEqual(dirs);
    });
  });

  it("keeps what the user changed since init in their own entries, taking out only baton's", async () => {
    const settings = JSON_CORPUS.find((entry) => entry.name === 'one-line arrays, deny before allow')!.text;
    const config = TOML_CORPUS.find((entry) => entry.name === 'a model and a profile')!.text;
    write(path.join(root, '.claude/settings.json'), settings);
    write(path.join(root, '.codex/config.toml'), config);
    expect((await baton(['init'])).code).toBe(0);
    const edit = (file: string, from: string, to: string) => {
      const text = read(path.join(root, file));
      expect(text).toContain(from);
      fs.writeFileSync(path.join(root, file), text.replace(from, to));
    };
    edit('.claude/settings.json', '"model": "sonnet"', '"model": "opus"');
    edit('.claude/settings.json', '"Read", "Bash(baton task *)"', '"Read", "Edit", "Bash(baton task *)"');
    edit('.codex/config.toml', 'model = "gpt-5-codex"', 'model = "o3"');

    const uninstall = await baton(['uninstall']);
    expect(uninstall.code, uninstall.stderr).toBe(0);
    expect(uninstall.stdout).toMatch(/^ {2}updated +\.claude\/settings\.json$/m);
    expect(read(path.join(root, '.claude/settings.json'))).toBe(
      settings.replace('"model": "sonnet"', '"model": "opus"').replace('"Read"]', '"Read", "Edit"]'),
    );
    expect(read(path.join(root, '.codex/config.toml'))).toBe(config.replace('model = "gpt-5-codex"', 'model = "o3"'));
  });
});
