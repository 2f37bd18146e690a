import { fileURLToPath } from 'node:url';

// Fixtures live in the repository (test/fixtures/), so the suite passes from any clone.
// `repo/` is one task mid-lifecycle (analysis approved in round 2, plan delegation prepared);
// `hooks/` holds native hook payloads in the shapes Claude Code and Codex send on stdin.
export const FIXTURES_DIR = fileURLToPath(new URL('../fixtures/', import.meta.url));
export const EXAMPLE_AGENTS_DIR = `${FIXTURES_DIR}repo/.agents`;
export const EXAMPLE_TASK_DIR = `${EXAMPLE_AGENTS_DIR}/workspace/active/TASK-20260101-000001`;
export const EXAMPLE_HOOKS_DIR = `${FIXTURES_DIR}hooks`;
/** The clients' records of a child's model requests, from real runs of the pinned clients (test/core/usageRecords.test.ts). */
export const EXAMPLE_USAGE_DIR = `${FIXTURES_DIR}usage`;
