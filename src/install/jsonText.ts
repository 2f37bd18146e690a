import {
  applyEdits,
  type Edit,
  findNodeAtLocation,
  format,
  getNodeValue,
  type JSONPath,
  modify,
  type Node,
  type ParseError,
  parseTree,
  printParseErrorCode,
} from 'jsonc-parser/lib/esm/main.js';

// A user's JSON or JSONC file (`.claude/settings.json`, `.codex/hooks.json`) changed as text, not
// parsed and printed again (docs/architecture.md "Editing the user's files"): `patchJson` turns the
// file's value into another one with the fewest edits (jsonc-parser, the library VS Code edits its
// settings with, locates each value and applies the edits), so that every byte outside the values
// that change stays as it was: one-line arrays, key order, comments, tabs, CRLF, the final newline or
// its absence. Only the text baton inserts is formatted, in the file's own indentation and line
// ending. A removal takes out what an insertion put in, so init followed by a removal gives the
// user's bytes back.

export type JsonFormat = Readonly<{ indent: string; eol: '\n' | '\r\n' }>;

const PARSE_OPTIONS = { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true } as const;

/** The indentation (first indented line; two spaces if none) and line ending (the first one; `\n` if none) of a text. */
export function detectFormat(text: string): JsonFormat {
  const indent = /^([ \t]+)\S/m.exec(text)?.[1] ?? '  ';
  const eol = /\r?\n/.exec(text)?.[0] === '\r\n' ? '\r\n' : '\n';
  return { indent: indent.startsWith('\t') ? '\t' : indent, eol };
}

export type ParsedJson = { ok: true; value: unknown; tree: Node | undefined } | { ok: false; message: string };

/** JSON with comments and trailing commas (JSONC), as the agent clients read their settings; empty text has no value. */
export function parseJsonc(text: string): ParsedJson {
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, PARSE_OPTIONS);
  const first = errors[0];
  if (first) {
    const before = text.slice(0, first.offset);
    const line = before.split('\n').length;
    const column = first.offset - before.lastIndexOf('\n');
    return { ok: false, message: `${printParseErrorCode(first.error)} at line ${line} column ${column}` };
  }
  return { ok: true, value: tree === undefined ? undefined : getNodeValue(tree), tree };
}

/** A new file's text for `value`: two-space indentation, a final newline. */
export function newJsonText(value: unknown, style: JsonFormat = { indent: '  ', eol: '\n' }): string {
  return `${JSON.stringify(value, null, style.indent).replace(/\n/g, style.eol)}${style.eol}`;
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Equal JSON values (key order aside; jsonc-parser's objects have no prototype). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b))
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, index) => jsonEqual(item, b[index]));
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => Object.hasOwn(b, key) && jsonEqual(a[key], b[key]));
}

function treeOf(text: string): Node {
  const tree = parseTree(text, [], PARSE_OPTIONS);
  if (tree === undefined) throw new Error('no JSON value');
  return tree;
}

function nodeAt(text: string, path: JSONPath): Node {
  const node = findNodeAtLocation(treeOf(text), path);
  if (node === undefined) throw new Error(`no value at ${JSON.stringify(path)}`);
  return node;
}

const end = (node: Node) => node.offset + node.length;
const hasEol = (text: string) => /[\r\n]/.test(text);

/** Whether a document spreads over lines (an EOL before its last character that is not white space). */
function multiLineDocument(text: string): boolean {
  return hasEol(text.trimEnd());
}

/** Whether a one-line stretch of JSON puts a space after its commas and colons (strings aside); with no comma or colon, yes. */
function spaced(text: string, around: { offset: number }): boolean {
  const line = text
    .slice(text.lastIndexOf('\n', around.offset) + 1)
    .split(/\r?\n/)[0]!
    .replace(/"(?:[^"\\]|\\.)*"/g, '""');
  return !/[,:]/.test(line) || /[,:][ \t]/.test(line);
}

/**
 * Formats what an edit inserted, and only that: in the file's indentation, on lines of their own
 * when the container is spread over lines (or was empty in a document that is), else on one line.
 * `whole` reformats the container itself (one that was empty: its inside is all baton's).
 */
