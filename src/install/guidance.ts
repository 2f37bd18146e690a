import { createHash } from 'node:crypto';
import type { InstallClient } from '../clients/installer.ts';

// baton's own stage guidance (docs/adopting.md "The stage guidance"): one skill per lifecycle
// action (the `next.action` of route, docs/lifecycle.md §7.3), written by `baton init` where the
// client reads skills (the adapter's `install.skills`), so that the profiles' "run the requested
// skill" points at something that exists. Each says what the executor must produce, or, for a
// review, the exact format the router reads (docs/lifecycle.md §3.3, §4), and how disputed findings
// go into the ledger (§5). Where agent-infra's own skills are installed, they stay in charge and
// baton writes none of these.
//
// A file baton wrote carries a marker line with a digest of the rest of the file, so any checkout
// can tell baton's untouched file (replaced by a later init, removed by uninstall) from one the
// user edited (kept; uninstall asks for --force) and from a skill that is not baton's at all.

export const SKILL_NAMES = ['analyze-task', 'review-analysis', 'plan-task', 'review-plan', 'code-task', 'review-code', 'commit'] as const;
export type SkillName = (typeof SKILL_NAMES)[number];

type Family = 'analysis' | 'plan' | 'code';

/** What the text placeholders stand for, named the same in every skill. */
const PLACEHOLDERS = '`<task-id>` (`TASK-…`), `<round>` and `<artifact>`';

const FAMILY: Record<Family, { title: string; ids: string; review: SkillName }> = {
  analysis: { title: 'analysis', ids: 'AN', review: 'review-analysis' },
  plan: { title: 'plan', ids: 'PL', review: 'review-plan' },
  code: { title: 'code report', ids: 'CD', review: 'review-code' },
};

const MARKER = /^<!-- baton:guidance sha256=([0-9a-f]{16}) [^\n]*-->\n/m;

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

/** The file with its marker line: the digest is over everything else in it. */
function withMarker(frontmatter: string, body: string): string {
  const hash = digest(`${frontmatter}${body}`);
  return `${frontmatter}<!-- baton:guidance sha256=${hash} written by 'baton init': edit it freely (baton init then keeps it; baton uninstall asks for --force) -->\n${body}`;
}

/** Who wrote a skill file: baton (untouched), baton but edited since, or someone else (agent-infra, the user). */
export function guidanceOwner(text: string): 'baton' | 'edited' | 'foreign' {
  const marker = MARKER.exec(text);
  if (!marker) return 'foreign';
  return digest(text.replace(MARKER, '')) === marker[1] ? 'baton' : 'edited';
}

function frontmatter(name: SkillName, description: string): string {
  return `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n\n`;
}

type Context = Readonly<{ client: InstallClient; baton: string }>;

function handOver({ client, baton }: Context, stage: string, what: string): string {
  return `## Hand the ${what} to baton

Do not write \`<artifact>\` with a file tool (${client.install.instructions.handOverReason}). Give its whole
text to baton, which checks it, writes it and records the stage in one step:

\`\`\`sh
${baton} task <task-id> complete-stage --stage ${stage} --round <round> --artifact <artifact> --agent ${client.stageAgents[0]} --content - <<'BATON_ARTIFACT'
<the whole ${what}, in Markdown>
BATON_ARTIFACT
\`\`\`

It prints one line of JSON. \`"status":"running"\`: done. \`ORCHESTRATION_ARTIFACT_INVALID\`${
    what === 'review' ? ' or `ORCHESTRATION_REVIEW_INPUT_MISMATCH`' : ''
  }: nothing was
written; fix what \`error.message\` says and run the command again. Any other failure: stop and report
it; do not work around it.
`;
}

