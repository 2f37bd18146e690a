// Hook payloads the tests write by hand where no client sent them (nativePayload, from
// test/support/lifecycleDriver.ts, gives the SubagentStart and SubagentStop of a lifecycle child).

/** A PreToolUse payload (JSON) of the parent session `s` in `cwd` calling `tool` (its tool_name, tool_input, any id). */
export function preToolUsePayload(
  cwd: string,
  tool: { tool_name: string; tool_input: Record<string, unknown>; tool_use_id?: string },
): string {
  return JSON.stringify({ session_id: 's', cwd, hook_event_name: 'PreToolUse', ...tool });
}
