// Lifecycle artifacts (docs/lifecycle.md §3): canonical names, the read-only per-family inventory of a task
// directory, and which input a review says it reviewed.
import type { ArtifactDiagnosticCode, ErrorCode } from './errorCodes.ts';
import fs from 'node:fs';
import path from 'node:path';
import { DELEGATION_STAGES } from './types.ts';
import type { DelegationStage } from './types.ts';

/** The stages that leave an artifact: every stage but commit. */
type ArtifactStage = Exclude<DelegationStage, 'commit'>;

/** The stages' artifacts (in stage order), then the families no stage delegates. */
export const ARTIFACT_FAMILIES = [
  ...DELEGATION_STAGES.filter((stage): stage is ArtifactStage => stage !== 'commit'),
  'manual-validation',
  'validation-run',
  'pr-review',
] as const;
export type ArtifactFamily = (typeof ARTIFACT_FAMILIES)[number];

export type ReviewFamily = Extract<ArtifactStage, `review-${string}`>;
export type ReviewedFamily = Exclude<ArtifactStage, ReviewFamily>;

export type ArtifactIdentity = Readonly<{
  family: ArtifactFamily;
  round: number;
  name: string;
  path: string;
  size: number;
  mtimeMs: number;
}>;

export type { ArtifactDiagnosticCode } from './errorCodes.ts';

/** `name` is present when the diagnostic is about one directory entry. */
export type ArtifactDiagnostic = Readonly<{ code: ArtifactDiagnosticCode; name?: string; message: string }>;

export type ArtifactInventory = Readonly<{
  status: 'ready' | 'failed';
  changed: false;
  requestRef: string;
  taskId: string | null;
  taskDir: string;
  taskState: string | null;
  family: string;
  artifacts: readonly ArtifactIdentity[];
  latest: ArtifactIdentity | null;
  /** null when the inventory failed, or when the next round would not be a safe integer. */
  next: Readonly<{ round: number; name: string }> | null;
  reviewedInput: ArtifactIdentity | null;
  diagnostics: readonly ArtifactDiagnostic[];
  error: Readonly<{ code: ErrorCode; message: string }> | null;
}>;

type InventoryIdentity = { requestRef?: string; taskId?: string; taskState?: string };

// Listing every missing round of a huge gap (e.g. plan.md next to plan-r9007199254740991.md) would
// never finish; longer gaps are reported as one ROUND_GAP diagnostic for the whole range.
const MAX_LISTED_GAP = 100;
// The review file names its input within this many lines, starting at the marker line.
const REVIEW_INPUT_WINDOW = 12;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const CANONICAL_PATTERNS = ARTIFACT_FAMILIES.map(
  (family) => [family, new RegExp(`^${escapeRegExp(family)}(?:-r([1-9]\\d*))?\\.md$`)] as const,
);

export function isArtifactFamily(value: string): value is ArtifactFamily {
  return (ARTIFACT_FAMILIES as readonly string[]).includes(value);
}

/** `{family, round, name}` when `name` is a bare canonical artifact name of exactly one family, else null. */
export function parseArtifactName(name: string): { family: ArtifactFamily; round: number; name: string } | null {
  if (typeof name !== 'string' || name.includes('/') || name.includes('\\') || name.includes('\0')) return null;
  const matches: { family: ArtifactFamily; round: number; name: string }[] = [];
  for (const [family, pattern] of CANONICAL_PATTERNS) {
    const match = pattern.exec(name);
    if (!match) continue;
    const round = match[1] === undefined ? 1 : Number(match[1]);
    // `-r1` is not canonical (round 1 is the plain name) and rounds must stay exact integers.
    if (match[1] !== undefined && (!Number.isSafeInteger(round) || round < 2)) continue;
    matches.push({ family, round, name });
  }
  return matches.length === 1 ? (matches[0] ?? null) : null;
}

