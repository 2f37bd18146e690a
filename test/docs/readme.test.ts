import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentSentence } from '../../src/cli/newTask.ts';
import { PROJECT_ROOT, runBaton } from '../support/processes.ts';

// The README is the adopter's page: at most 200 lines, and the first section after
// the pitch is "Use baton on your project" in about ten lines, whose commands are baton's commands
// as they are, with the package this checkout packs and the sentence `baton new` prints.

const README = fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
const VERSION = (JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function sections(text: string): Array<{ heading: string; body: string }> {
  const parts = text.split(/^## /m).slice(1);
  return parts.map((part) => ({ heading: part.slice(0, part.indexOf('\n')), body: part.slice(part.indexOf('\n') + 1) }));
}

describe('README.md', () => {
  it('is at most 200 lines', () => {
    expect(README.split('\n').length - 1).toBeLessThanOrEqual(200);
  });

  it('opens with "Use baton on your project", in about ten lines', () => {
    const [first] = sections(README);
    expect(first!.heading).toBe('Use baton on your project');
    const lines = first!.body.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('```'));
    expect(lines.length).toBeLessThanOrEqual(10);
  });

  it("its commands are baton's, with this package and the sentence baton new prints", async () => {
    const [first] = sections(README);
    const commands = /```sh\n([\s\S]*?)```/
      .exec(first!.body)![1]!
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter(Boolean);
    expect(commands[0]).toBe(`npm install -g ./baton-${VERSION}.tgz`);
    const batonCommands = commands.filter((command) => command.startsWith('baton '));
    expect(batonCommands.map((command) => command.split(' ')[1])).toEqual(['init', 'start', 'new']);
    for (const command of ['init', 'start', 'new', 'runs', 'doctor', 'uninstall']) {
      expect((await runBaton([command, '--help'])).code, command).toBe(0);
    }
    expect(first!.body).toContain(`"${agentSentence('01')}"`);
    expect(first!.body).toContain('baton runs --watch');
  });
});
