import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clientAdapter } from '../../src/clients/registry.ts';
import { withGitignoreLine, withoutGitignoreLine, ignoresWorkspace } from '../../src/install/gitignore.ts';
import { SKILL_NAMES, guidanceOwner, stageSkill } from '../../src/install/guidance.ts';
import { BLOCK_BEGIN, BLOCK_END, withInstructionBlock, withoutInstructionBlock } from '../../src/install/instructions.ts';
import { mergeSettings, withoutBatonHooks } from '../../src/install/settings.ts';
import { withSandboxSettings, withoutSandboxSettings } from '../../src/clients/codex/config.ts';
import { TOML_CORPUS } from '../support/formattingCorpus.ts';

// The inverses `baton uninstall` relies on for a file changed since init (docs/adopting.md
// "Uninstall"): each takes out exactly baton's part and gives back the user's text.

const userText = fc
  .string({ unit: fc.constantFrom('a', 'b', ' ', '\n', '#', '-', '<', '!') })
  .filter((text) => !text.includes(BLOCK_BEGIN) && !text.includes(BLOCK_END));

describe('the instructions block', () => {
  it('comes out again, leaving the user text (a final newline added where the append needed one)', () => {
    fc.assert(
      fc.property(userText, (text) => {
        const back = withoutInstructionBlock(withInstructionBlock(text, '## baton\n\nbody\n'));
        expect(back).toBe(text === '' ? '' : text.endsWith('\n') ? text : `${text}\n`);
      }),
    );
  });

  it('comes out of the middle of a file, with the blank line before it', () => {
    const text = `# Mine\n\n${BLOCK_BEGIN}\nold\n${BLOCK_END}\n\n## Later\n`;
    expect(withoutInstructionBlock(text)).toBe('# Mine\n\n## Later\n');
    expect(withoutInstructionBlock('# no block\n')).toBe('# no block\n');
  });
});

describe('the .gitignore line', () => {
  it('is added only where the workspace is not ignored yet, and comes out again', () => {
    expect(withGitignoreLine(null)).toBe('.agents/workspace/\n');
    expect(withGitignoreLine('node_modules/')).toBe('node_modules/\n.agents/workspace/\n');
    expect(withGitignoreLine('.agents/\n')).toBe('.agents/\n');
    expect(ignoresWorkspace('/.agents/workspace\n')).toBe(true);
    expect(ignoresWorkspace('.agents/workspace/*.log\n')).toBe(false);
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('x', '/', '\n', '*') }), (text) => {
        const added = withGitignoreLine(text);
        if (added !== text) expect(withoutGitignoreLine(added)).toBe(text.endsWith('\n') || text === '' ? text : `${text}\n`);
      }),
    );
  });
});

describe("baton's hook entries", () => {
  it("come out of merged settings, leaving the user's hooks and keys", () => {
    const client = clientAdapter('codex')!;
    const user = {
      model: 'x',
      hooks: {
        Stop: [{ hooks: [{ type: 'command', command: 'echo bye' }] }],
        SubagentStart: [{ matcher: 'mine', hooks: [{ type: 'command', command: 'echo hi' }] }],
      },
    };
    const merged = mergeSettings(user, client, (args) => ['baton', ...args].join(' '));
    expect(merged.hooks!.SubagentStart).toHaveLength(2);
    expect(withoutBatonHooks(merged)).toEqual(user);
    expect(withoutBatonHooks(mergeSettings({}, client, (args) => ['baton', ...args].join(' ')))).toEqual({});
  });
});

describe("Codex's sandbox settings in .codex/config.toml", () => {
  const roots = ['../.agents', '../.git'];

  it("come out of every corpus formatting again, the user's bytes kept (a final newline they lacked aside)", () => {
    for (const entry of TOML_CORPUS) {
      const added = withSandboxSettings(entry.text, roots, 'config.toml');
      const eol = entry.text.includes('\r\n') ? '\r\n' : '\n';
      expect(added.replace(/\r\n/g, '').includes('\n'), entry.name).toBe(eol === '\n' && added.includes('\n'));
      if (/^\[sandbox_workspace_write\]/m.test(entry.text)) {
        // The user's own section: baton's roots join its array in place, every other line stays.
        for (const line of entry.text.split(eol).filter((line) => !/network_access|writable_roots|^\]|^ {2}"/.test(line)))
          expect(added.split(eol), entry.name).toContain(line);
        continue;
      }
      expect(added.startsWith(entry.text), entry.name).toBe(true);
      const back = entry.text === '' || entry.text.endsWith('\n') ? entry.text : `${entry.text}${eol}`;
      expect(withoutSandboxSettings(added, roots, 'config.toml'), entry.name).toBe(back);
    }
  });
});

describe('the stage guidance', () => {
  it("is baton's as written, edited once changed, and foreign without the marker", () => {
    for (const id of ['claude-code', 'codex']) {
      for (const name of SKILL_NAMES) {
        const text = stageSkill(name, clientAdapter(id)!, 'baton');
        expect(guidanceOwner(text), `${id} ${name}`).toBe('baton');
        expect(guidanceOwner(text.replace('## Do', '## Do this'))).toBe('edited');
        expect(text).toMatch(new RegExp(`^---\\nname: ${name}\\ndescription: ".+"\\n---\\n`));
      }
    }
    expect(guidanceOwner('---\nname: analyze-task\n---\n\nagent-infra text\n')).toBe('foreign');
  });

  it('gives every reviewer the review format the router reads, and every stage its hand-over', () => {
    const codex = clientAdapter('codex')!;
    for (const name of ['review-analysis', 'review-plan', 'review-code'] as const) {
      const text = stageSkill(name, codex, 'baton');
      expect(text).toMatch(/^- \*\*Review Input\*\*: `<the (analysis|plan|code) file you reviewed>`$/m);
      expect(text).toContain('- **Findings (AI-actionable)**: <B> blockers, <M> majors, <N> minors / **Manual validation**: <V>');
      expect(text).toContain(
        `baton task <task-id> complete-stage --stage ${name} --round <round> --artifact <artifact> --agent codex --content - <<'BATON_ARTIFACT'`,
      );
    }
    expect(stageSkill('commit', codex, 'baton')).toContain('baton task <task-id> stage-completed --agent codex');
  });
});