/** Round 1 → `<family>.md`, round N ≥ 2 → `<family>-rN.md`. Throws for unknown families and bad rounds. */
export function artifactName(family: string, round: number): string {
  if (!isArtifactFamily(family)) throw new Error(`unknown artifact family '${family}'`);
  if (!Number.isSafeInteger(round) || round < 1) throw new Error(`artifact round must be a safe positive integer, got ${String(round)}`);
  return looseArtifactName(family, round);
}

/** Orchestration's naming rule, without validation (docs/lifecycle.md §3.1, last paragraph). */
export function looseArtifactName(family: string, round: number): string {
  return round === 1 ? `${family}.md` : `${family}-r${round}.md`;
}

/**
 * Orchestration's loose round scan: the highest N over entries named `<family>.md` (N = 1) or
 * `<family>-r<digits>.md`, 0 when there are none. A directory read error is thrown to the caller.
 */
export function looseHighestRound(taskDir: string, family: string): number {
  const pattern = new RegExp(`^${escapeRegExp(family)}(?:-r(\\d+))?\\.md$`);
  let highest = 0;
  for (const name of fs.readdirSync(taskDir)) {
    const match = pattern.exec(name);
    if (match) highest = Math.max(highest, match[1] === undefined ? 1 : Number(match[1]));
  }
  return highest;
}

export function isReviewFamily(value: string): value is ReviewFamily {
  return isArtifactFamily(value) && value.startsWith('review-');
}

/** The family a review family reviews (§3.2: review-analysis→analysis, review-plan→plan, otherwise code). */
export function reviewedFamilyOf(reviewFamily: string): ReviewedFamily {
  if (reviewFamily === 'review-analysis') return 'analysis';
  if (reviewFamily === 'review-plan') return 'plan';
  return 'code';
}

type InventoryFindings = Pick<ArtifactInventory, 'status' | 'artifacts' | 'latest' | 'next' | 'reviewedInput' | 'diagnostics' | 'error'>;

/** An inventory of `family` in `taskDir`, its keys in one order whatever it found. */
function inventory(taskDir: string, family: string, identity: InventoryIdentity, found: InventoryFindings): ArtifactInventory {
  const { status, artifacts, latest, next, reviewedInput, diagnostics, error } = found;
  return Object.freeze({
    status,
    changed: false,
    requestRef: identity.requestRef ?? taskDir,
    taskId: identity.taskId ?? null,
    taskDir,
    taskState: identity.taskState ?? null,
    family,
    artifacts,
    latest,
    next,
    reviewedInput,
    diagnostics,
    error,
  });
}

function failedInventory(
  taskDir: string,
  family: string,
  identity: InventoryIdentity,
  code: ErrorCode,
  message: string,
): ArtifactInventory {
  const error = Object.freeze({ code, message });
  return inventory(taskDir, family, identity, {
    status: 'failed',
    artifacts: Object.freeze([]),
    latest: null,
    next: null,
    reviewedInput: null,
    diagnostics: Object.freeze([]),
    error,
  });
}

/** A reserved-looking entry that is not canonical: which diagnostic it gets. */
function noncanonicalDiagnostic(family: string, name: string): ArtifactDiagnostic | null {
  const lower = name.toLowerCase();
  if (!lower.startsWith(`${family}-r`) && lower !== `${family}.md`) return null;
  const roundText = new RegExp(`^${escapeRegExp(family)}-r(.+)\\.md$`, 'i').exec(name)?.[1];
  const outOfRange = roundText !== undefined && /^\d+$/.test(roundText) && !Number.isSafeInteger(Number(roundText));
  return {
    code: outOfRange ? 'ROUND_OUT_OF_RANGE' : 'NONCANONICAL_NAME',
    name,
    message: `noncanonical ${family} artifact candidate '${name}' (verify whether this is an unrelated file with a reserved prefix)`,
  };
}

