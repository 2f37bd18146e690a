import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './processes.ts';

/**
 * A file of dist/ as built (npm run build): its text, and the modules esbuild put into it, read from
 * the `// <path>` line that opens each module's code.
 */
export function builtBundle(name: string): { text: string; modules: string[] } {
  const text = fs.readFileSync(path.join(PROJECT_ROOT, 'dist', name), 'utf8');
  return { text, modules: [...text.matchAll(/^\/\/ ((?:node_modules|src)\/\S+)$/gm)].map((match) => match[1]!) };
}
