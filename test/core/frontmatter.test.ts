import fs from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { FrontmatterError, parseTaskFrontmatter, parseTypedTaskFrontmatter, updateTaskFrontmatter } from '../../src/core/frontmatter.ts';
import type { FrontmatterValue } from '../../src/core/frontmatter.ts';
import { EXAMPLE_TASK_DIR } from '../support/fixturePaths.ts';

const EXAMPLE_TASK = `${EXAMPLE_TASK_DIR}/task.md`;

/** The FrontmatterError `fn` throws (fails the test when it does not throw one). */
function caught(fn: () => unknown): FrontmatterError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(FrontmatterError);
    return error as FrontmatterError;
  }
  throw new Error('expected a FrontmatterError');
}

function expectDocumentError(content: string, message: string): void {
  const error = caught(() => parseTypedTaskFrontmatter(content));
  expect(error.code).toBe('TASK_DOCUMENT_INVALID');
  expect(error.message).toBe(message);
  expect(error.name).toBe('FrontmatterError');
}

describe('parseTypedTaskFrontmatter', () => {
  it('parses the example task.md', () => {
    expect(parseTypedTaskFrontmatter(fs.readFileSync(EXAMPLE_TASK, 'utf8'))).toEqual({
      id: 'TASK-20260101-000001',
      type: 'feature',
      branch: 'demo-feature-retry-budget',
      workflow: 'feature-development',
      status: 'active',
      created_at: '2026-01-01 09:00:00+00:00',
      updated_at: '2026-01-01 11:20:00+00:00',
      agent_infra_version: 'v0.9.2',
      current_step: 'technical-design',
      assigned_to: 'claude',
    });
  });

  it('parses values as YAML scalars', () => {
    const content = [
      '---',
      'plain: hello world',
      "single: 'quoted # not a comment'",
      'double: "a\\tb"',
      'commented: value # trailing comment',
      'yes_flag: true',
      'no_flag: false',
      'int: 42',
      'neg: -7',
      'float: 1.5',
      'hex: 0x1F',
      'nothing: null',
      'tilde: ~',
      'empty:',
      'spaces:    ',
      'numeric_string: "42"',
      'date: 2026-01-01',
      'yes_word: yes',
      'key with spaces  : v',
      '---',
      '# body',
    ].join('\n');
    expect(parseTypedTaskFrontmatter(content)).toEqual({
      plain: 'hello world',
      single: 'quoted # not a comment',
      double: 'a\tb',
      commented: 'value',
      yes_flag: true,
      no_flag: false,
      int: 42,
      neg: -7,
      float: 1.5,
      hex: 31,
      nothing: null,
      tilde: null,
      empty: '',
      spaces: '',
      numeric_string: '42',
      date: '2026-01-01',
      yes_word: 'yes',
      'key with spaces': 'v',
    });
  });

  it('ignores blank lines and comment lines', () => {
    expect(parseTypedTaskFrontmatter('---\n\n# a comment\n   # indented comment\nid: x\n\n---\n')).toEqual({ id: 'x' });
  });

  it('accepts an empty block', () => {
    expect(parseTypedTaskFrontmatter('---\n---\nbody')).toEqual({});
  });

  it('is CRLF tolerant', () => {
    expect(parseTypedTaskFrontmatter('---\r\nid: x\r\nn: 3\r\n---\r\n\r\n# Task\r\n')).toEqual({ id: 'x', n: 3 });
  });

  it('closes at the first line that is exactly ---', () => {
    expect(parseTypedTaskFrontmatter('---\nid: x\n---\nother: y\n---\n')).toEqual({ id: 'x' });
  });

  it('keeps a __proto__ key as data', () => {
    const parsed = parseTypedTaskFrontmatter('---\n__proto__: x\n---\n');
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.hasOwn(parsed, '__proto__')).toBe(true);
  });

  it.each([
    ['empty content', ''],
    ['no opening line', 'id: x\n---\n'],
    ['text before the opening line', '\n---\nid: x\n---\n'],
    ['an opening line with trailing space', '--- \nid: x\n---\n'],
    ['four dashes', '----\nid: x\n---\n'],
    ['opening line without an EOL', '---'],
  ])('missing frontmatter: %s', (_label, content) => {
    expectDocumentError(content, 'task.md frontmatter is missing');
  });

  it.each([
    ['no closing line', '---\nid: x\n'],
    ['closing line with trailing text', '---\nid: x\n--- end\n'],
    ['closing line indented', '---\nid: x\n ---\n'],
  ])('unclosed frontmatter: %s', (_label, content) => {
    expectDocumentError(content, 'task.md frontmatter is unclosed');
  });

  it.each([
    ['nested YAML', '---\nid: x\nparent:\n  child: 1\n---\n', 4],
    ['a list item', '---\nid: x\ntags:\n- a\n---\n', 4],
    ['an indented key', '---\n  id: x\n---\n', 2],
    ['a line without a colon', '---\nid: x\n\njust text\n---\n', 4],
    ['a key starting with a colon', '---\n:id: x\n---\n', 2],
    ['a tab-indented key', '---\n\tid: x\n---\n', 2],
  ])('unsupported structure: %s', (_label, content, line) => {
    expectDocumentError(content, `unsupported frontmatter structure on line ${line}`);
  });

  it('counts lines of a CRLF document the same way', () => {
    expectDocumentError('---\r\nid: x\r\n  nested: y\r\n---\r\n', 'unsupported frontmatter structure on line 3');
  });

  it('rejects a duplicate key (after trimming)', () => {
    expectDocumentError('---\nid: x\nid : y\n---\n', "duplicate frontmatter key 'id'");
  });

  // What the value of key k is, what it is called, and what the error says it is not.
  it.each([
    ['non-scalars', 'a flow sequence', '[a, b]', 'a scalar'],
    ['non-scalars', 'a flow map', '{a: 1}', 'a scalar'],
    ['non-scalars', 'a nested mapping value', 'a: b', 'a scalar'],
    ['non-scalars', 'a block sequence value', '- x', 'a scalar'],
    ['non-scalars', 'a binary tag', '!!binary aGk=', 'a scalar'],
    ['invalid scalars', 'an unclosed single quote', "'unclosed", 'a valid scalar'],
    ['invalid scalars', 'an unclosed double quote', '"unclosed', 'a valid scalar'],
    ['invalid scalars', 'an undefined alias', '*alias', 'a valid scalar'],
    ['invalid scalars', 'a reserved indicator', '@handle', 'a valid scalar'],
    ['invalid scalars', 'a backtick', '`cmd`', 'a valid scalar'],
  ])('rejects %s: %s', (_kind, _label, value, notA) => {
    expectDocumentError(`---\nk: ${value}\n---\n`, `frontmatter key 'k' is not ${notA}`);
  });

  it.each(['.inf', '-.inf', '.nan', '1e400'])('rejects the non-finite number %s', (value) => {
    expectDocumentError(`---\nk: ${value}\n---\n`, "frontmatter key 'k' is not a finite scalar");
  });

  it('rejects a value holding a line separator as unsupported structure', () => {
    expectDocumentError('---\nk: a\u2028b\n---\n', 'unsupported frontmatter structure on line 2');
  });
});

