import { describe, expect, it } from 'vitest';

import { CAPABILITY_IDS, SUPPORT_LEVELS } from '../../src/clients/adapter.ts';
import {
  AGENT_CLIENT_IDS,
  defineAgentClientAdapter,
  getAgentClientAdapter,
  getAgentClientCapability,
  isAgentClientId,
  isLifecycleClientId,
  LIFECYCLE_CLIENT_IDS,
  stageAgentNames,
  supportsOrchestration,
} from '../../src/core/clients.ts';
import type { CapabilityId } from '../../src/clients/adapter.ts';

function allCapabilities(level: string): Record<string, { level: string }> {
  return Object.fromEntries(CAPABILITY_IDS.map((capability) => [capability, { level }]));
}

describe('vocabulary', () => {
  it('has the 0.9.x capability ids and support levels', () => {
    expect(CAPABILITY_IDS).toEqual(['instructions', 'skills', 'commands', 'hooks', 'subagents', 'orchestration', 'sandbox', 'verification']);
    expect(SUPPORT_LEVELS).toEqual(['compatible', 'integrated', 'verified', 'experimental', 'unsupported']);
  });

  it('isAgentClientId knows exactly the four clients', () => {
    for (const id of ['claude-code', 'codex', 'gemini-cli', 'opencode']) expect(isAgentClientId(id)).toBe(true);
    for (const id of ['claude', 'Codex', 'antigravity-cli', 'traecli', '', 'toString', '__proto__']) expect(isAgentClientId(id)).toBe(false);
  });
});

describe('defineAgentClientAdapter', () => {
  it('accepts an adapter declaring every capability and freezes it', () => {
    const adapter = defineAgentClientAdapter({ id: 'codex', displayName: 'Codex', capabilities: allCapabilities('verified') });
    expect(adapter.capabilities.hooks).toEqual({ level: 'verified' });
    expect(Object.isFrozen(adapter)).toBe(true);
    expect(Object.isFrozen(adapter.capabilities)).toBe(true);
  });

  it.each(CAPABILITY_IDS)('throws when %s is missing (no defaulting)', (capability) => {
    const capabilities = allCapabilities('compatible');
    delete capabilities[capability];
    expect(() => defineAgentClientAdapter({ id: 'codex', displayName: 'Codex', capabilities })).toThrow(
      `Agent Client adapter 'codex' must declare capability '${capability}'`,
    );
  });

  it.each([
    ['an unknown level', { level: 'partial' }, "invalid support level 'partial'"],
    ['an empty level', { level: '' }, "invalid support level ''"],
    ['a missing level', {}, "invalid support level 'undefined'"],
    ['a null entry', null, "invalid support level 'undefined'"],
  ])('throws for %s', (_label, support, message) => {
    const capabilities = { ...allCapabilities('compatible'), orchestration: support } as Record<string, { level: string }>;
    expect(() => defineAgentClientAdapter({ id: 'codex', displayName: 'Codex', capabilities })).toThrow(message);
  });

  it('throws for an unknown capability or client id', () => {
    expect(() =>
      defineAgentClientAdapter({ id: 'codex', displayName: 'Codex', capabilities: { ...allCapabilities('compatible'), telepathy: { level: 'verified' } } }),
    ).toThrow("Agent Client adapter 'codex' declares unknown capability 'telepathy'");
    expect(() => defineAgentClientAdapter({ id: 'vim', displayName: 'Vim', capabilities: allCapabilities('compatible') })).toThrow("Unknown Agent Client id 'vim'");
  });
});

describe('registry', () => {
  it('registers every client id', () => {
    for (const id of AGENT_CLIENT_IDS) {
      const adapter = getAgentClientAdapter(id);
      expect(adapter.id).toBe(id);
      expect(Object.keys(adapter.capabilities).sort()).toEqual([...CAPABILITY_IDS].sort());
    }
  });

  it('has the 0.9.2 subagents / orchestration matrix', () => {
    const matrix = Object.fromEntries(
      AGENT_CLIENT_IDS.map((id) => [id, [getAgentClientCapability(id, 'subagents').level, getAgentClientCapability(id, 'orchestration').level]]),
    );
    expect(matrix).toEqual({
      'claude-code': ['experimental', 'experimental'],
      codex: ['experimental', 'experimental'],
      'gemini-cli': ['unsupported', 'unsupported'],
      opencode: ['unsupported', 'unsupported'],
    });
  });

  it('supportsOrchestration: claude-code and codex only', () => {
    expect(supportsOrchestration('claude-code')).toBe(true);
    expect(supportsOrchestration('codex')).toBe(true);
    expect(supportsOrchestration('gemini-cli')).toBe(false);
    expect(supportsOrchestration('opencode')).toBe(false);
  });

  it('throws for unknown client ids', () => {
    expect(() => getAgentClientCapability('vim', 'subagents')).toThrow("No Agent Client adapter registered for 'vim'");
    expect(() => getAgentClientCapability('__proto__', 'subagents')).toThrow("No Agent Client adapter registered for '__proto__'");
    expect(() => getAgentClientAdapter('')).toThrow("No Agent Client adapter registered for ''");
  });

  it('throws for an unknown capability id', () => {
    expect(() => getAgentClientCapability('codex', 'telepathy' as CapabilityId)).toThrow("Unknown Agent Client capability 'telepathy'");
  });

  it('returns { level } objects', () => {
    expect(getAgentClientCapability('codex', 'orchestration')).toEqual({ level: 'experimental' });
  });
});

describe('lifecycle clients', () => {
  it('are exactly the clients of the matrix that support orchestration', () => {
    expect([...LIFECYCLE_CLIENT_IDS]).toEqual(AGENT_CLIENT_IDS.filter((id) => supportsOrchestration(id)));
    expect([...LIFECYCLE_CLIENT_IDS]).toEqual(['claude-code', 'codex']);
  });

  it('isLifecycleClientId accepts only those', () => {
    for (const id of ['claude-code', 'codex']) expect(isLifecycleClientId(id)).toBe(true);
    for (const id of ['gemini-cli', 'opencode', 'claude', '', 'toString', undefined, 7]) expect(isLifecycleClientId(id)).toBe(false);
  });

  it('stage agent names: Claude Code skills report `claude` (or `claude-code`); others their client id', () => {
    expect(stageAgentNames('claude-code')).toEqual(['claude', 'claude-code']);
    expect(stageAgentNames('codex')).toEqual(['codex']);
  });
});