const LEDGER = `## Disputed findings: the ledger

When a finding is disputed, the dispute is recorded in task.md, in one table under the heading
\`## Review Disagreement Ledger\` (add the section at the end of task.md when it is missing):

\`\`\`markdown
## Review Disagreement Ledger

| id | stage | round | severity | status | evidence |
|----|-------|-------|----------|--------|----------|
| CD-1 | code | 1 | major | refuted | code-r2.md#response-to-prior-review |
\`\`\`

- \`id\`: the finding's id (\`AN-n\` for the analysis, \`PL-n\` for the plan, \`CD-n\` for the code), or
  \`HD-n\` for a question only a human can decide (its round is \`-\`, its severity \`decision\`).
- \`stage\`: \`analysis\`, \`plan\` or \`code\`; \`round\`: the review round that raised it; \`severity\`:
  \`blocker\`, \`major\` or \`minor\`.
- \`status\`: the executor answers \`accepted\`, \`adjusted\`, \`refuted\` or \`cannot-judge\`; the
  reviewer settles it with \`confirmed\`, keeps it \`open\`, or escalates it to \`needs-human-decision\`
  (after three rounds on the same finding, at the latest). \`closed\` and \`human-decided\` settle a row too.
- Before the commit, baton refuses a code-stage row that is not settled (\`ORCHESTRATION_LEDGER_BLOCKED\`)
  and any malformed row (\`ORCHESTRATION_LEDGER_INVALID\`).
`;

function priorReview(family: Family): string {
  const { review, ids } = FAMILY[family];
  return `In round 2 and later, this round answers a review that asked for changes: the highest-round
\`${review}*.md\` of the task directory (\`${review}.md\` is round 1, \`${review}-r2.md\` round 2, …).
Add a section \`## Response to Prior Review\` that answers each of its findings by id (\`${ids}-1\`, …):
\`accepted\` (changed as asked), \`adjusted\` (changed differently: say how), \`refuted\` (kept, with the
evidence) or \`cannot-judge\` (say what is missing). Record each finding you refute or cannot judge
in the ledger (below).`;
}

function intro(name: SkillName, role: 'executor' | 'reviewer', what: string): string {
  return `# ${name}: ${what}

You are the ${role} the orchestrator spawned for one stage of one task, driven by baton. Your prompt
names ${PLACEHOLDERS}; use them as given. The task's files are in
\`.agents/workspace/active/<task-id>/\`: \`task.md\` (what is asked) and the artifacts of earlier stages.
Do this one stage only: do not start another stage, route the lifecycle or spawn agents.
`;
}

type ExecutorSpec = Readonly<{ family: Family; what: string; reads: string; work: string; sections: string; changesCode: boolean }>;

const EXECUTORS: Record<'analyze-task' | 'plan-task' | 'code-task', ExecutorSpec> = {
  'analyze-task': {
    family: 'analysis',
    what: 'the requirements analysis',
    reads: '`task.md`, and the code and documents it concerns (read them; change nothing)',
    work: 'Understand what is asked and why, what it touches, and what could go wrong. The analysis changes no file of the project: its only output is the artifact.',
    sections:
      '`## Requirement` (the task in your own words, with its acceptance criteria), `## Affected Code` (files and functions, with paths), `## Impact and Risks`, `## Open Questions` (what only the requester can answer; "none" if none)',
    changesCode: false,
  },
  'plan-task': {
    family: 'plan',
    what: 'the implementation plan',
    reads: '`task.md` and the approved analysis (its highest round, `analysis.md` or `analysis-rN.md`), and the code it names',
    work: 'Decide how to do it. The plan changes no file of the project: its only output is the artifact.',
    sections:
      '`## Approach` (and the alternatives you rejected, briefly), `## Steps` (in order, each with the files it changes), `## Tests` (what proves it works: the tests to add or run), `## Risks and Rollback`, `## Out of Scope`',
    changesCode: false,
  },
  'code-task': {
    family: 'code',
    what: 'the implementation and its code report',
    reads: '`task.md`, the approved plan (its highest round, `plan.md` or `plan-rN.md`) and the analysis it rests on',
    work: "Implement the plan: change the project's code and tests as its steps say, and run the project's tests. A step you cannot do as planned is a deviation to report, not to hide.",
    sections:
      '`## Changes` (file by file: what changed and why), `## Verification` (the commands you ran and their results, failures included), `## Deviations from the Plan` ("none" if none), `## Open Points`',
    changesCode: true,
  },
};