function missingRoundDiagnostics(family: ArtifactFamily, rounds: readonly number[]): ArtifactDiagnostic[] {
  const diagnostics: ArtifactDiagnostic[] = [];
  let expected = 1;
  for (const round of rounds) {
    const first = expected;
    const last = round - 1;
    if (last >= first) {
      if (last - first + 1 <= MAX_LISTED_GAP) {
        for (let missing = first; missing <= last; missing += 1) {
          diagnostics.push({ code: 'ROUND_GAP', message: `${looseArtifactName(family, missing)} is missing` });
        }
      } else {
        diagnostics.push({
          code: 'ROUND_GAP',
          message: `${looseArtifactName(family, first)} through ${looseArtifactName(family, last)} are missing (${last - first + 1} rounds)`,
        });
      }
    }
    expected = round + 1;
  }
  return diagnostics;
}

/**
 * Inventory of one family's artifacts in `taskDir` (§3.2). Read-only. Status is 'failed' only for an
 * unknown family or an unreadable directory; everything else becomes a diagnostic.
 */
export function inspectArtifactDirectory(taskDir: string, family: string, identity: InventoryIdentity = {}): ArtifactInventory {
  if (!isArtifactFamily(family)) {
    return failedInventory(taskDir, family, identity, 'ARTIFACT_FAMILY_UNKNOWN', `unknown artifact family '${family}'`);
  }
  let names: string[];
  try {
    names = fs.readdirSync(taskDir);
  } catch (error) {
    return failedInventory(taskDir, family, identity, 'ARTIFACT_DIRECTORY_READ_FAILED', String(error));
  }

  const artifacts: ArtifactIdentity[] = [];
  const diagnostics: ArtifactDiagnostic[] = [];
  for (const name of names) {
    const parsed = parseArtifactName(name);
    if (!parsed || parsed.family !== family) {
      const diagnostic = noncanonicalDiagnostic(family, name);
      if (diagnostic) diagnostics.push(diagnostic);
      continue;
    }
    const file = path.join(taskDir, name);
    try {
      const stat = fs.lstatSync(file);
      if (stat.isSymbolicLink()) {
        diagnostics.push({ code: 'SYMBOLIC_LINK', name, message: `symbolic links are not workflow artifacts: ${name}` });
        continue;
      }
      if (!stat.isFile()) {
        diagnostics.push({ code: 'NON_REGULAR_FILE', name, message: `artifact is not a regular file: ${name}` });
        continue;
      }
      try {
        fs.accessSync(file, fs.constants.R_OK);
      } catch {
        diagnostics.push({ code: 'FILESYSTEM_RACE', name, message: `artifact is not readable: ${name}` });
        continue;
      }
      artifacts.push(Object.freeze({ family, round: parsed.round, name, path: file, size: stat.size, mtimeMs: stat.mtimeMs }));
    } catch (error) {
      // The entry vanished or changed between readdir and lstat.
      diagnostics.push({ code: 'FILESYSTEM_RACE', name, message: String(error) });
    }
  }

  artifacts.sort((left, right) => left.round - right.round);
  const rounds = artifacts.map((artifact) => artifact.round);
  if (artifacts.length > 0 && rounds[0] !== 1) diagnostics.push({ code: 'MISSING_BASE', message: `${family}.md is missing` });
  diagnostics.push(...missingRoundDiagnostics(family, rounds));

  const latest = artifacts.at(-1) ?? null;
  const max = latest?.round ?? 0;
  let next: ArtifactInventory['next'] = null;
  if (Number.isSafeInteger(max + 1)) {
    next = Object.freeze({ round: max + 1, name: artifactName(family, max + 1) });
  } else {
    diagnostics.push({
      code: 'ROUND_OUT_OF_RANGE',
      name: latest?.name ?? '',
      message: `no round after ${latest?.name ?? ''} can be named`,
    });
  }

  let reviewedInput: ArtifactIdentity | null = null;
  if (family.startsWith('review-') && latest) {
    const resolved = resolveReviewedInput(taskDir, family, latest);
    reviewedInput = resolved.reviewedInput;
    diagnostics.push(...resolved.diagnostics);
  }

  return inventory(taskDir, family, identity, {
    status: 'ready',
    artifacts: Object.freeze(artifacts),
    latest,
    next,
    reviewedInput,
    diagnostics: Object.freeze(diagnostics.map((diagnostic) => Object.freeze(diagnostic))),
    error: null,
  });
}

