import { knownClient } from './clients.ts';
import type { DelegationReceipt } from './types.ts';

// The vendor of a delegation's model (docs/clients.md "The reviewer-vendor policy"). A client that
// runs its own maker's models (src/clients/facts.ts `vendor`: Claude Code anthropic, Codex openai)
// is that vendor whatever model name it is given; a client that serves several makers' models
// (Copilot CLI: github) is the maker of the model it reports or asks for, read from the model's name,
// else its own. A receipt records it at activation (`vendor`), and the reviewer-vendor policy
// compares it (src/core/orchestration/vendorPolicy.ts).

/** The model makers baton tells apart by their models' names. */
export const MODEL_VENDORS = ['anthropic', 'openai', 'google', 'xai', 'mistral', 'meta', 'deepseek'] as const;

const FAMILIES: ReadonlyArray<readonly [RegExp, (typeof MODEL_VENDORS)[number]]> = [
  [/^(claude|opus|sonnet|haiku)/, 'anthropic'],
  [/^(gpt|chatgpt|codex|o\d)/, 'openai'],
  [/^(gemini|gemma)/, 'google'],
  [/^grok/, 'xai'],
  [/^(mistral|codestral|devstral|magistral)/, 'mistral'],
  [/^llama/, 'meta'],
  [/^deepseek/, 'deepseek'],
];

/** The maker of a model named `model` (`claude-sonnet-4-5`, `openai/gpt-5`, `us.anthropic.claude-…`), or null. */
export function modelVendor(model: string | null | undefined): string | null {
  if (!model) return null;
  const name = model.trim().toLowerCase();
  // A provider's prefix: `anthropic/…`, `openai/…`, Bedrock's `us.anthropic.…`.
  for (const vendor of MODEL_VENDORS) {
    if (name.startsWith(`${vendor}/`) || name.includes(`${vendor}.`)) return vendor;
  }
  const base = name.slice(name.lastIndexOf('/') + 1);
  return FAMILIES.find(([pattern]) => pattern.test(base))?.[1] ?? null;
}

export type Vendor = Readonly<{ vendor: string | null; from: 'model' | 'client' | null }>;

/** The vendor of `client` running `model`: a model maker's client is its maker; another, the model's maker when its name says, else the client's. */
export function vendorOf(client: string, model: string | null | undefined): Vendor {
  const fromClient = knownClient(client)?.vendor ?? null;
  if (fromClient !== null && (MODEL_VENDORS as readonly string[]).includes(fromClient)) return { vendor: fromClient, from: 'client' };
  const fromModel = modelVendor(model);
  if (fromModel) return { vendor: fromModel, from: 'model' };
  return { vendor: fromClient, from: fromClient ? 'client' : null };
}

/** The vendor a receipt ran in: recorded at its activation (later profile), else derived from its client and reported model. */
export function receiptVendor(receipt: DelegationReceipt): string | null {
  return receipt.vendor ?? vendorOf(receipt.client, receipt.actualModel).vendor;
}