function formatInserted(text: string, edit: Edit, expand: boolean, style: JsonFormat, whole?: Node, length = edit.content.length): string {
  const inserted = applyEdits(text, [edit]);
  if (!expand && !spaced(text, whole ?? edit)) return inserted; // minified: as JSON.stringify writes it
  const range = whole ? { offset: whole.offset, length: whole.length + edit.content.length } : { offset: edit.offset, length };
  const edits = format(inserted, range, {
    insertSpaces: style.indent !== '\t',
    tabSize: style.indent === '\t' ? 4 : style.indent.length,
    eol: style.eol,
    keepLines: !expand,
  });
  return applyEdits(inserted, edits);
}

/** The text with the value at `path` replaced by `value`. */
export function replaceJson(text: string, path: JSONPath, value: unknown, style: JsonFormat = detectFormat(text)): string {
  const node = nodeAt(text, path);
  const [edit] = modify(text, path, value, {});
  if (edit === undefined) return text;
  const container = node.parent?.type === 'property' ? node.parent.parent : node.parent;
  const expand = container === undefined ? multiLineDocument(text) : hasEol(text.slice(container.offset, end(container)));
  return formatInserted(text, edit, expand, style);
}

/** The text with `value` inserted into the object or array at `path`: a new key goes last; an array item at `key` (its index). */
export function insertJson(
  text: string,
  path: JSONPath,
  key: string | number,
  value: unknown,
  style: JsonFormat = detectFormat(text),
): string {
  const container = nodeAt(text, path);
  const children = container.children ?? [];
  const empty = children.length === 0;
  const expand = empty ? container.parent === undefined || multiLineDocument(text) : hasEol(text.slice(container.offset, end(container)));
  if (container.type === 'array' && typeof key === 'number' && key < children.length && !empty) {
    // Before an item: the new one takes its place, with the same white space before the next.
    const next = children[key]!;
    const content = JSON.stringify(value);
    // The white space after a comma between two items (before the first: after the bracket).
    const [left, right] = key > 0 ? [children[key - 1]!, next] : children.length > 1 ? [next, children[1]!] : [undefined, next];
    const gap = text.slice(left ? end(left) : container.offset + 1, right.offset);
    const lead = left ? gap.slice(gap.indexOf(',') + 1) : gap;
    const separator = /^[ \t\r\n]+$/.test(lead) ? lead : ' ';
    return formatInserted(
      text,
      { offset: next.offset, length: 0, content: `${content},${separator}` },
      expand,
      style,
      undefined,
      content.length,
    );
  }
  const segment = container.type === 'array' ? -1 : key;
  const [edit] = modify(text, [...path, segment], value, {});
  if (edit === undefined) return text;
  return formatInserted(text, edit, expand, style, empty && expand ? container : undefined);
}

/** The text without the key or item `key` of the object or array at `path`: the inverse of insertJson. */
export function removeJson(text: string, path: JSONPath, key: string | number): string {
  const container = nodeAt(text, path);
  const children = container.children ?? [];
  const index =
    container.type === 'object'
      ? children.findIndex((property) => property.children?.[0]?.value === key)
      : typeof key === 'number' && key < children.length
        ? key
        : -1;
  if (index === -1) return text;
  const child = children[index]!;
  let edits: Edit[];
  if (children.length === 1) {
    // The only one: the container goes back to empty (keeping any comment inside).
    const inside = text.slice(container.offset + 1, end(container) - 1);
    const bare = inside.replace(text.slice(child.offset, end(child)), '').trim() === '';
    edits = bare
      ? [{ offset: container.offset + 1, length: container.length - 2, content: '' }]
      : [{ offset: child.offset, length: child.length, content: '' }];
  } else if (index === 0) {
    // The first: up to the next one, keeping the white space after the bracket.
    const next = children[1]!;
    const gap = text.slice(end(child), next.offset);
    const stop = gap.includes('/') ? end(child) + gap.indexOf(',') + 1 : next.offset;
    edits = [{ offset: child.offset, length: stop - child.offset, content: '' }];
  } else {
    // Any other: from the end of the one before (its comma and the line break go with it).
    const previous = children[index - 1]!;
    const gap = text.slice(end(previous), child.offset);
    if (!gap.includes('/')) edits = [{ offset: end(previous), length: end(child) - end(previous), content: '' }];
    else {
      // A comment between them stays: only the comma and the item's own line go.
      const comma = end(previous) + gap.indexOf(',');
      const lineStart = Math.max(text.lastIndexOf('\n', child.offset - 1) + 1, comma + 1);
      const eolStart = text[lineStart - 2] === '\r' ? lineStart - 2 : lineStart - 1;
      const ownLine = /^[ \t]*$/.test(text.slice(lineStart, child.offset)) && text[lineStart - 1] === '\n' && eolStart > comma;
      const from = ownLine ? eolStart : child.offset;
      edits = [
        { offset: comma, length: 1, content: '' },
        { offset: from, length: end(child) - from, content: '' },
      ];
    }
  }
  return applyEdits(text, edits);
}

