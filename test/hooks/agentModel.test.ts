import { describe, expect, it } from 'vitest';
import { frontmatterModel } from '../../src/hooks/agentModel.ts';

// The model a Claude Code agent profile sets, as the spawn claim reads it (src/hooks/agentModel.ts).

describe('frontmatterModel', () => {
  it('reads the model line of the frontmatter, quoted or not', () => {
    expect(frontmatterModel('---\nname: x\nmodel: claude-opus-5-5\n---\nbody\n')).toBe('claude-opus-5-5');
    expect(frontmatterModel('---\nmodel: "claude-sonnet-4-5"\nname: x\n---\n')).toBe('claude-sonnet-4-5');
  });

  it('no model, inherit, a model line outside the frontmatter, or no frontmatter: none', () => {
    expect(frontmatterModel('---\nname: x\n---\nmodel: claude-opus-5-5\n')).toBeNull();
    expect(frontmatterModel('---\nname: x\nmodel: inherit\n---\n')).toBeNull();
    expect(frontmatterModel('model: claude-opus-5-5\n')).toBeNull();
  });
});