function executorSkill(name: keyof typeof EXECUTORS, context: Context): string {
  const spec = EXECUTORS[name];
  const { ids } = FAMILY[spec.family];
  const artifact = spec.family === 'code' ? 'code report' : spec.family;
  const description = `baton lifecycle, ${spec.family} stage (executor): ${spec.what} of one task, as ${spec.family}.md (round 1) or ${spec.family}-rN.md, handed to baton. Only when the orchestrator delegated this stage to you.`;
  const body = `${intro(name, 'executor', `${spec.what} (the ${spec.family} stage)`)}
\`<artifact>\` is \`${spec.family}.md\` in round 1 and \`${spec.family}-r<round>.md\` after.

## Do

1. Read ${spec.reads}.
2. ${spec.work}
3. Write the ${artifact} in Markdown, starting with \`# ${FAMILY[spec.family].title[0]!.toUpperCase()}${FAMILY[spec.family].title.slice(1)}, round <round>\`, with these
   sections: ${spec.sections}.
4. ${priorReview(spec.family).replace(/\n/g, '\n   ')}
5. Hand it to baton (below), then stop with a two-line summary as your answer.
${spec.changesCode ? '' : `\nDo not change the project's code in this stage; findings about it (\`${ids}-n\`) come from the review.\n`}
${handOver(context, spec.family, artifact)}
${LEDGER}`;
  return withMarker(frontmatter(name, description), body);
}

type ReviewSpec = Readonly<{ family: Family; checks: string; manual: string }>;

const REVIEWS: Record<'review-analysis' | 'review-plan' | 'review-code', ReviewSpec> = {
  'review-analysis': {
    family: 'analysis',
    checks:
      'Does it state the requirement and its acceptance criteria correctly, name the affected code, and see the risks? Is anything asked left out, or anything added that was not asked?',
    manual: 'what a human must check before the work can go on (usually 0 here)',
  },
  'review-plan': {
    family: 'plan',
    checks:
      'Does the plan meet the analysis? Are the steps complete, in a workable order, each with its files? Do the tests prove the acceptance criteria? Are the risks handled?',
    manual: 'what a human must check before the work can go on (usually 0 here)',
  },
  'review-code': {
    family: 'code',
    checks:
      'Does the change do what the plan says, and only that? Read the code report and the change itself (`git status`, `git diff`: read-only). Are there tests, do they pass per the report, is anything broken or missing? Do not run builds or tests that write into the work tree: baton would see the writes as yours.',
    manual:
      'the checks a human must still make before the commit; more than 0 stops the lifecycle before the commit (`ORCHESTRATION_MANUAL_VALIDATION_PENDING`)',
  },
};

function reviewSkill(name: keyof typeof REVIEWS, context: Context): string {
  const spec = REVIEWS[name];
  const { ids, title } = FAMILY[spec.family];
  const description = `baton lifecycle, ${name} (reviewer): review the latest ${title} of one task and hand baton a review in the exact format its router reads (Review Input, Review Summary). Only when the orchestrator delegated this review to you.`;
  const body = `${intro(name, 'reviewer', `review the ${title} (the ${name} stage)`)}
\`<artifact>\` is \`${name}.md\` in round 1 and \`${name}-r<round>.md\` after. Your only output is that
review (and, in round 2 and later, the status of this stage's ledger rows in task.md): change no
other file. baton compares the workspace before and after you and pauses the lifecycle on any other
write (\`DELEGATION_REVIEWER_WRITE_FORBIDDEN\`).

## Do

1. Find the input: the highest-round \`${spec.family}*.md\` of the task directory (\`${spec.family}.md\` is round 1,
   \`${spec.family}-r2.md\` round 2, …). That is the one you review, and the one your review names.
2. Read it, \`task.md\` and what it rests on. ${spec.checks}
3. Give each finding an id (\`${ids}-1\`, \`${ids}-2\`, …; in a later round keep the ids of open findings)
   and a severity: \`blocker\` (must not go on), \`major\` (must be fixed), \`minor\` (should be fixed).
4. In round 2 and later, read the executor's \`## Response to Prior Review\` and settle each row of this
   stage in the ledger of task.md (below).
5. Write the review in the format below, hand it to baton, then stop with a two-line summary. Do not
   fix what you found.

## The review: the format baton reads

\`\`\`markdown
# ${title[0]!.toUpperCase()}${title.slice(1)} review, round <round>

- **Review Input**: \`<the ${spec.family} file you reviewed>\`

## Review Summary

- **Reviewer**: ${context.client.stageAgents[0]}
- **Overall Verdict**: <Approved | Changes Requested | Rejected>
- **Findings (AI-actionable)**: <B> blockers, <M> majors, <N> minors / **Manual validation**: <V>

## Findings

### ${ids}-1 (major)

<what is wrong, where (file and line), and what would fix it>
\`\`\`

What baton's router reads, exactly:

- **The Review Input line** names the file you reviewed, in backticks, on that line or one of the
  next 11 (\`\`- **Review Input**: \`${spec.family}-r2.md\` \`\`). It must be the latest ${spec.family} artifact. If it
  names another file (\`task.md\`, an older round), or none, \`complete-stage\` refuses the review with
  \`ORCHESTRATION_REVIEW_INPUT_MISMATCH\`, naming the file expected: fix the line and hand it over again.
- **One \`## Review Summary\` section** (no other heading of that name), with exactly one
  \`**Overall Verdict**:\` line and one \`**Findings (AI-actionable)**:\` line, each at the start of a
  line (a leading \`- \` is fine, an indented one does not count).
- **The verdict**: \`Approved\` lets the lifecycle go on; \`Changes Requested\` or \`Rejected\` sends the
  ${title} back to its executor for another round.
- **The counts** are numbers (\`0 blockers, 1 major, 2 minors\`). Count the open findings of this review.
  \`complete-stage\` refuses anything else with \`ORCHESTRATION_ARTIFACT_INVALID\`, nothing written: words
  (\`REVIEW_SUMMARY_PLACEHOLDER_INVALID\`, whose text says the parser also knows "canonical
  placeholders"), and those placeholders themselves (\`{unresolved-blockers} blockers, …\`), which
  nothing fills in here, so a review with them would not count as approved.
- **Manual validation** (\`**Manual validation**: <V>\` on the findings line): ${spec.manual}.

${handOver(context, name, 'review')}
${LEDGER}`;
  return withMarker(frontmatter(name, description), body);
}

