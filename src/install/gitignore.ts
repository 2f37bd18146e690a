import ignore from 'ignore';
import { WORKSPACE_PATH } from '../core/taskLayout.ts';

// The one line `baton init` adds to the project's .gitignore (docs/lifecycle.md §1.1: the task
// workspace is git-ignored runtime state), and its inverse for `baton uninstall`. Whether the
// workspace is ignored already is decided by the `ignore` library, which reads .gitignore as git does.

export const GITIGNORE_FILE = '.gitignore';
export const WORKSPACE_LINE = `${WORKSPACE_PATH}/`;

/** Whether the root .gitignore (its text) keeps a repo-relative file out of git. */
export function ignoredBy(text: string | null, file: string): boolean {
  return text !== null && ignore().add(text).ignores(file);
}

/** Whether the root .gitignore already keeps the task workspace out of git. */
export function ignoresWorkspace(text: string | null): boolean {
  return ignoredBy(text, `${WORKSPACE_PATH}/active/task.md`);
}

/** `.gitignore` with the workspace line appended, when it does not ignore the workspace yet. */
export function withGitignoreLine(text: string | null): string {
  if (ignoresWorkspace(text)) return text!;
  const source = text ?? '';
  return `${source}${source === '' || source.endsWith('\n') ? '' : '\n'}${WORKSPACE_LINE}\n`;
}

/** The inverse: the last line that is exactly the workspace line, out. */
export function withoutGitignoreLine(text: string): string {
  const lines = text.split('\n');
  const at = lines.lastIndexOf(WORKSPACE_LINE);
  if (at === -1) return text;
  lines.splice(at, 1);
  return lines.join('\n');
}
