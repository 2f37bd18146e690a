import type { InstallClient } from '../clients/installer.ts';
import type { Profile } from '../clients/installer.ts';
import { clientAdapter } from '../clients/registry.ts';
import type { IntentAudience } from '../core/intents.ts';
import { INTENT_AUDIENCE, LIFECYCLE_INTENTS } from '../core/intents.ts';

// What `baton install-hooks` tells the agents, generated here so it follows baton's intents and
// codes: the orchestrator instructions (a delimited block in the client's instructions file, e.g.
// CLAUDE.md / AGENTS.md) and the two lifecycle subagent profiles (the client's adapter gives the file
// and its format). What differs per client (how to spawn, why to hand the artifact over, the agent
// name) comes from its adapter. `baton` in the text is the absolute command line of this checkout,
// so an agent runs exactly what the hooks run.

/** Who runs each intent: the intent table's audience column. */
export const INTENT_OWNERS = INTENT_AUDIENCE;

function adapterOf(id: string): InstallClient {
  const adapter = clientAdapter(id);
  if (!adapter) throw new Error(`no agent client '${id}'`);
  return adapter;
}

export const EXECUTOR = 'agent-infra-lifecycle-executor';
export const REVIEWER = 'agent-infra-lifecycle-reviewer';

/** What the orchestrator does on each code it can meet; every code here is one baton really returns (tested). */
export const CODE_ADVICE: ReadonlyArray<readonly [code: string, advice: string]> = [
  [
    'DELEGATION_STATE_INVALID',
    'after `advance`: the subagent had not finished. Wait for it, check `status` until `run.pendingDelegation.status` is `sealed`, then `advance` again.',
  ],
  [
    'ORCHESTRATION_DELEGATION_BUSY',
    'a delegation is already pending (this task or another one in the repository): finish it (wait, then `advance`) or `abort` it; never spawn a second one.',
  ],
  ['ORCHESTRATION_DELEGATION_MISSING', 'nothing is pending: `route` again (after `advance`, the stage was already consumed).'],
  ['ORCHESTRATION_DELEGATION_ABORTED', 'the delegation was aborted: `begin-or-resume`, then `route`.'],
  [
    'ORCHESTRATION_RUN_NOT_RUNNING',
    'the run is paused or completed: read `run.pause` with `status`; `begin-or-resume` continues a recoverable pause that has no pending delegation.',
  ],
  [
    'ORCHESTRATION_ARTIFACT_INVALID',
    "the subagent's `complete-stage --content -` was refused and nothing was written: the subagent fixes the artifact and runs it again.",
  ],
  [
    'BATON_WORKER_UNAVAILABLE',
    'no baton worker serves the repository: ask the user to run `baton start` (or `baton worker`) in it; do not work around it.',
  ],
  ['BATON_REDIS_UNAVAILABLE', 'Redis cannot be reached: stop and tell the user.'],
  [
    'BATON_DELEGATION_NOT_STARTED',
    'no subagent started for the prepared delegation in time and the worker gave it up: `begin-or-resume`, `route`, `prepare`, then spawn the subagent at once.',
  ],
  [
    'BATON_DELEGATION_STALLED',
    'the subagent has not completed its stage for a long time: if it is still working, wait for it (its completion and stop still count); if it is gone, `abort --reason "…"`, then `begin-or-resume`.',
  ],
  [
    'DELEGATION_REVIEWER_WRITE_FORBIDDEN',
    'a reviewer changed files other than its review: stop and report; do not undo, abort or continue on your own (baton refuses `advance` until a human reverts the files or decides to keep them).',
  ],
  [
    'DELEGATION_TURN_AFTER_CONSUMED',
    'a subagent changed files after its delegation was consumed: stop and report; do not undo, abort or continue on your own (baton refuses `begin-or-resume` until a human reverts the files or decides to keep them).',
  ],
  ['DELEGATION_FORK_FORBIDDEN', 'the subagent was forked from your conversation: stop and report; spawn lifecycle subagents fresh.'],
  ['ORCHESTRATION_MAX_STEPS', 'the step limit is reached: stop and report.'],
  ['ORCHESTRATION_MANUAL_VALIDATION_PENDING', 'a human must validate first: stop and report.'],
  ['ORCHESTRATION_LEDGER_BLOCKED', 'unresolved review findings need a human decision: stop and report.'],
];