/** The pairs of indexes of `a` and `b` that stay (a longest common subsequence of equal values). */
function commonItems(a: readonly unknown[], b: readonly unknown[]): [number, number][] {
  const lengths = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lengths[i]![j] = jsonEqual(a[i], b[j]) ? lengths[i + 1]![j + 1]! + 1 : Math.max(lengths[i + 1]![j]!, lengths[i]![j + 1]!);
  const pairs: [number, number][] = [];
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (jsonEqual(a[i], b[j])) pairs.push([i++, j++]);
    else if (lengths[i + 1]![j]! >= lengths[i]![j + 1]!) i++;
    else j++;
  }
  return pairs;
}

function patchValue(text: string, path: JSONPath, current: unknown, target: unknown, style: JsonFormat): string {
  if (jsonEqual(current, target)) return text;
  if (isObject(current) && isObject(target)) {
    let patched = text;
    for (const key of Object.keys(current)) if (!Object.hasOwn(target, key)) patched = removeJson(patched, path, key);
    for (const [key, value] of Object.entries(target)) {
      patched = Object.hasOwn(current, key)
        ? patchValue(patched, [...path, key], current[key], value, style)
        : insertJson(patched, path, key, value, style);
    }
    return patched;
  }
  if (Array.isArray(current) && Array.isArray(target)) {
    // The items that stay are kept; between two of them, the old items become the new ones, last gap first.
    const pairs: [number, number][] = [[-1, -1], ...commonItems(current, target), [current.length, target.length]];
    let patched = text;
    for (let k = pairs.length - 1; k > 0; k--) {
      const [oldFrom, newFrom] = [pairs[k - 1]![0] + 1, pairs[k - 1]![1] + 1];
      const [oldTo, newTo] = pairs[k]!;
      const paired = Math.min(oldTo - oldFrom, newTo - newFrom);
      for (let i = oldTo - 1; i >= oldFrom + paired; i--) patched = removeJson(patched, path, i);
      for (let i = 0; i < paired; i++)
        patched = patchValue(patched, [...path, oldFrom + i], current[oldFrom + i], target[newFrom + i], style);
      for (let i = paired; i < newTo - newFrom; i++) patched = insertJson(patched, path, oldFrom + i, target[newFrom + i], style);
    }
    return patched;
  }
  return replaceJson(text, path, target, style);
}

/**
 * `text` changed to hold `target`, with the fewest edits: values equal in both keep their bytes, keys
 * and items that go are cut out, new ones are inserted (keys last, items where they belong). Empty
 * text becomes a new file. Checked: were the result not to read back as `target`, the file is written
 * whole instead (in its own indentation and line ending).
 */
export function patchJson(text: string, target: unknown): string {
  const parsed = parseJsonc(text);
  if (!parsed.ok) throw new Error(`not JSON: ${parsed.message}`);
  const style = detectFormat(text);
  if (parsed.value === undefined) return newJsonText(target);
  let patched: string;
  try {
    patched = patchValue(text, [], parsed.value, target, style);
  } catch {
    patched = '';
  }
  const check = parseJsonc(patched);
  if (check.ok && jsonEqual(check.value, target)) return patched;
  return newJsonText(target, style);
}
