// task.md frontmatter (docs/lifecycle.md §2.2): a flat block of `key: value` lines whose values are YAML scalars.
// Nested YAML is refused rather than half-understood, so every tool reads the same fields.
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { CodedError } from './errorCodes.ts';
import type { ErrorCode } from './errorCodes.ts';

export type FrontmatterValue = string | number | boolean | null;

export type FrontmatterErrorCode = Extract<ErrorCode, 'TASK_DOCUMENT_INVALID' | 'MUTATION_INVALID'>;

export class FrontmatterError extends CodedError<FrontmatterErrorCode> {
  constructor(code: FrontmatterErrorCode, message: string) {
    super('FrontmatterError', code, message);
  }
}

type Block = { eol: '\n' | '\r\n'; bodyStart: number; bodyEnd: number };

type Line = { raw: string; index: number; key: string | null; value: string };

// Key: no leading whitespace, `:` or `#`, no `:` inside. `.` stops at line terminators, so a value holding
// U+2028/U+2029 is refused like any other line that is not one `key: value`.
const KEY_VALUE_LINE = /^([^\s:#][^:]*):(?:[ \t]*(.*))?$/;

function documentError(message: string): FrontmatterError {
  return new FrontmatterError('TASK_DOCUMENT_INVALID', message);
}

function mutationError(message: string): FrontmatterError {
  return new FrontmatterError('MUTATION_INVALID', message);
}

function locateBlock(content: string): Block {
  const opening = /^---(\r?\n)/.exec(content);
  if (!opening) throw documentError('task.md frontmatter is missing');
  const bodyStart = opening[0].length;
  const closing = /^---\r?$/gm;
  closing.lastIndex = bodyStart;
  const match = closing.exec(content);
  if (!match) throw documentError('task.md frontmatter is unclosed');
  return { eol: opening[1] as Block['eol'], bodyStart, bodyEnd: match.index };
}

function readLines(content: string, block: Block): Line[] {
  return content
    .slice(block.bodyStart, block.bodyEnd)
    .split(block.eol)
    .map((raw, index) => {
      if (raw.trim() === '' || raw.trimStart().startsWith('#')) return { raw, index, key: null, value: '' };
      const match = KEY_VALUE_LINE.exec(raw);
      if (!match?.[1]) throw documentError(`unsupported frontmatter structure on line ${index + 2}`);
      return { raw, index, key: match[1].trim(), value: match[2] ?? '' };
    });
}

/** One value text → scalar, or the §2.2 error for key `key`. */
function parseScalar(key: string, text: string): FrontmatterValue {
  if (text === '') return '';
  let value: unknown;
  try {
    // logLevel 'error': YAML errors still throw, warnings (e.g. unknown tags) are not printed.
    value = parseYaml(text, { logLevel: 'error' });
  } catch {
    throw documentError(`frontmatter key '${key}' is not a valid scalar`);
  }
  if (value !== null && typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
    throw documentError(`frontmatter key '${key}' is not a scalar`);
  }
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw documentError(`frontmatter key '${key}' is not a finite scalar`);
  }
  return value;
}

/** Strict, typed frontmatter. Throws FrontmatterError (TASK_DOCUMENT_INVALID) with the §2.2 messages. */
export function parseTypedTaskFrontmatter(content: string): Record<string, FrontmatterValue> {
  const entries = new Map<string, FrontmatterValue>();
  for (const line of readLines(content, locateBlock(content))) {
    if (line.key === null) continue;
    if (entries.has(line.key)) throw documentError(`duplicate frontmatter key '${line.key}'`);
    entries.set(line.key, parseScalar(line.key, line.value));
  }
  // fromEntries defines own properties, so a `__proto__` key stays data instead of replacing the prototype.
  return Object.fromEntries(entries);
}

/** Lenient, untyped frontmatter for display: never throws; the first `\n---` closes the block. */
export function parseTaskFrontmatter(content: string): Record<string, string> {
  const entries = new Map<string, string>();
  if (typeof content !== 'string' || !content.startsWith('---')) return {};
  const end = content.indexOf('\n---', 3);
  if (end === -1) return {};
  for (const rawLine of content.slice(3, end).split('\n')) {
    const line = rawLine.replace(/\r$/, '');
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const key = line.slice(0, colon).trim();
    if (key) entries.set(key, line.slice(colon + 1).trim());
  }
  return Object.fromEntries(entries);
}

function isScalar(value: unknown): value is FrontmatterValue {
  return value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

function assertWritableKey(key: string): void {
  // Beyond the §2.2 rule (non-empty, no CR/LF/`:`), refuse keys the parser would read back differently.
  if (
    typeof key !== 'string' ||
    key === '' ||
    /[\r\n:]/.test(key) ||
    key !== key.trim() ||
    key.startsWith('#') ||
    /[\u2028\u2029]/.test(key)
  ) {
    throw mutationError(`invalid frontmatter key '${String(key)}'`);
  }
}

/** Value text that YAML reads back as exactly `value`, on one line. */
function serializeScalar(key: string, value: FrontmatterValue): string {
  if (typeof value === 'number' && !Number.isFinite(value)) throw mutationError('frontmatter numbers must be finite');
  if (value === '') return '';
  const roundTrips = (text: string): boolean => {
    const reread = KEY_VALUE_LINE.exec(`${key}: ${text}`);
    if (reread?.[1]?.trim() !== key) return false;
    try {
      return Object.is(parseScalar(key, reread[2] ?? ''), value);
    } catch {
      return false;
    }
  };
  // YAML's own choice first. Multi-line strings come out as block scalars, and strings of Unicode
  // spaces (U+00A0, U+2000…) plain, which the line reader trims away: double quotes keep both on
  // one line, escaped (both found by property tests: "\n" and "\u00a0" used to be refused).
  const plain = stringifyYaml(value, { lineWidth: 0 }).trimEnd();
  if (!/[\r\n]/.test(plain) && !(typeof value === 'string' && /^[|>]/.test(plain)) && roundTrips(plain)) return plain;
  const quoted = stringifyYaml(value, { lineWidth: 0, defaultStringType: 'QUOTE_DOUBLE' }).trimEnd();
  if (!/[\r\n]/.test(quoted) && roundTrips(quoted)) return quoted;
  throw mutationError(`frontmatter value for '${key}' cannot be written as a single-line scalar`);
}

/**
 * Set and remove keys while keeping every other line (comments, order, line endings) byte-identical.
 * New keys go after the last line, before a trailing blank line. Argument problems throw
 * MUTATION_INVALID; a document whose frontmatter is missing, unclosed or not flat throws TASK_DOCUMENT_INVALID.
 */
export function updateTaskFrontmatter(content: string, set: Record<string, FrontmatterValue>, remove: readonly string[] = []): string {
  if (!set || typeof set !== 'object' || Array.isArray(set)) throw mutationError('frontmatter set must be an object');
  if (!Array.isArray(remove)) throw mutationError('frontmatter remove must be an array');
  const removeKeys = new Set(remove);
  if (removeKeys.size !== remove.length) throw mutationError('frontmatter remove keys must be unique');
  const entries = Object.entries(set);
  for (const [key, value] of entries) {
    assertWritableKey(key);
    if (!isScalar(value)) throw mutationError(`invalid scalar for '${key}'`);
  }
  for (const key of remove) {
    assertWritableKey(key);
    if (Object.hasOwn(set, key)) throw mutationError(`frontmatter key '${key}' cannot be set and removed together`);
  }
  const replacements = entries.map(([key, value]) => {
    const text = serializeScalar(key, value);
    return { key, line: text === '' ? `${key}:` : `${key}: ${text}` };
  });

  const block = locateBlock(content);
  const lines = readLines(content, block);
  const positions = new Map<string, number[]>();
  for (const line of lines) {
    if (line.key !== null) positions.set(line.key, [...(positions.get(line.key) ?? []), line.index]);
  }
  for (const key of [...entries.map(([key]) => key), ...remove]) {
    // Editing one of two copies would leave the document ambiguous.
    if ((positions.get(key)?.length ?? 0) > 1) throw mutationError(`duplicate frontmatter key '${key}'`);
  }

  const next = lines.map((line) => line.raw);
  const additions: string[] = [];
  for (const { key, line } of replacements) {
    const index = positions.get(key)?.[0];
    if (index === undefined) additions.push(line);
    else next[index] = line;
  }
  const kept = next.filter((_, index) => {
    const key = lines[index]?.key;
    return key === null || key === undefined || !removeKeys.has(key);
  });
  if (additions.length > 0) {
    if (kept.at(-1) === '') kept.splice(-1, 0, ...additions);
    else kept.push(...additions);
  }
  return content.slice(0, block.bodyStart) + kept.join(block.eol) + content.slice(block.bodyEnd);
}
