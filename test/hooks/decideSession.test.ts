import { describe, expect, it } from 'vitest';
import { decideHook, headlessSessionOf } from '../../src/hooks/decide.ts';

// decideHook on session-level events (SessionStart, Stop): baton's only for a headless reviewer it
// started (BATON_HEADLESS_RECEIPT in the hook's environment); docs/clients.md "A reviewer from another vendor".

const headless = headlessSessionOf({ BATON_HEADLESS_RECEIPT: 'r-1' });

describe('decideHook: session events of a headless reviewer', () => {
  it('ignores SessionStart and Stop of any other session', () => {
    expect(decideHook('codex', { session_id: 's-1', hook_event_name: 'SessionStart' }, 'session-start')).toEqual({ kind: 'ignore' });
    expect(decideHook('claude-code', { session_id: 's-1', hook_event_name: 'Stop' })).toEqual({ kind: 'ignore' });
    expect(headlessSessionOf({})).toBeNull();
  });

  it("maps the headless session's start to the reviewer's activation, with the model its client reports", () => {
    const decision = decideHook('codex', { session_id: 's-1', model: 'gpt-5-codex' }, 'session-start', { headless });
    expect(decision).toMatchObject({
      kind: 'event',
      headlessReceipt: 'r-1',
      event: {
        intent: 'hook-start',
        client: 'codex',
        nativeAgent: 'agent-infra-lifecycle-reviewer',
        childId: 's-1',
        parentId: 'baton-headless:r-1',
        spawnMode: 'fresh',
        actualModel: 'gpt-5-codex',
      },
    });
  });

  it("maps the headless session's Stop to the reviewer's stop", () => {
    const decision = decideHook('claude-code', { session_id: 's-2', hook_event_name: 'Stop' }, undefined, { headless });
    expect(decision).toMatchObject({
      kind: 'event',
      headlessReceipt: 'r-1',
      event: { intent: 'hook-stop', client: 'claude-code', nativeAgent: 'agent-infra-lifecycle-reviewer', childId: 's-2' },
    });
  });

  it('refuses a session event without a session id', () => {
    expect(decideHook('codex', {}, 'session-stop', { headless })).toMatchObject({ kind: 'error' });
  });
});
