// Types for scripts/sourceStamp.mjs (used by scripts/build.mjs and test/support/global-setup.ts).
export const STAMP_FILE: string;
export function sourceStamp(root: string): string;
export function staleDist(root: string): string | null;
