// Types for scripts/lazyImports.mjs (used by scripts/build.mjs and test/cli/bundleImports.test.ts).
import type { Metafile } from 'esbuild';

export type LazyImportSite = { file: string; spec: string; names: string[] };
export type LazyImportReport = LazyImportSite & { missing?: string[]; defaultOnly?: boolean; error?: string };

export function lazyCommonJsImports(metafile: Metafile): string[];
export function lazyImportSites(dir: string): LazyImportSite[];
export function checkLazyImports(dir: string): Promise<LazyImportReport[]>;