describe('parseTaskFrontmatter (lenient)', () => {
  it('reads raw trimmed strings', () => {
    expect(parseTaskFrontmatter('---\nid: x\nn:  3 \nflag: true\nquoted: "a"\n---\n')).toEqual({
      id: 'x',
      n: '3',
      flag: 'true',
      quoted: '"a"',
    });
  });

  it('never throws and returns {} without a block', () => {
    for (const content of ['', 'id: x', '---\nid: x', '---\nparent:\n  child: 1\n- item\n---\n']) {
      expect(() => parseTaskFrontmatter(content)).not.toThrow();
    }
    expect(parseTaskFrontmatter('')).toEqual({});
    expect(parseTaskFrontmatter('---\nid: x')).toEqual({});
  });

  it('tolerates nested lines, CRLF, and keeps the last duplicate', () => {
    expect(parseTaskFrontmatter('---\r\nid: x\r\nparent:\r\n  child: 1\r\nid: y\r\n---\r\n')).toEqual({ id: 'y', parent: '', child: '1' });
  });

  it('keeps a __proto__ key as data', () => {
    const parsed = parseTaskFrontmatter('---\n__proto__: x\n---\n');
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(parsed, '__proto__')?.value).toBe('x');
  });
});

describe('updateTaskFrontmatter', () => {
  const doc = '---\nid: TASK-1\n# keep this comment\nstatus: active\nweird:    spacing\n\n---\n\n# Task\n';

  it('replaces existing keys in place and keeps every other line byte-identical', () => {
    expect(updateTaskFrontmatter(doc, { status: 'blocked' })).toBe(
      '---\nid: TASK-1\n# keep this comment\nstatus: blocked\nweird:    spacing\n\n---\n\n# Task\n',
    );
  });

  it('appends new keys as the last lines of the block', () => {
    // agent-infra's rule: they go before the final (empty) split element, i.e. after a blank line the block ends with.
    expect(updateTaskFrontmatter(doc, { pr_number: 12, branch: 'b' })).toBe(
      '---\nid: TASK-1\n# keep this comment\nstatus: active\nweird:    spacing\n\npr_number: 12\nbranch: b\n---\n\n# Task\n',
    );
  });

  it('appends at the end when there is no trailing blank line', () => {
    expect(updateTaskFrontmatter('---\nid: x\n---\n', { n: 1 })).toBe('---\nid: x\nn: 1\n---\n');
    expect(updateTaskFrontmatter('---\n---\n', { n: 1 })).toBe('---\nn: 1\n---\n');
  });

  it('removes keys', () => {
    expect(updateTaskFrontmatter(doc, {}, ['weird', 'absent'])).toBe(
      '---\nid: TASK-1\n# keep this comment\nstatus: active\n\n---\n\n# Task\n',
    );
  });

  it('preserves CRLF line endings', () => {
    const crlf = '---\r\nid: x\r\nstatus: active\r\n---\r\nbody\r\n';
    expect(updateTaskFrontmatter(crlf, { status: 'completed', added: true }, [])).toBe(
      '---\r\nid: x\r\nstatus: completed\r\nadded: true\r\n---\r\nbody\r\n',
    );
  });

  it('serializes values so that they read back as the same scalar', () => {
    const set: Record<string, FrontmatterValue> = {
      text: 'hello',
      looks_true: 'true',
      looks_number: '123',
      looks_null: 'null',
      with_colon: 'a: b',
      with_hash: '# not a comment',
      with_comment: 'x # y',
      leading_space: ' lead',
      multi_line: 'line one\nline two',
      carriage: 'a\rb',
      quote: 'it\'s "quoted"',
      empty: '',
      zero: 0,
      negative_zero: -0,
      float: 1.25,
      big: 1e21,
      yes: true,
      no: false,
      nothing: null,
      timestamp: '2026-01-01 09:00:00+00:00',
    };
    const updated = updateTaskFrontmatter('---\nid: x\n---\n', set);
    expect(updated).toContain('\nempty:\n');
    expect(updated.split('\n').length).toBe(Object.keys(set).length + 4);
    const reread = parseTypedTaskFrontmatter(updated);
    for (const [key, value] of Object.entries(set)) expect(Object.is(reread[key], value)).toBe(true);
  });

  it('round-trips arbitrary scalars (property)', () => {
    const scalar = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.string({ maxLength: 40 }),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
      fc.constant(null),
    );
    fc.assert(
      fc.property(scalar, (value) => {
        let updated: string;
        try {
          updated = updateTaskFrontmatter('---\nid: x\n---\nbody\n', { value });
        } catch (error) {
          // Only values that cannot sit on one frontmatter line may be refused.
          expect(error).toBeInstanceOf(FrontmatterError);
          expect((error as FrontmatterError).code).toBe('MUTATION_INVALID');
          expect(typeof value === 'string' && /[\u2028\u2029]/.test(value)).toBe(true);
          return;
        }
        expect(Object.is(parseTypedTaskFrontmatter(updated).value, value)).toBe(true);
        expect(updated.startsWith('---\nid: x\n')).toBe(true);
        expect(updated.endsWith('\n---\nbody\n')).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it.each([
    ['an empty key', { '': 'x' }, "invalid frontmatter key ''"],
    ['a key with a colon', { 'a:b': 'x' }, "invalid frontmatter key 'a:b'"],
    ['a key with a newline', { 'a\nb': 'x' }, "invalid frontmatter key 'a\nb'"],
    ['a key with a carriage return', { 'a\rb': 'x' }, "invalid frontmatter key 'a\rb'"],
    ['a key with leading space', { ' a': 'x' }, "invalid frontmatter key ' a'"],
    ['a comment key', { '#a': 'x' }, "invalid frontmatter key '#a'"],
    ['an object value', { a: { nested: 1 } }, "invalid scalar for 'a'"],
    ['an array value', { a: [1] }, "invalid scalar for 'a'"],
    ['an undefined value', { a: undefined }, "invalid scalar for 'a'"],
    ['NaN', { a: Number.NaN }, 'frontmatter numbers must be finite'],
    ['Infinity', { a: Number.POSITIVE_INFINITY }, 'frontmatter numbers must be finite'],
    ['a line separator', { a: 'x\u2028y' }, "frontmatter value for 'a' cannot be written as a single-line scalar"],
  ])('MUTATION_INVALID for %s', (_label, set, message) => {
    const error = caught(() => updateTaskFrontmatter(doc, set as Record<string, FrontmatterValue>));
    expect(error.code).toBe('MUTATION_INVALID');
    expect(error.message).toBe(message);
  });

  it('MUTATION_INVALID for bad remove lists', () => {
    const cases: [Record<string, FrontmatterValue>, unknown, string][] = [
      [{}, ['a', 'a'], 'frontmatter remove keys must be unique'],
      [{ a: 1 }, ['a'], "frontmatter key 'a' cannot be set and removed together"],
      [{}, ['a:b'], "invalid frontmatter key 'a:b'"],
      [{}, 'a', 'frontmatter remove must be an array'],
    ];
    for (const [set, remove, message] of cases) {
      const error = caught(() => updateTaskFrontmatter(doc, set, remove as string[]));
      expect(error.code).toBe('MUTATION_INVALID');
      expect(error.message).toBe(message);
    }
    expect(caught(() => updateTaskFrontmatter(doc, null as unknown as Record<string, FrontmatterValue>)).message).toBe(
      'frontmatter set must be an object',
    );
  });

  it('refuses to edit or remove a key the document holds twice', () => {
    const twice = '---\nid: x\nstatus: a\nstatus: b\n---\n';
    for (const run of [() => updateTaskFrontmatter(twice, { status: 'c' }), () => updateTaskFrontmatter(twice, {}, ['status'])]) {
      const error = caught(run);
      expect(error.code).toBe('MUTATION_INVALID');
      expect(error.message).toBe("duplicate frontmatter key 'status'");
    }
    // Other keys can still be edited.
    expect(updateTaskFrontmatter(twice, { id: 'y' })).toBe('---\nid: y\nstatus: a\nstatus: b\n---\n');
  });

  it('reports document problems as TASK_DOCUMENT_INVALID', () => {
    expect(caught(() => updateTaskFrontmatter('no frontmatter', { a: 1 }))).toMatchObject({
      code: 'TASK_DOCUMENT_INVALID',
      message: 'task.md frontmatter is missing',
    });
    expect(caught(() => updateTaskFrontmatter('---\nid: x\n', { a: 1 }))).toMatchObject({
      code: 'TASK_DOCUMENT_INVALID',
      message: 'task.md frontmatter is unclosed',
    });
    expect(caught(() => updateTaskFrontmatter('---\nparent:\n  child: 1\n---\n', { a: 1 }))).toMatchObject({
      code: 'TASK_DOCUMENT_INVALID',
      message: 'unsupported frontmatter structure on line 3',
    });
  });
});
