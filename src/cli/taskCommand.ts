import { run as runIntent } from './task.ts';

// `baton task`: a lifecycle intent (task.ts), or one of baton's two commands around a headless
// reviewer, `review` and `wait` (headlessReview.ts, loaded only for them; docs/clients.md "A
// reviewer from another vendor").

export async function run(argv: string[]): Promise<number> {
  if (argv[1] === 'review' || argv[1] === 'wait') return (await import('./headlessReview.ts')).runHeadless(argv);
  return runIntent(argv);
}
