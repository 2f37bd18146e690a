// Fault injection for the crash tests and the chaos suite: with BATON_FAILPOINT=<point>:<intent>
// (or <point>:*) the worker kills itself with SIGKILL when it reaches that point while applying an
// event of that intent: the closest a test can get to pulling the plug at an exact moment. With
// BATON_FAILPOINT=<point>:<intent>:stop it stops itself (SIGSTOP) there instead, frozen while it holds
// the job, until the test sends SIGCONT.
// Points: after-journal (pending record written, no run file yet), after-commit (run files written,
// journal not yet marked done, job not acknowledged), after-done (journal done, job not acknowledged).

export type FailpointName = 'after-journal' | 'after-commit' | 'after-done';

const spec = typeof process !== 'undefined' ? process.env.BATON_FAILPOINT : undefined;

export function failpoint(name: FailpointName, intent: string): void {
  if (!spec) return;
  const [point, which, action] = spec.split(':');
  if (point === name && (which === '*' || which === intent)) process.kill(process.pid, action === 'stop' ? 'SIGSTOP' : 'SIGKILL');
}
