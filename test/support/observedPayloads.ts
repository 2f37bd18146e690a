import fs from 'node:fs';
import path from 'node:path';
import type { ClientVersion } from './agentClients.ts';
import { PROJECT_ROOT } from './processes.ts';

// The hook payloads the real clients sent, checked in as test/fixtures/hooks/<client>-<version>/
// with the volatile values (paths, ids) replaced by stable placeholders. Written by
// `BATON_WRITE_OBSERVED_PAYLOADS=1 npx vitest run test/agents/mainPath.test.ts`.

export function observedPayloadDir(version: ClientVersion): string {
  return path.join(PROJECT_ROOT, 'test', 'fixtures', 'hooks', `${version.client}-${version.version}`);
}

/** Replaces paths and ids with placeholders; the same value gets the same placeholder. */
export function normalisePayloads(payloads: ReadonlyArray<Record<string, unknown>>, repoRoot: string): Record<string, unknown>[] {
  const seen = new Map<string, string>();
  const placeholder = (kind: string, value: string) => {
    if (!seen.has(value)) seen.set(value, `<${kind}-${[...seen.values()].filter((v) => v.startsWith(`<${kind}-`)).length + 1}>`);
    return seen.get(value)!;
  };
  const text = (value: string, key: string): string => {
    let out = value.split(repoRoot).join('<repo>');
    out = out.replace(/\/tmp\/baton-(claude-code|claude|codex|copilot-cli)-home-[A-Za-z0-9]+/g, '<home>');
    out = out.replace(/-tmp-baton-git-[A-Za-z0-9]+/g, '-<repo>');
    out = out.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => placeholder('uuid', id));
    if (key === 'agent_id' || key === 'tool_use_id') out = placeholder(key.replace('_', '-'), out);
    out = out.replace(/agent-a[0-9a-f]{6,16}/g, (id) => `agent-${placeholder('agent-id', id.slice(6))}`);
    return out;
  };
  const walk = (value: unknown, key: string): unknown => {
    if (typeof value === 'string') return text(value, key);
    if (Array.isArray(value)) return value.map((item) => walk(item, key));
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k)]));
    return value;
  };
  return payloads.map((payload) => walk(payload, '') as Record<string, unknown>);
}

export function writeObservedPayloads(
  version: ClientVersion,
  recorded: ReadonlyArray<{ event: string; payload: Record<string, unknown> }>,
  repoRoot: string,
): void {
  const dir = observedPayloadDir(version);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  normalisePayloads(
    recorded.map((entry) => entry.payload),
    repoRoot,
  ).forEach((payload, index) => {
    // Copilot CLI's payloads name no event: the one its settings ran the hook for.
    const event = String(payload.hook_event_name ?? recorded[index]!.event);
    const toolName = payload.tool_name ?? payload.toolName;
    const tool = typeof toolName === 'string' ? `-${toolName}` : '';
    fs.writeFileSync(path.join(dir, `${String(index + 1).padStart(2, '0')}-${event}${tool}.json`), `${JSON.stringify(payload, null, 2)}\n`);
  });
}
