// The machine's CA bundle for Node (NODE_EXTRA_CA_CERTS), taken out of the suite's environment and
// kept for the one test that needs it. Node parses that bundle at every start (docs/hooks.md
// "Transport and cost") and the suite starts ~2,300 Node processes, none of which leaves the
// machine; the package test's npm does (the registry, maybe behind a TLS-intercepting proxy).
//
// Kept on globalThis, not in a module constant: vitest runs the global setup once per project and
// may evaluate its module again for each, after the first has already deleted the variable; a
// module constant read at load was then '' for the second project (issue 44).

const KEPT = Symbol.for('baton.test.machineNodeCaCerts');

type Keeper = { [KEPT]?: string };

/**
 * Removes NODE_EXTRA_CA_CERTS from `env` and returns the value the process first had ('' if none),
 * the same on every call in this process, whichever caller came first.
 */
export function takeMachineCaCerts(env: NodeJS.ProcessEnv = process.env, keeper: Keeper = globalThis as Keeper): string {
  keeper[KEPT] ??= env.NODE_EXTRA_CA_CERTS ?? '';
  delete env.NODE_EXTRA_CA_CERTS;
  return keeper[KEPT];
}

/**
 * NODE_EXTRA_CA_CERTS as process `pid` was started with it, from the environment the kernel keeps
 * for it (Linux /proc/<pid>/environ: what the process removed later is still there), or '' if none;
 * null where it cannot be read.
 */
export function startedWithCaCerts(pid: number, read: (file: string) => Buffer): string | null {
  let environ: Buffer;
  try {
    environ = read(`/proc/${pid}/environ`);
  } catch {
    return null;
  }
  const entry = environ
    .toString('utf8')
    .split('\0')
    .find((line) => line.startsWith('NODE_EXTRA_CA_CERTS='));
  return entry ? entry.slice('NODE_EXTRA_CA_CERTS='.length) : '';
}