const REVIEW_INPUT_MARKER = /\*\*Review Input\*\*[:：]|\*\*审查输入\*\*[:：]/;

/** What a review's text names as its input (§3.3 steps 1–3): no marker line, no canonical name of the expected family near it, or that name. */
export type NamedReviewInput =
  | Readonly<{ kind: 'no-marker' }>
  | Readonly<{ kind: 'no-canonical-name'; names: readonly string[] }>
  | Readonly<{ kind: 'named'; input: { family: ArtifactFamily; round: number; name: string } }>;

export function namedReviewInput(content: string, reviewFamily: string): NamedReviewInput {
  const expected = reviewedFamilyOf(reviewFamily);
  const lines = content.split('\n');
  const start = lines.findIndex((line) => REVIEW_INPUT_MARKER.test(line));
  if (start === -1) return { kind: 'no-marker' };
  const window = lines.slice(start, start + REVIEW_INPUT_WINDOW);
  const tokens = window.flatMap((line) => [...line.matchAll(/`([^`]*\.md)`/g)].map((match) => match[1] ?? ''));
  const input = tokens.map(parseArtifactName).find((parsed) => parsed?.family === expected) ?? null;
  return input ? { kind: 'named', input } : { kind: 'no-canonical-name', names: Object.freeze(tokens) };
}

/**
 * The artifact a review says it reviewed (§3.3): the first back-ticked canonical `<reviewed family>` name
 * within 12 lines from the `**Review Input**:` / `**审查输入**：` line. It must be a regular file no newer
 * than the review. Any problem gives a BROKEN_REFERENCE diagnostic and a null input.
 */
export function resolveReviewedInput(
  taskDir: string,
  reviewFamily: string,
  latestReview: ArtifactIdentity,
): { reviewedInput: ArtifactIdentity | null; diagnostics: readonly ArtifactDiagnostic[] } {
  const expected = reviewedFamilyOf(reviewFamily);
  const broken = (message: string) => ({
    reviewedInput: null,
    diagnostics: Object.freeze([Object.freeze({ code: 'BROKEN_REFERENCE' as const, name: latestReview.name, message })]),
  });

  let content: string;
  try {
    content = fs.readFileSync(path.join(taskDir, latestReview.name), 'utf8');
  } catch (error) {
    return broken(String(error));
  }
  const named = namedReviewInput(content, reviewFamily);
  const input = named.kind === 'named' ? named.input : null;
  if (!input) return broken(`${latestReview.name} does not reference a canonical ${expected} artifact`);

  const file = path.join(taskDir, input.name);
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(file);
  } catch {
    return broken(`${input.name} referenced by ${latestReview.name} does not exist`);
  }
  if (stat.isSymbolicLink() || !stat.isFile()) return broken(`${input.name} referenced by ${latestReview.name} is not a regular file`);
  if (stat.mtimeMs > latestReview.mtimeMs) return broken(`${input.name} is newer than ${latestReview.name}`);
  return {
    reviewedInput: Object.freeze({
      family: input.family,
      round: input.round,
      name: input.name,
      path: file,
      size: stat.size,
      mtimeMs: stat.mtimeMs,
    }),
    diagnostics: Object.freeze([]),
  };
}

/** §3.4: both inventories ready, the artifact family has a latest round, and the latest review binds it. */
export function hasReviewAfterArtifact(taskDir: string, family: ReviewedFamily, reviewFamily: ReviewFamily): boolean {
  const artifacts = inspectArtifactDirectory(taskDir, family);
  const reviews = inspectArtifactDirectory(taskDir, reviewFamily);
  return (
    artifacts.status === 'ready' &&
    reviews.status === 'ready' &&
    artifacts.latest !== null &&
    reviews.reviewedInput?.name === artifacts.latest.name
  );
}
