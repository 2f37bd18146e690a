import type { ClientInstaller, HookSettings, InstallContext } from '../installer.ts';
import { claudeGlobalConfigFile, claudeWorkspaceTrusted, withClaudeWorkspaceTrust } from './trust.ts';

// What install-hooks does for Claude Code besides hooks, profiles and instructions: the allow rule
// the agents' `baton task` commands need, and the workspace trust that makes Claude Code honour it
// (docs/wiring.md "Claude Code trust").

/** A permission rule baton wrote earlier, from any checkout: `Bash(… baton[.mjs] task *)`. */
export function isBatonTaskRule(rule: unknown): boolean {
  return typeof rule === 'string' && /^Bash\((?:.*[\s/'"])?baton(\.mjs|\.js)?['"]?\s+task \*\)$/.test(rule);
}

/**
 * Claude Code asks before a Bash command it has no rule for, and a headless run (`claude -p`) refuses
 * it: the subagents' `baton task …` (complete-stage, stage-completed) and the orchestrator's need an
 * allow rule. Only baton's own earlier rule is replaced; the user's permissions stay as they are.
 */
function withBatonPermission(existing: unknown, commandFor: (args: readonly string[]) => string): Record<string, unknown> {
  const permissions =
    existing !== null && typeof existing === 'object' && !Array.isArray(existing) ? (existing as Record<string, unknown>) : {};
  const allow = Array.isArray(permissions.allow) ? permissions.allow : [];
  const rule = `Bash(${commandFor(['task'])} *)`;
  const index = allow.findIndex(isBatonTaskRule);
  const merged =
    index === -1
      ? [...allow, rule]
      : allow.map((entry, at) => (at === index ? rule : entry)).filter((entry, at) => at === index || !isBatonTaskRule(entry));
  return { ...permissions, allow: merged };
}

/** The inverse of withBatonPermission: baton's rule out, and what it leaves empty. */
function withoutBatonPermission(settings: HookSettings): HookSettings {
  const permissions = settings.permissions;
  if (permissions === null || typeof permissions !== 'object' || Array.isArray(permissions)) return settings;
  const { allow, ...rest } = permissions as Record<string, unknown>;
  if (!Array.isArray(allow)) return settings;
  const kept = allow.filter((rule) => !isBatonTaskRule(rule));
  if (kept.length === allow.length) return settings;
  const remaining = kept.length > 0 ? { ...rest, allow: kept } : rest;
  const { permissions: _dropped, ...others } = settings;
  return Object.keys(remaining).length > 0 ? { ...settings, permissions: remaining } : others;
}

function trustProblems(context: InstallContext): string[] {
  const globalConfig = claudeGlobalConfigFile(context.env);
  if (claudeWorkspaceTrusted(context.readText(globalConfig, globalConfig), context.trustRoot, globalConfig)) return [];
  return [
    `Claude Code ignores this repository's permissions.allow until the workspace is trusted (not yet, in ${globalConfig}), so 'claude -p' refuses the agents' 'baton task' commands. Accept the trust dialog of an interactive 'claude' here once, or run '${context.trustCommand}' (while Claude Code is not running)`,
  ];
}

export const installer: ClientInstaller = {
  settings: (settings: HookSettings, commandFor) => ({ ...settings, permissions: withBatonPermission(settings.permissions, commandFor) }),
  withoutSettings: withoutBatonPermission,
  plan(context) {
    if (!context.trust) return { files: [], notices: trustProblems(context) };
    const globalConfig = claudeGlobalConfigFile(context.env);
    const globalText = context.readText(globalConfig, globalConfig);
    return {
      files: [
        context.userFile(
          globalConfig,
          globalText,
          withClaudeWorkspaceTrust(globalText, context.trustRoot, globalConfig, context.patchJson),
        ),
      ],
      notices: [],
    };
  },
  trustProblems,
};
