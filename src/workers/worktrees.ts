import fs from 'node:fs';
import path from 'node:path';
import { Queue } from 'bullmq';
import { commonDirOf, gitDirOf, linkedWorktreesOf } from '../base/repoRoot.ts';
import { parseRepositoryEntry, queueNameFor, repositoriesKey } from '../queue/keys.ts';
import { realpathOrNull, safeIdentity } from './checkouts.ts';
import { stopServing } from './followCheckoutIds.ts';
import type { OnDemandConsumers } from './onDemand.ts';
import type { ServedCheckouts, WorkerScope } from './serving.ts';

// Every linked worktree of a repository is a checkout of its own (docs/architecture.md "Worktrees"),
// and the worker given the repository (`--repo`, `baton start`) serves them all: one it has not seen
// is served once `<common>/worktrees/<name>/gitdir` names a work tree that points back at it; one
// removed (`git worktree remove`, `prune`, or its directory deleted) is dropped, and the events still
// waiting in its queue are reported (their work tree is gone, so nothing can apply them). A worktree
// removed or pruned before any worker served it is found through the repository registry, where its
// hooks and commands recorded it with its main repository (`main`): when the worker first follows
// the repository, the events waiting in such a queue are reported the same way, once. They stay in
// Redis (the dashboard shows them), never dropped. Served worktrees cost what any idle checkout
// does: an entry in the one watch, no connection. Looking costs one stat of `<common>/worktrees` and
// one of each served worktree's `.git` per round. A `--discover` worker follows the worktrees of
// the checkouts it discovers, within its allowed roots.

type Followed = {
  readonly commonDir: string;
  /** The main repository's real root (what the registry's `main` names). */
  readonly main: string | null;
  /** Only worktrees inside these roots (a `--discover` worker's allowed roots); null: all. */
  readonly within: readonly string[] | null;
  /** Whether the registry was read for worktrees gone before anything served them. */
  checkedGone: boolean;
  stamp: string;
  /** The worktrees served, by git directory: their checkout id and root. */
  readonly served: Map<string, { id: string; root: string }>;
};

function inside(root: string, within: readonly string[] | null): boolean {
  if (within === null) return true;
  const real = realpathOrNull(root);
  return real !== null && within.some((allowed) => real === allowed || real.startsWith(`${allowed}${path.sep}`));
}

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
  /** Gone worktrees' checkout ids already reported. */
  readonly #reported = new Set<string>();
  /** One round at a time (the heartbeat and the discovery duties both follow). */
  #round: Promise<void> = Promise.resolve();

  constructor(scope: WorkerScope, checkouts: ServedCheckouts, consumers: OnDemandConsumers) {
    this.#scope = scope;
    this.#checkouts = checkouts;
    this.#consumers = consumers;
  }

  /**
   * Follows the worktrees of the repository `root` is a checkout of (served at the next `follow`);
   * `within`: only those inside these roots.
   */
  add(root: string, within: readonly string[] | null = null): void {
    const commonDir = realpathOrNull(commonDirOf(gitDirOf(root)));
    if (!commonDir || this.#followed.has(commonDir)) return;
    const main = path.basename(commonDir) === '.git' ? path.dirname(commonDir) : null;
    this.#followed.set(commonDir, { commonDir, main, within, checkedGone: false, stamp: '', served: new Map() });
  }

  /** Serves the worktrees added since the last round and drops the removed ones. */
  follow(): Promise<void> {
    this.#round = this.#round.then(() => this.#follow());
    return this.#round;
  }

  async #follow(): Promise<void> {
    for (const repo of this.#followed.values()) {
      const stamp = stampOf(path.join(repo.commonDir, 'worktrees'));
      // A work tree deleted by hand changes nothing in `<common>/worktrees` until it is pruned.
      const deleted = [...repo.served.values()].some((served) => !fs.existsSync(path.join(served.root, '.git')));
      if (stamp === repo.stamp && !deleted) continue;
      repo.stamp = stamp;
      const live = new Map<string, string>();
      for (const worktree of linkedWorktreesOf(repo.commonDir))
        if (worktree.root && inside(worktree.root, repo.within)) live.set(worktree.gitDir, worktree.root);
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
      if (!repo.checkedGone && !this.#scope.closing()) {
        repo.checkedGone = true;
        await this.#reportGone(repo, new Set(live.values()));
      }
    }
  }

  /** Reports the waiting events of this repository's registered worktrees on this machine whose work tree is gone. */
  async #reportGone(repo: Followed, live: ReadonlySet<string>): Promise<void> {
    if (!repo.main) return;
    const { connection, prefix, hostName, log } = this.#scope;
    const known = await connection.hgetall(repositoriesKey(prefix));
    for (const [id, value] of Object.entries(known)) {
      const entry = parseRepositoryEntry(value);
      if (entry.main !== repo.main || (entry.host !== null && entry.host !== hostName)) continue;
      if (this.#reported.has(id) || this.#checkouts.has(id) || live.has(entry.root)) continue;
      if (fs.existsSync(path.join(entry.root, '.git'))) continue; // still there: served once it is a worktree again
      const queueName = queueNameFor(id);
      const queue = new Queue(queueName, { connection, prefix, skipVersionCheck: true });
      queue.on('error', () => undefined);
      try {
        const counts = await queue.getJobCounts('waiting', 'prioritized', 'delayed');
        const waiting = Object.values(counts).reduce((sum, count) => sum + count, 0);
        this.#reported.add(id);
        if (waiting > 0)
          log(
            `${entry.root}: a linked worktree of ${repo.main} that is gone (removed or pruned before a worker served it); queue ${queueName} holds ${waiting} event(s) that nothing can apply (their work tree is gone); they stay in Redis, see the dashboard`,
          );
      } finally {
        await queue.close().catch(() => undefined);
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