function intentsOf(owner: IntentAudience): string {
  return LIFECYCLE_INTENTS.filter((intent) => INTENT_OWNERS[intent] === owner)
    .map((intent) => `\`${intent}\``)
    .join(', ');
}

export const BLOCK_BEGIN = '<!-- baton:orchestrator:begin -->';
export const BLOCK_END = '<!-- baton:orchestrator:end -->';

/** The orchestrator instructions, as Markdown (without the delimiters); `writtenBy` is the command that wrote them. */
export function orchestratorInstructions(client: string, baton: string, writtenBy = `baton install-hooks ${client}`): string {
  const task = `${baton} task`;
  const codes = CODE_ADVICE.map(([code, advice]) => `- \`${code}\`: ${advice}`).join('\n');
  return `## Agent-infra task lifecycle (driven by baton)

Written by \`${writtenBy}\`; running it again replaces this section. It applies to the
agent that drives a task through its lifecycle. A subagent of type \`${EXECUTOR}\` or
\`${REVIEWER}\` follows its own instructions instead.

Each command prints one line of JSON: read \`status\` (\`running\`, \`paused\`, \`completed\`, \`failed\`),
\`error.code\`, \`run.pause\`, \`next\` and \`warnings\`. \`warnings\` says why baton did something you may
not expect (why \`route\` asks for another review round, why a run stays paused): tell the user each
one, and act on it before you go on. Use the task id (\`TASK-…\`) or its short number as \`<task>\`.

1. \`${task} <task> begin-or-resume\`
2. \`${task} <task> route\`: \`next\` names the \`action\` (skill), \`role\`, \`stage\`, \`round\` and \`artifact\`.
3. \`${task} <task> prepare --client ${client}\`
4. Spawn one new subagent of type \`${EXECUTOR}\` when \`next.role\` is \`executor\`, or
   \`${REVIEWER}\` when it is \`reviewer\`: fresh, in the foreground. ${adapterOf(client).install.instructions.spawnAdvice}
   Its prompt gives only the task id (\`taskId\`, \`TASK-…\`), the skill (\`next.action\`), stage, round
   and artifact.
5. Wait until the subagent has returned. Its SubagentStop hook seals the delegation.
6. \`${task} <task> advance\`, then go back to 2 while \`status\` is \`running\`. Stop when it is \`completed\`.

Never do a stage's work yourself, never review in your own context, never reuse a subagent.

On a code in \`error.code\` or \`run.pause.code\`:
${codes}
- Any other pause: stop and report \`run.pause\` to the user. A stuck delegation is given up with
  \`${task} <task> abort --reason "…"\`, then \`begin-or-resume\`.

Intents: yours are ${intentsOf('orchestrator')}; the subagents run ${intentsOf('subagent')}; the hooks
run ${intentsOf('hooks')}; the worker runs ${intentsOf('worker')} on its own; ${intentsOf('recovery')} are for recovery.
`;
}

/** `text` with baton's block replaced (or appended), the rest kept byte for byte. */
export function withInstructionBlock(text: string | null, block: string): string {
  const wrapped = `${BLOCK_BEGIN}\n${block}${BLOCK_END}\n`;
  if (text === null || text === '') return wrapped;
  const begin = text.indexOf(BLOCK_BEGIN);
  const end = begin === -1 ? -1 : text.indexOf(BLOCK_END, begin);
  if (begin !== -1 && end !== -1) {
    let after = end + BLOCK_END.length;
    if (text[after] === '\n') after += 1;
    return `${text.slice(0, begin)}${wrapped}${text.slice(after)}`;
  }
  return `${text}${text.endsWith('\n') ? '' : '\n'}\n${wrapped}`;
}

/**
 * The inverse of withInstructionBlock: baton's block out, with the blank line it was appended after;
 * the rest byte for byte. The same text when there is no block.
 */
export function withoutInstructionBlock(text: string): string {
  const begin = text.indexOf(BLOCK_BEGIN);
  const end = begin === -1 ? -1 : text.indexOf(BLOCK_END, begin);
  if (begin === -1 || end === -1) return text;
  let after = end + BLOCK_END.length;
  if (text[after] === '\n') after += 1;
  let before = text.slice(0, begin);
  const rest = text.slice(after);
  // The blank line an append put before the block goes with it.
  if (before.endsWith('\n\n') && (rest === '' || rest.startsWith('\n'))) before = before.slice(0, -1);
  return `${before}${rest}`;
}

