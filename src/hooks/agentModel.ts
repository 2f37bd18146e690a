import fs from 'node:fs';
import path from 'node:path';
import { clientAdapter } from '../clients/registry.ts';

// The model a lifecycle agent's own profile sets, read at the spawn claim: evidence for the later
// profile's model separation (src/core/orchestration/modelPolicy.ts) where the client reports no
// model of its own. Claude Code sends no model on its hook events (docs/clients.md "Hook events");
// a subagent runs on the spawning call's `model`, else on the `model:` of its agent profile's
// frontmatter (`.claude/agents/<agent>.md`), else on the parent's (`inherit`, or no line). Codex
// reports the child's model at SubagentStart, so its TOML profiles are not read here.

/** The `model:` of a Markdown agent profile's frontmatter, or null (none, `inherit`, unreadable). */
export function frontmatterModel(text: string): string | null {
  const block = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  if (!block) return null;
  const line = /^model:[ \t]*(.*?)[ \t]*$/m.exec(block[1]!);
  if (!line) return null;
  const value = line[1]!.replace(/^(["'])(.*)\1$/, '$2').trim();
  return value && value !== 'inherit' ? value : null;
}

/** The model `nativeAgent`'s installed profile sets for `client`, when it is a Markdown profile that sets one. */
export function profileModel(root: string, client: string, nativeAgent: string): string | null {
  const file = clientAdapter(client)?.install.agentFile(nativeAgent);
  if (!file?.endsWith('.md')) return null;
  try {
    return frontmatterModel(fs.readFileSync(path.join(root, file), 'utf8'));
  } catch {
    return null;
  }
}
