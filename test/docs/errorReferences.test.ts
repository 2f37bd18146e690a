import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { HEADLESS_COMMANDS } from '../../src/cli/headlessReview.ts';
import { LIFECYCLE_INTENTS } from '../../src/core/intents.ts';
import { PROJECT_ROOT } from '../support/processes.ts';

// Every message and hint baton can print names something that exists in the installed package: a
// `baton` command, a document of docs/ and its section, a README section; never a file of this
// checkout that the package does not ship (compose.yaml, scripts/), nor one of its npm scripts.
// The words of agent-infra 0.9.2 that name agent-infra's own things are kept in one table, for the
// agent-infra shim only (src/cli/agentInfraWords.ts). This walks every string literal of src/ (the
// parts of template literals around their substitutions), not the comments.

type Literal = { file: string; text: string };

/** Stands for a template literal's substitution. */
const SUBSTITUTION = '\u0024{…}';

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** The string literals of src/, a template literal as its parts joined by `${…}`. */
function literals(): Literal[] {
  const found: Literal[] = [];
  for (const file of sourceFiles(path.join(PROJECT_ROOT, 'src'))) {
    const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const relative = path.relative(PROJECT_ROOT, file);
    const visit = (node: ts.Node): void => {
      if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) found.push({ file: relative, text: node.text });
      else if (ts.isTemplateExpression(node))
        found.push({ file: relative, text: [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(SUBSTITUTION) });
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

/** The commands of `baton`: the keys of COMMANDS in src/cli/main.ts. */
function batonCommands(): Set<string> {
  const main = fs.readFileSync(path.join(PROJECT_ROOT, 'src', 'cli', 'main.ts'), 'utf8');
  const table = /const COMMANDS\b[\s\S]*?= \{\n([\s\S]*?)\n\};/.exec(main)?.[1] ?? '';
  return new Set([...table.matchAll(/^\s*'?([a-z][a-z-]*)'?:/gm)].map((match) => match[1]!));
}

/** The headings of a Markdown file outside code blocks, Markdown backticks dropped. */
function headingsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map((match) => match[1]!.replace(/`/g, ''));
}

/** What `npm pack` ships: package.json's `files` (top-level names), and package.json itself. */
function packedTopLevel(): Set<string> {
  const files = (JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { files: string[] }).files;
  return new Set(['package.json', ...files.map((entry) => entry.split('/')[0]!)]);
}

/**
 * Top-level files and folders of this checkout that the package does not ship and that a user's own
 * project would not have under the same name (dot files and package-lock.json are the user's too).
 */
function checkoutOnly(): string[] {
  const tracked = execFileSync('git', ['ls-files'], { cwd: PROJECT_ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
  const packed = packedTopLevel();
  const top = new Map<string, boolean>();
  for (const file of tracked) top.set(file.split('/')[0]!, file.includes('/'));
  return [...top]
    .filter(([name]) => !packed.has(name) && !name.startsWith('.') && name !== 'package-lock.json')
    .map(([name, isDir]) => (isDir ? `${name}/` : name));
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Where 0.9.2's own words are kept, for the agent-infra shim. */
const AGENT_INFRA_WORDS_FILE = path.join('src', 'cli', 'agentInfraWords.ts');

describe('what baton prints names things that exist in the installed package', () => {
  const all = literals();
  const where = (literal: Literal, what: string) => `${literal.file}: ${what}   [${literal.text.slice(0, 120)}]`;
  /** Every match of `pattern` in the literals, each with its literal. */
  const matchesOf = (pattern: RegExp) => all.flatMap((literal) => [...literal.text.matchAll(pattern)].map((match) => ({ literal, match })));

  it('finds the literals, the commands and the documents (the checks below are not vacuous)', () => {
    expect(all.length).toBeGreaterThan(2000);
    expect([...batonCommands()].sort()).toEqual(
      expect.arrayContaining(['demo', 'doctor', 'init', 'install-hooks', 'new', 'runs', 'start', 'task', 'uninstall', 'worker']),
    );
    expect(checkoutOnly()).toEqual(expect.arrayContaining(['compose.yaml', 'scripts/', 'bench/']));
    expect(packedTopLevel()).toEqual(new Set(['package.json', 'bin', 'dist', 'docs', 'README.md', 'LICENSE']));
  });

  it('every `baton <command>` named as a command is one of the CLI commands (src/cli/main.ts)', () => {
    const commands = batonCommands();
    // A command: quoted or back-ticked (`'baton start'`, "`baton init`"), or followed by an option
    // (`baton worker --repo`). Prose ("baton wrote nothing") is neither.
    const found = matchesOf(/['"`]baton ([a-z][a-z-]*)|\bbaton ([a-z][a-z-]*) --?[a-z]/g);
    const wrong = found.flatMap(({ literal, match }) => {
      const name = match[1] ?? match[2]!;
      return commands.has(name) ? [] : [where(literal, `baton ${name}`)];
    });
    expect(wrong).toEqual([]);
    expect(found.length).toBeGreaterThan(40);
  });

  it('every `baton task <task> <intent>` names an intent baton has', () => {
    const found = matchesOf(/\bbaton task (?:<[a-z-]+>|\$\{…\}|#?\d+|TASK-[\d-]+|auto) ([a-z][a-z-]*)/g);
    const wrong = found.flatMap(({ literal, match }) =>
      ([...LIFECYCLE_INTENTS, ...HEADLESS_COMMANDS] as readonly string[]).includes(match[1]!) ? [] : [where(literal, `intent ${match[1]}`)],
    );
    expect(wrong).toEqual([]);
    expect(found.length).toBeGreaterThan(10);
  });

  it('every docs/<file>.md exists and every section cited of it ("Name", §N) is one of its headings', () => {
    const found = matchesOf(/docs\/([\w.-]+\.md)(?:,?\s+"([^"]+)"|,?\s+§(\d+(?:\.\d+)?))?/g);
    const wrong = found.flatMap(({ literal, match }) => {
      const file = path.join(PROJECT_ROOT, 'docs', match[1]!);
      if (!fs.existsSync(file)) return [where(literal, `docs/${match[1]} does not exist`)];
      const headings = headingsOf(file);
      const problems: string[] = [];
      if (match[2] !== undefined && !headings.some((heading) => heading.startsWith(match[2]!)))
        problems.push(where(literal, `docs/${match[1]} has no section "${match[2]}"`));
      if (match[3] !== undefined && !headings.some((heading) => new RegExp(`^${escapeRegExp(match[3]!)}\\.?\\s`).test(heading)))
        problems.push(where(literal, `docs/${match[1]} has no §${match[3]}`));
      return problems;
    });
    expect(wrong).toEqual([]);
    expect(found.length).toBeGreaterThan(2);
  });

  it('every README section cited (README, "Name") is one of its headings', () => {
    const headings = headingsOf(path.join(PROJECT_ROOT, 'README.md'));
    const wrong = matchesOf(/README(?:\.md)?,?\s+"([^"]+)"/g).flatMap(({ literal, match }) =>
      headings.some((heading) => heading.startsWith(match[1]!)) ? [] : [where(literal, `README has no section "${match[1]}"`)],
    );
    expect(wrong).toEqual([]);
  });

  it('names no file of this checkout that the package does not ship, and none of its npm scripts', () => {
    const names = checkoutOnly();
    const pattern = new RegExp(`(?<![\\w/.-])(${names.map(escapeRegExp).join('|')})(?![\\w-])`, 'g');
    const wrong: string[] = [];
    for (const literal of all) {
      for (const match of literal.text.matchAll(pattern)) wrong.push(where(literal, match[1]!));
      for (const match of literal.text.matchAll(/\bnpm (start|test|run [\w:-]+)/g)) wrong.push(where(literal, `npm ${match[1]}`));
    }
    expect(wrong).toEqual([]);
  });

  it("0.9.2's words for agent-infra's own things (`ai task: `, task-short-id.js) are only in the shim's table", () => {
    const wrong = all
      .filter((literal) => /\bai task: |task-short-id\.js/.test(literal.text) && literal.file !== AGENT_INFRA_WORDS_FILE)
      .map((literal) => where(literal, 'agent-infra 0.9.2 words'));
    expect(wrong).toEqual([]);
    // The table itself is read: it holds those words.
    const table = all.filter((literal) => literal.file === AGENT_INFRA_WORDS_FILE).map((literal) => literal.text);
    expect(table).toEqual(
      expect.arrayContaining(['ai task: current directory is not inside a git repository', "check 'task-short-id.js list'"]),
    );
  });
});
