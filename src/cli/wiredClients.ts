import fs from 'node:fs';
import path from 'node:path';
import { initRecordFile } from '../base/batonDir.ts';
import { CLIENT_ADAPTERS, clientIdList } from '../clients/registry.ts';
import type { ClientAdapter } from '../clients/adapter.ts';
import type { ClientId } from '../clients/registry.ts';
import { readText } from '../install/plan.ts';
import { batonHookPositions, parseSettings } from '../install/settings.ts';

// Which agent clients have baton's hooks in a repository (`baton doctor` checks them one by one;
// `baton start` says it in its banner), read from each client's settings file, as doctor reads it.

/** The clients whose settings file in `root` holds at least one hook of baton's, registry order. */
export function wiredClients(root: string): ClientAdapter<ClientId>[] {
  return CLIENT_ADAPTERS.filter((client) => {
    let text: string | null;
    try {
      text = readText(path.join(root, client.install.settingsFile), client.install.settingsFile);
    } catch {
      return false;
    }
    const parsed = text === null ? null : parseSettings(text, client.install.settingsFile);
    return parsed?.ok === true && batonHookPositions(parsed.settings).length > 0;
  });
}

/**
 * The `agents` line of `baton start`'s banner: what is wired here, and the one command that wires
 * what is not (`baton init`, which keeps the record `baton uninstall` needs; docs/adopting.md).
 */
export function agentsLine(root: string): string {
  const wired = wiredClients(root);
  if (wired.length === 0) {
    return `no client is wired here yet: run 'baton init' (hooks, profiles and stage guidance for ${clientIdList()}; --client <id> for one)`;
  }
  const by = fs.existsSync(initRecordFile(root)) ? 'wired by baton init' : 'wired';
  const ids = wired.map((client) => client.id);
  const missing = CLIENT_ADAPTERS.filter((client) => !ids.includes(client.id)).map((client) => client.id);
  const rest = missing.length === 0 ? '' : `; not wired: ${missing.map((id) => `${id} ('baton init --client ${id}')`).join(', ')}`;
  const both = ids.length <= 1 ? ids.join('') : `${ids.slice(0, -1).join(', ')} and ${ids.at(-1)}`;
  return `${both} ${by} ('baton doctor' checks the hooks start)${rest}`;
}
