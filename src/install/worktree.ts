import fs from 'node:fs';
import path from 'node:path';
import { commonDirOf, gitDirOf } from '../base/repoRoot.ts';
import { writeFileAtomic } from '../base/atomicFile.ts';
import { CODEX_PROJECT_CONFIG, worktreeSandboxConfig } from '../clients/codex/install.ts';
import { AGENTS_PATH } from '../core/taskLayout.ts';

// What a new linked worktree needs of the files `baton init` wrote and the user committed, beyond
// checking them out (docs/adopting.md, "run several agents at once"): Codex's sandbox roots name the
// worktree's own git directories instead of the main checkout's `"../.git"`.

/** Fixes the Codex sandbox roots of the linked worktree at `root`; the note to print, or null when nothing changed. */
export function prepareWorktreeFiles(root: string): string | null {
  const realRoot = fs.realpathSync(root);
  const file = path.join(realRoot, CODEX_PROJECT_CONFIG);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const gitDir = fs.realpathSync(gitDirOf(realRoot));
  const commonDir = fs.realpathSync(commonDirOf(gitDir));
  const updated = worktreeSandboxConfig(text, { realRoot, agentsDir: path.join(realRoot, AGENTS_PATH), gitDir, commonDir });
  if (updated === null) return null;
  writeFileAtomic(file, updated);
  return `${CODEX_PROJECT_CONFIG} in the worktree now names its own git directories (${commonDir} and ${gitDir}) as Codex's sandbox roots instead of the main checkout's "../.git", which makes Codex's sandbox fail every command there: a local change, machine-specific, not to be committed`;
}
