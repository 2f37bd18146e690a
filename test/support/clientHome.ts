import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { GitRepo } from './gitRepo.ts';

/**
 * For each test of the file: a repository made by `makeRepo` and an empty directory for `client`'s
 * per-user files (its home), both removed after the test; `use` gets each new pair. An afterEach
 * the file registers after this one runs before the removal.
 */
export function useRepoWithClientHome(
  client: string,
  makeRepo: () => GitRepo,
  use: (made: Readonly<{ repo: GitRepo; home: string }>) => void,
): void {
  let made: { repo: GitRepo; home: string } | null = null;
  beforeEach(() => {
    made = { repo: makeRepo(), home: fs.mkdtempSync(path.join(os.tmpdir(), `baton-${client}-home-`)) };
    use(made);
  });
  afterEach(() => {
    if (!made) return;
    made.repo.cleanup();
    fs.rmSync(made.home, { recursive: true, force: true });
    made = null;
  });
}
