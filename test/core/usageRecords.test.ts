import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readUsageRecord } from '../../src/core/usageRecords.ts';
import { EXAMPLE_USAGE_DIR } from '../support/fixturePaths.ts';

// The records are the files real runs of the pinned clients wrote (test/agents/stageCost.test.ts
// makes the same run), with long strings cut and temporary paths replaced. In each, the scripted
// model server reported, for the child's two requests, input 100 and 101, output 20 and 21, cache
// reads 7 and 7 and (Anthropic only) cache writes 3 and 3.

function fixture(name: string): string {
  return fs.readFileSync(path.join(EXAMPLE_USAGE_DIR, name), 'utf8');
}

const COPILOT_CHILD = '4e5a8d08-49bb-4140-99c9-72f18144d45e';

describe('readUsageRecord', () => {
  it('claude-code-transcript (2.1.337): each assistant message once, with its final usage and model', () => {
    const cost = readUsageRecord('claude-code-transcript', fixture('claude-code-2.1.337/subagent-transcript.jsonl'), '/t.jsonl', 'x');
    expect(cost).toMatchObject({
      format: 'claude-code-transcript',
      file: '/t.jsonl',
      read: true,
      note: null,
      requests: 2,
      tokens: { input: 201, output: 41, cacheRead: 14, cacheCreation: 6 },
      models: [{ model: 'claude-sonnet-4-5', requests: 2, input: 201, output: 41, cacheRead: 14, cacheCreation: 6 }],
    });
    expect(cost.wallMs).toBe(Date.parse(cost.lastAt!) - Date.parse(cost.firstAt!));
    expect(cost.wallMs).toBeGreaterThan(0);
  });

  it('claude-code-transcript (2.1.26): the usage of the stream’s first event, as that version wrote it (output 1 a request)', () => {
    const cost = readUsageRecord('claude-code-transcript', fixture('claude-code-2.1.26/subagent-transcript.jsonl'), '/t.jsonl', 'x');
    expect(cost).toMatchObject({ read: true, requests: 2, tokens: { input: 201, output: 2, cacheRead: 14, cacheCreation: 6 } });
  });

  it('claude-code-transcript: a message written as several lines (one per content block) is one request; <synthetic> ones are none', () => {
    const text = fixture('claude-code-2.1.337/subagent-transcript.jsonl');
    const lines = text.trim().split('\n');
    const assistant = lines.find((line) => JSON.parse(line).type === 'assistant')!;
    const synthetic = JSON.parse(assistant);
    synthetic.message = { ...synthetic.message, id: 'msg_synthetic', model: '<synthetic>' };
    const other = JSON.parse(assistant);
    other.message = { ...other.message, id: 'msg_opus', model: 'claude-opus-4-1', usage: { input_tokens: 5, output_tokens: 6 } };
    const cost = readUsageRecord(
      'claude-code-transcript',
      [...lines, assistant, JSON.stringify(synthetic), JSON.stringify(other), '{"type":"assist'].join('\n'),
      '/t.jsonl',
      'x',
    );
    expect(cost.requests).toBe(3);
    expect(cost.models.map((model) => [model.model, model.requests, model.input, model.output])).toEqual([
      ['claude-sonnet-4-5', 2, 201, 41],
      ['claude-opus-4-1', 1, 5, 6],
    ]);
    expect(cost.note).toBe('1 line of the record did not parse and was skipped');
  });

  for (const version of ['0.171.0', '0.148.0']) {
    it(`codex-rollout (${version}): each increase of the thread's token_count is one response; cached input counted apart`, () => {
      const text = fixture(`codex-${version}/child-rollout.jsonl`);
      const cost = readUsageRecord('codex-rollout', text, '/r.jsonl', 'x');
      expect(cost).toMatchObject({
        format: 'codex-rollout',
        read: true,
        note: null,
        requests: 2,
        tokens: { input: 201, output: 41, cacheRead: 14, cacheCreation: 0 },
        models: [{ model: 'gpt-5-codex', requests: 2 }],
      });
      // The same totals repeated (a rate-limit update) are no new response.
      const lastCount = text
        .trim()
        .split('\n')
        .filter((line) => line.includes('"token_count"'))
        .at(-1)!;
      expect(readUsageRecord('codex-rollout', `${text}${lastCount}\n`, '/r.jsonl', 'x').requests).toBe(2);
    });
  }

  it('copilot-events (1.0.102): only the usage records of the child’s agentId, cached input counted apart', () => {
    const text = fixture('copilot-cli-1.0.102/events.jsonl');
    const cost = readUsageRecord('copilot-events', text, '/e.jsonl', COPILOT_CHILD);
    expect(cost).toMatchObject({
      read: true,
      note: null,
      requests: 2,
      tokens: { input: 201, output: 41, cacheRead: 14, cacheCreation: 0 },
      models: [{ model: 'gpt-5', requests: 2 }],
    });
    expect(cost.wallMs).toBeGreaterThan(0);
    // The session's own requests (the parent) are not the child's.
    expect(readUsageRecord('copilot-events', text, '/e.jsonl', 'another-child')).toMatchObject({
      requests: 0,
      wallMs: null,
      note: 'the record names no model request of the child',
    });
  });
});