// ---------------------------------------------------------------------------------------------
// Subagent profiles (docs/lifecycle.md §10.1, plus how to hand the artifact to baton)

function handOver(client: InstallClient, baton: string, what: string, fixable = '`ORCHESTRATION_ARTIFACT_INVALID`'): string {
  return `- Do not write ${what} with a file tool (${client.install.instructions.handOverReason}). Hand its full text to baton, which checks it,
  writes it and records the stage in one step:

  \`\`\`sh
  ${baton} task <task> complete-stage --stage <stage> --round <round> --artifact <artifact> --agent ${client.stageAgents[0]} --content - <<'BATON_ARTIFACT'
  …the whole artifact, in Markdown…
  BATON_ARTIFACT
  \`\`\`

  \`<task>\`, \`<stage>\`, \`<round>\` and \`<artifact>\` are the ones the orchestrator gave you. The command
  prints one line of JSON. On \`"status":"failed"\` with ${fixable}, nothing was
  written: fix what \`error.message\` says and run it again. On any other failure, stop and report it.`;
}

/**
 * The two lifecycle subagent profiles. With `guidance` (baton init installed its stage skills), each
 * says where the requested skill's guidance is.
 */
export function profiles(id: string, baton: string, guidance = false): readonly Profile[] {
  const client = adapterOf(id);
  const agent = client.stageAgents[0];
  const skillFile = guidance ? client.install.skills?.file('<skill>') : undefined;
  // The example is a skill of the profile's own role: an executor runs analyze-task, a reviewer review-analysis.
  const readGuidance = (example: string) =>
    skillFile
      ? `- Read the requested skill's guidance first and follow it: \`${skillFile}\`, where \`<skill>\` is the
  skill the orchestrator named (\`${client.install.skills!.file(example)}\` for ${example}).
`
      : '';
  return [
    {
      name: EXECUTOR,
      description:
        'Fresh executor for exactly one agent-infra lifecycle stage (analysis, plan, code or commit), spawned by the run-task orchestrator for a prepared delegation. Never reviews.',
      instructions: `You are a fresh executor subagent of the agent-infra task lifecycle. The orchestrator spawned you
for exactly one stage of one task and gave you the task id, the skill, the stage, the round and the
artifact name.

- Run only the requested non-review lifecycle skill (analyze-task, plan-task, code-task or commit)
  for the task you were given. Never run a review-* skill and never review your own work.
${readGuidance('analyze-task')}${handOver(client, baton, 'the stage artifact (analysis, plan or code report)')}
- For the commit stage there is no artifact: once the commit is made, run
  \`${baton} task <task> stage-completed --agent ${agent}\`.
- Then stop, with a short summary as your answer. Do not start the next stage, route the lifecycle,
  spawn other agents or reuse another agent's context.
- If the stage cannot be completed (missing input, human decision needed, permissions), stop and
  report why instead of improvising. baton pauses the run; the orchestrator decides what is next.
`,
    },
    {
      name: REVIEWER,
      description:
        'Fresh reviewer for exactly one agent-infra lifecycle review (review-analysis, review-plan or review-code), spawned by the run-task orchestrator for a prepared delegation. Writes only its review artifact.',
      instructions: `You are a fresh reviewer subagent of the agent-infra task lifecycle. The orchestrator spawned you
for exactly one review of one task and gave you the task id, the review skill, the stage, the round
and the artifact name.

- Run only the requested review-* skill (review-analysis, review-plan or review-code) for the task
  you were given.
${readGuidance('review-analysis')}- Do not modify business code or any other file: your only output is your review artifact (with its
  Review Summary, naming the reviewed artifact in backticks). baton compares the workspace before and
  after you and pauses the run on any other write (DELEGATION_REVIEWER_WRITE_FORBIDDEN).
${handOver(client, baton, 'the review', '`ORCHESTRATION_ARTIFACT_INVALID` or `ORCHESTRATION_REVIEW_INPUT_MISMATCH` (the Review Input line does not name the artifact under review)')}
- Stop after the review is recorded, with a short summary as your answer. Do not fix what you found,
  start another stage or spawn other agents.
`,
    },
  ];
}
