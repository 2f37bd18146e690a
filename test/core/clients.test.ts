import { describe, expect, it } from 'vitest';

import { CAPABILITY_IDS, SUPPORT_LEVELS } from '../../src/clients/facts.ts';
import { CLIENT_IDS, KNOWN_CLIENTS } from '../../src/clients/registry.ts';
import { KNOWN_CLIENT_IDS, isLifecycleClient, knownClient, stageAgentNames, supportsOrchestration } from '../../src/core/clients.ts';

describe('vocabulary', () => {
  it('has the 0.9.x capability ids and support levels', () => {
    expect(CAPABILITY_IDS).toEqual([
      'instructions',
      'skills',
      'commands',
      'hooks',
      'subagents',
      'orchestration',
      'sandbox',
      'verification',
    ]);
    expect(SUPPORT_LEVELS).toEqual(['compatible', 'integrated', 'verified', 'experimental', 'unsupported']);
  });

  it("knows exactly the four clients of 0.9.2, and baton's third adapted client, Copilot CLI", () => {
    expect([...KNOWN_CLIENT_IDS]).toEqual(['claude-code', 'codex', 'copilot-cli', 'gemini-cli', 'opencode']);
    for (const id of KNOWN_CLIENT_IDS) expect(knownClient(id)?.id).toBe(id);
    for (const id of ['claude', 'Codex', 'antigravity-cli', 'traecli', '', 'toString', '__proto__'])
      expect(knownClient(id)).toBeUndefined();
  });
});

describe('registry', () => {
  it('every client declares every capability, each with a support level, and no other', () => {
    for (const client of KNOWN_CLIENTS) {
      expect(Object.keys(client.capabilities).sort()).toEqual([...CAPABILITY_IDS].sort());
      for (const level of Object.values(client.capabilities)) expect(SUPPORT_LEVELS).toContain(level);
    }
  });

  it('has the 0.9.2 subagents / orchestration matrix', () => {
    const matrix = Object.fromEntries(
      KNOWN_CLIENTS.map((client) => [client.id, [client.capabilities.subagents, client.capabilities.orchestration]]),
    );
    expect(matrix).toEqual({
      'claude-code': ['experimental', 'experimental'],
      codex: ['experimental', 'experimental'],
      'copilot-cli': ['experimental', 'experimental'],
      'gemini-cli': ['unsupported', 'unsupported'],
      opencode: ['unsupported', 'unsupported'],
    });
  });

  it('supportsOrchestration: the adapted clients only', () => {
    expect(supportsOrchestration('claude-code')).toBe(true);
    expect(supportsOrchestration('codex')).toBe(true);
    expect(supportsOrchestration('copilot-cli')).toBe(true);
    expect(supportsOrchestration('gemini-cli')).toBe(false);
    expect(supportsOrchestration('opencode')).toBe(false);
  });

  it('an unknown client id supports nothing', () => {
    for (const id of ['vim', '__proto__', '']) expect(supportsOrchestration(id)).toBe(false);
  });
});

describe('lifecycle clients', () => {
  it('are exactly the clients of the matrix that support orchestration', () => {
    expect([...CLIENT_IDS]).toEqual(KNOWN_CLIENT_IDS.filter((id) => supportsOrchestration(id)));
    expect([...CLIENT_IDS]).toEqual(['claude-code', 'codex', 'copilot-cli']);
  });

  it('isLifecycleClient accepts only those', () => {
    for (const id of ['claude-code', 'codex', 'copilot-cli']) expect(isLifecycleClient(id)).toBe(true);
    for (const id of ['gemini-cli', 'opencode', 'claude', '', 'toString', undefined, 7]) expect(isLifecycleClient(id)).toBe(false);
  });

  it('stage agent names: Claude Code skills report `claude` (or `claude-code`); others their client id', () => {
    expect(stageAgentNames('claude-code')).toEqual(['claude', 'claude-code']);
    expect(stageAgentNames('codex')).toEqual(['codex']);
    expect(stageAgentNames('gemini-cli')).toEqual(['gemini-cli']);
  });
});