function commitSkill({ client, baton }: Context): string {
  const description =
    'baton lifecycle, commit stage (executor): commit the reviewed change of one task with git, then tell baton the stage is done. Only when the orchestrator delegated this stage to you.';
  const body = `${intro('commit', 'executor', 'commit the reviewed change (the commit stage)')}
baton routes here only once the code review approved the change with nothing left for a human to check
and no unsettled finding in the ledger. This stage has no artifact.

## Do

1. See what the code stage changed: \`git status\` and \`git diff\`, and the latest code report
   (\`code.md\` or \`code-rN.md\`), whose \`## Changes\` lists the files. \`.agents/workspace/\` is
   ignored by git and stays out of the commit.
2. Stage exactly those changes (\`git add <files>\`) and commit them: a first line that says what the
   change does (the task's title will often do), a blank line, a short body from the code report, and
   a last line \`Task: <task-id>\`. Do not amend or rewrite earlier commits, do not push.
3. Once \`git commit\` has succeeded, tell baton:

   \`\`\`sh
   ${baton} task <task-id> stage-completed --agent ${client.stageAgents[0]}
   \`\`\`

4. Stop with the commit's id and first line as your answer.

If the commit fails (a hook refuses it, a conflict, nothing to commit), do not run \`stage-completed\`:
stop and report what git said.
`;
  return withMarker(frontmatter('commit', description), body);
}

/** The text of one stage skill for a client, with `baton` the command the installed files run. */
export function stageSkill(name: SkillName, client: InstallClient, baton: string): string {
  const context = { client, baton };
  if (name === 'commit') return commitSkill(context);
  if (name in EXECUTORS) return executorSkill(name as keyof typeof EXECUTORS, context);
  return reviewSkill(name as keyof typeof REVIEWS, context);
}
