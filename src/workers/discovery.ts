import path from 'node:path';
import { parseRepositoryEntry, repositoriesKey } from '../queue/keys.ts';
import { realpathOrNull, safeIdentity } from './checkouts.ts';
import type { ServedCheckouts, WorkerScope } from './serving.ts';
import type { RepositoryWorktrees } from './worktrees.ts';

/**
 * `--discover` (docs/architecture.md "Queue semantics"): serves every checkout of the registry that
 * lies inside an allowed root and still has the registered id, and follows the linked worktrees of
 * its repository inside those roots (workers/worktrees.ts).
 */
export async function discover(
  scope: WorkerScope,
  checkouts: ServedCheckouts,
  roots: readonly string[],
  worktrees?: RepositoryWorktrees,
): Promise<void> {
  const known = await scope.connection.hgetall(repositoriesKey(scope.prefix));
  for (const [id, value] of Object.entries(known)) {
    if (checkouts.has(id)) continue;
    // Only inside the allowed roots (checked before reading the checkout, which would create its
    // id file); another machine's checkout may be recorded at a path that exists here too: the id decides.
    const real = realpathOrNull(parseRepositoryEntry(value).root);
    if (!real || !roots.some((allowed) => real === allowed || real.startsWith(`${allowed}${path.sep}`))) continue;
    const identity = safeIdentity(real);
    if (!identity || identity.id !== id) continue;
    await checkouts.serve(identity);
    // Its repository's other linked worktrees too, within the allowed roots (idle ones cost nothing).
    worktrees?.add(real, roots);
  }
  await worktrees?.follow();
}
