import fs from 'node:fs';
import path from 'node:path';
import { commonDirOf, gitDirOf, linkedWorktreesOf } from '../base/repoRoot.ts';
import { safeIdentity } from './checkouts.ts';
import { stopServing } from './followCheckoutIds.ts';
import type { OnDemandConsumers } from './onDemand.ts';
import type { ServedCheckouts, WorkerScope } from './serving.ts';

// Every linked worktree of a repository is a checkout of its own (docs/architecture.md "Worktrees"),
// and the worker given the repository (`--repo`, `baton start`) serves them all: one it has not seen
// is served once `<common>/worktrees/<name>/gitdir` names a work tree that points back at it; one
// removed (`git worktree remove`, `prune`, or its directory deleted) is dropped, and the events still
// waiting in its queue are reported (their work tree is gone, so nothing can apply them). Served
// worktrees cost what any idle checkout does: an entry in the one watch, no connection. Looking
// costs one stat of `<common>/worktrees` and one of each served worktree's `.git` per round.

type Followed = {
  readonly commonDir: string;
  stamp: string;
  /** The worktrees served, by git directory: their checkout id and root. */
  readonly served: Map<string, { id: string; root: string }>;
};

function stampOf(file: string): string {
  try {
    const stat = fs.statSync(file);
    return `${stat.ino}:${stat.mtimeMs}`;
  } catch {
    return '-';
  }
}

export class RepositoryWorktrees {
  readonly #scope: WorkerScope;
  readonly #checkouts: ServedCheckouts;
  readonly #consumers: OnDemandConsumers;
  readonly #followed = new Map<string, Followed>();

  constructor(scope: WorkerScope, checkouts: ServedCheckouts, consumers: OnDemandConsumers) {
    this.#scope = scope;
    this.#checkouts = checkouts;
    this.#consumers = consumers;
  }

  /** Follows the worktrees of the repository `root` is a checkout of (served at the next `follow`). */
  add(root: string): void {
    const commonDir = commonDirOf(gitDirOf(root));
    if (!this.#followed.has(commonDir)) this.#followed.set(commonDir, { commonDir, stamp: '', served: new Map() });
  }

  /** Serves the worktrees added since the last round and drops the removed ones. */
  async follow(): Promise<void> {
    for (const repo of this.#followed.values()) {
      const stamp = stampOf(path.join(repo.commonDir, 'worktrees'));
      // A work tree deleted by hand changes nothing in `<common>/worktrees` until it is pruned.
      const deleted = [...repo.served.values()].some((served) => !fs.existsSync(path.join(served.root, '.git')));
      if (stamp === repo.stamp && !deleted) continue;
      repo.stamp = stamp;
      const live = new Map<string, string>();
      for (const worktree of linkedWorktreesOf(repo.commonDir)) if (worktree.root) live.set(worktree.gitDir, worktree.root);
      for (const [gitDir, served] of repo.served) {
        if (live.get(gitDir) === served.root) continue;
        repo.served.delete(gitDir);
        await this.#drop(served.id, served.root);
      }
      for (const [gitDir, root] of live) {
        if (repo.served.has(gitDir) || this.#scope.closing()) continue;
        const identity = safeIdentity(root);
        if (!identity) continue;
        repo.served.set(gitDir, { id: identity.id, root });
        await this.#checkouts.serve(identity);
      }
    }
  }

  async #drop(id: string, root: string): Promise<void> {
    const entry = this.#checkouts.get(id);
    if (!entry) return;
    const waiting = await stopServing(this.#scope, this.#checkouts, this.#consumers, entry);
    this.#scope.log(
      `${root}: the linked worktree was removed or pruned; no longer serving queue ${entry.queueName}` +
        (waiting > 0 ? `, where ${waiting} event(s) still wait that nothing can apply (their work tree is gone)` : ''),
    );
  }
}
