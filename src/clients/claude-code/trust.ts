import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClientConfigError } from '../installer.ts';

// Claude Code ignores a project's `permissions.allow` until the workspace is trusted, and says so
// only on stderr ("Ignoring 1 permissions.allow entry from .claude/settings.json: this workspace has
// not been trusted"). Hooks still run under `claude -p`, but the subagents' and the orchestrator's
// `baton task …` then need approval, which a headless run refuses. Its trust dialog records
// `projects["<dir>"].hasTrustDialogAccepted: true` in its global config file; `--trust` writes the
// same, keeping every other key (test/ops/claudeTrust.test.ts checks it with the real Claude Code).

/**
 * Claude Code's global config file: a non-empty legacy `<config dir>/.config.json` if there is one,
 * else `.claude.json` in $CLAUDE_CONFIG_DIR (default: the home directory).
 */
export function claudeGlobalConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  const configDir = env.CLAUDE_CONFIG_DIR || path.join(os.homedir(), '.claude');
  const legacy = path.join(configDir, '.config.json');
  try {
    if (fs.statSync(legacy).size > 0) return legacy;
  } catch {
    // no legacy file
  }
  return path.join(env.CLAUDE_CONFIG_DIR || os.homedir(), '.claude.json');
}

export class ClaudeConfigError extends ClientConfigError {}

function parseConfig(text: string | null, label: string): Record<string, unknown> {
  if (text === null || text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ClaudeConfigError(`${label} is not valid JSON (${(error as Error).message}); nothing was written`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new ClaudeConfigError(`${label} is not a JSON object; nothing was written`);
  return value as Record<string, unknown>;
}

function projectsOf(config: Record<string, unknown>, label: string): Record<string, Record<string, unknown>> {
  const projects = config.projects ?? {};
  if (projects === null || typeof projects !== 'object' || Array.isArray(projects))
    throw new ClaudeConfigError(`${label}: 'projects' is not an object; nothing was written`);
  return projects as Record<string, Record<string, unknown>>;
}

export function claudeWorkspaceTrusted(text: string | null, projectRoot: string, label: string): boolean {
  return projectsOf(parseConfig(text, label), label)[projectRoot]?.hasTrustDialogAccepted === true;
}

/**
 * The config with `projects[projectRoot].hasTrustDialogAccepted = true`; unchanged text when it already
 * is. `patch` writes the new value into the text (the installer's text patch keeps every other byte).
 */
export function withClaudeWorkspaceTrust(
  text: string | null,
  projectRoot: string,
  label: string,
  patch: (text: string | null, value: unknown) => string = (_text, value) => `${JSON.stringify(value, null, 2)}\n`,
): string {
  const config = parseConfig(text, label);
  const projects = projectsOf(config, label);
  if (projects[projectRoot]?.hasTrustDialogAccepted === true && text !== null) return text;
  const project = projects[projectRoot];
  if (project !== undefined && (project === null || typeof project !== 'object' || Array.isArray(project))) {
    throw new ClaudeConfigError(`${label}: projects[${JSON.stringify(projectRoot)}] is not an object; nothing was written`);
  }
  const updated = { ...config, projects: { ...projects, [projectRoot]: { ...(project ?? {}), hasTrustDialogAccepted: true } } };
  return patch(text, updated);
}
