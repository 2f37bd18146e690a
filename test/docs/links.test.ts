import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/processes.ts';

// The README and docs/ are what a newcomer reads first: every relative link must resolve, and every
// section a code comment cites (`docs/lifecycle.md §7.3`, `docs/architecture.md "Queue semantics"`)
// must exist, so the comments cannot drift away from the documents.

const DOCS_DIR = path.join(PROJECT_ROOT, 'docs');
const CODE_DIRS = ['src', 'test', 'bench', 'scripts'];

/** The README, docs/ and the other hand-written READMEs (bench/results holds generated files). */
function markdownFiles(): string[] {
  const docs = fs
    .readdirSync(DOCS_DIR)
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.join(DOCS_DIR, name));
  const readmes = codeFiles().filter((file) => path.basename(file) === 'README.md');
  return [path.join(PROJECT_ROOT, 'README.md'), ...docs, ...readmes];
}

function codeFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'results' && entry.name !== 'fixtures') walk(full);
      } else if (/\.(ts|mjs|js|md)$/.test(entry.name)) {
        found.push(full);
      }
    }
  };
  for (const dir of CODE_DIRS) walk(path.join(PROJECT_ROOT, dir));
  return found;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function headingsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map((match) => match[1]!);
}

/** Relative links `[text](target)` outside code blocks and inline code. */
function relativeLinksOf(file: string): string[] {
  const text = fs
    .readFileSync(file, 'utf8')
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!).filter((target) => !/^[a-z]+:/i.test(target));
}

describe('README.md, docs/ and the other READMEs', () => {
  it('has the documents the README and the comments point to', () => {
    for (const name of ['README.md', 'architecture.md', 'lifecycle.md', 'scenarios.md', 'differences.md']) {
      expect(fs.existsSync(path.join(DOCS_DIR, name)), `docs/${name}`).toBe(true);
    }
  });

  it('every relative link resolves to an existing file, and every #anchor to a heading of it', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of markdownFiles()) {
      for (const target of relativeLinksOf(file)) {
        checked += 1;
        const [linkPath, anchor] = target.split('#', 2) as [string, string | undefined];
        const resolved = linkPath === '' ? file : path.resolve(path.dirname(file), decodeURI(linkPath));
        const where = `${path.relative(PROJECT_ROOT, file)} → ${target}`;
        if (!fs.existsSync(resolved)) {
          broken.push(`${where}: no such file`);
          continue;
        }
        if (anchor && resolved.endsWith('.md') && !headingsOf(resolved).map(anchorOf).includes(anchor)) {
          broken.push(`${where}: no heading with anchor #${anchor}`);
        }
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });

  it('the README links to every document under docs/', () => {
    const readme = fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
    for (const name of fs.readdirSync(DOCS_DIR).filter((entry) => entry.endsWith('.md'))) {
      expect(readme, `README.md links docs/${name}`).toContain(`](docs/${name})`);
    }
  });
});

describe('documents cited by code comments', () => {
  const files = codeFiles();

  it('no file cites a spec document that is not in docs/', () => {
    // The upper-case names the documents had before they moved to docs/ (lifecycle.md was cited as
    // its upper-case twin), and any upper-case document cited with a § section.
    const formerNames = fs
      .readdirSync(DOCS_DIR)
      .filter((name) => name !== 'README.md' && name.endsWith('.md'))
      .map((name) => name.toUpperCase().replace(/\.MD$/, '.md'));
    const offenders: string[] = [];
    for (const file of files) {
      fs.readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          const where = `${path.relative(PROJECT_ROOT, file)}:${index + 1}`;
          for (const match of line.matchAll(/(?<![\w/.-])([A-Z][A-Z_-]+\.md)\b(\s*§)?/g)) {
            if (formerNames.includes(match[1]!) || match[2]) offenders.push(`${where}: ${match[1]}`);
          }
          for (const match of line.matchAll(/\bdocs\/([\w.-]+\.md)/g)) {
            if (!fs.existsSync(path.join(DOCS_DIR, match[1]!))) offenders.push(`${where}: docs/${match[1]} does not exist`);
          }
        });
    }
    expect(offenders).toEqual([]);
  });

  it('every cited section of docs/lifecycle.md exists (§N and §N.M, ranges included)', () => {
    const sections = new Set(
      headingsOf(path.join(DOCS_DIR, 'lifecycle.md'))
        .map((heading) => /^(\d+(?:\.\d+)?)\.?\s/.exec(heading)?.[1])
        .filter(Boolean),
    );
    const missing: string[] = [];
    let cited = 0;
    for (const file of files) {
      for (const match of fs.readFileSync(file, 'utf8').matchAll(/docs\/lifecycle\.md'?s? (§[\d.§–-]+)/g)) {
        for (const number of match[1]!.match(/\d+(?:\.\d+)?/g) ?? []) {
          cited += 1;
          if (!sections.has(number)) missing.push(`${path.relative(PROJECT_ROOT, file)}: §${number}`);
        }
      }
    }
    expect(missing).toEqual([]);
    expect(cited).toBeGreaterThan(20);
  });

  it('every cited section of docs/architecture.md exists ("Name" and decision N)', () => {
    const architecture = path.join(DOCS_DIR, 'architecture.md');
    const headings = headingsOf(architecture);
    const decisions = /## Decisions\n([\s\S]*?)\n## /.exec(fs.readFileSync(architecture, 'utf8'))?.[1] ?? '';
    const missing: string[] = [];
    let cited = 0;
    for (const file of files) {
      const text = fs.readFileSync(file, 'utf8');
      for (const match of text.matchAll(/docs\/architecture\.md"?,? "([^"]+)"/g)) {
        cited += 1;
        if (!headings.some((heading) => heading.startsWith(match[1]!))) missing.push(`${path.relative(PROJECT_ROOT, file)}: "${match[1]}"`);
      }
      for (const match of text.matchAll(/docs\/architecture\.md,? decision (\d+)/g)) {
        cited += 1;
        if (!new RegExp(`^${match[1]}\\. `, 'm').test(decisions))
          missing.push(`${path.relative(PROJECT_ROOT, file)}: decision ${match[1]}`);
      }
    }
    expect(missing).toEqual([]);
    expect(cited).toBeGreaterThan(8);
  });
});
