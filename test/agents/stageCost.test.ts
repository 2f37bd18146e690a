import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clientVersions } from '../support/agentClients.ts';
import type { ClientName, ClientVersion } from '../support/agentClients.ts';
import { EXECUTOR, REVIEWER, executorThatCompletes, parentThatSpawns, shell, spawn } from '../support/agentScripts.ts';
import { reviewHandOver, worldFor } from '../support/agentWorld.ts';
import type { AgentWorld } from '../support/agentWorld.ts';
import type { ModelRequest, Role, Turn, Usage } from '../support/modelServer.ts';
import { runBaton } from '../support/processes.ts';
import { URL_PATTERN, dashboardUrlOf, startBaton } from '../support/services.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';

// A stage's cost on its receipt (docs/run-view.md "What a stage cost"), with the real clients: the
// scripted model server reports a usage of its own making in every response of the executor and of
// the reviewer, and the receipt of each stage holds exactly what the server reported to that
// child, as the client's own record (transcript, rollout, session events) wrote it down and the
// worker read it at the seal.

const CLIENTS: ClientName[] = ['claude-code', 'codex', 'copilot-cli'];
const cases = CLIENTS.flatMap((client) => clientVersions(client));

/** A distinct usage per role and step, so that a figure counted for the wrong child or twice shows. */
function usageOf(role: Role, step: number): Usage {
  const base = role === 'executor' ? 1000 : 5000;
  return { input: base + 10 * step, output: base / 10 + step, cacheRead: 300 + step, cacheCreation: 40 + step };
}

function withUsage(role: Role, script: (request: ModelRequest) => Turn): (request: ModelRequest) => Turn {
  return (request) => ({ ...script(request), usage: usageOf(role, request.step) });
}

/**
 * What the client's record holds of what the server reported: Claude Code 2.1.26 writes each
 * message's usage as the stream's first event had it (output 1, the final count comes later);
 * the OpenAI Responses API has no cache writes, so neither does Codex's or Copilot CLI's record.
 */
function recorded(version: ClientVersion, request: ModelRequest): Required<Usage> {
  const usage = request.reported!;
  return {
    input: usage.input,
    output: version.client === 'claude-code' && version.version === '2.1.26' ? 1 : usage.output,
    cacheRead: usage.cacheRead ?? 0,
    cacheCreation: request.api === 'anthropic' ? (usage.cacheCreation ?? 0) : 0,
  };
}

function expectedCost(version: ClientVersion, w: AgentWorld, role: Role) {
  const requests = w.server.byRole(role);
  const sum = (pick: (usage: Required<Usage>) => number) =>
    requests.reduce((total, request) => total + pick(recorded(version, request)), 0);
  const tokens = {
    input: sum((u) => u.input),
    output: sum((u) => u.output),
    cacheRead: sum((u) => u.cacheRead),
    cacheCreation: sum((u) => u.cacheCreation),
  };
  return { requests: requests.length, tokens, models: [{ model: requests[0]!.model, requests: requests.length, ...tokens }] };
}

describe.concurrent.each(cases)('$label', { timeout: 180_000 }, (version: ClientVersion) => {
  const { client } = version;

  it('sealed receipts: tokens, requests, model and wall time of each child, as the model server reported them; baton cost sums and prices them', async (context) => {
    const w = await worldFor(context, version, { keepSessions: true });
    expect((await w.task('begin-or-resume')).status).toBe('running');
    await w.task('prepare', '--client', client);
    const analysis = await w.run('Drive task 01 through its analysis stage.', {
      parent: parentThatSpawns(client, spawn(client, EXECUTOR, 'Run analyze-task for task 01.'), [`${w.baton} task 01 advance`]),
      executor: withUsage('executor', executorThatCompletes(client, w.baton)),
    });
    expect(analysis.code, `${analysis.stderr}\n${analysis.stdout.slice(-3000)}`).toBe(0);
    const executor = expectedCost(version, w, 'executor');

    expect((await w.task('prepare', '--client', client)).run.pendingDelegation.stage).toBe('review-analysis');
    const review = await w.run('Review the analysis of task 01.', {
      parent: parentThatSpawns(client, spawn(client, REVIEWER, 'Run review-analysis for task 01.'), [`${w.baton} task 01 advance`]),
      reviewer: withUsage('reviewer', (request) =>
        request.step === 0 ? { toolCalls: [shell(client, reviewHandOver(w))] } : { text: 'review-analysis.md written.' },
      ),
    });
    expect(review.code, `${review.stderr}\n${review.stdout.slice(-3000)}`).toBe(0);
    expect(w.server.scriptErrors).toEqual([]);

    const receipts: Array<Record<string, any>> = w.runFile().receipts;
    expect(receipts.map((receipt) => [receipt.stage, receipt.role, receipt.status])).toEqual([
      ['analysis', 'executor', 'consumed'],
      ['review-analysis', 'reviewer', 'consumed'],
    ]);
    for (const [receipt, role, expected] of [
      [receipts[0]!, 'executor', executor],
      [receipts[1]!, 'reviewer', expectedCost(version, w, 'reviewer')],
    ] as const) {
      expect(expected.requests, `${role} requests`).toBeGreaterThanOrEqual(2);
      expect(receipt.cost, `${role} of ${version.label}`).toMatchObject({ read: true, note: null, ...expected });
      const at = w.server.byRole(role).map((request) => request.at);
      // The child's own first and last entries enclose its requests (same clock, ms resolution).
      expect(receipt.cost.wallMs).toBeGreaterThanOrEqual(Math.max(...at) - Math.min(...at) - 2);
    }

    // baton cost: the same figures per role and model, priced by the user's table only.
    const model = executor.models[0]!.model!;
    const prices = { currency: 'USD', perMillionTokens: { [model]: { input: 3, output: 15, cacheRead: 0.3, cacheCreation: 3.75 } } };
    fs.writeFileSync(path.join(w.repo.root, '.agents', 'baton.json'), JSON.stringify({ profile: 'agent-infra-0.9.2', prices }));
    const printed = await runBaton(['cost', '01', '--json'], { cwd: w.repo.root, env: { ...process.env, ...w.env } });
    expect(printed.code, printed.stderr).toBe(0);
    const shown = JSON.parse(printed.stdout);
    expect(shown.byRole.map((entry: any) => [entry.role, entry.figures.requests, entry.figures.tokens])).toEqual([
      ['executor', receipts[0]!.cost.requests, receipts[0]!.cost.tokens],
      ['reviewer', receipts[1]!.cost.requests, receipts[1]!.cost.tokens],
    ]);
    const tokens = shown.total.tokens;
    expect(shown.currency).toBe('USD');
    expect(shown.total.price).toBeCloseTo(
      (tokens.input * 3 + tokens.output * 15 + tokens.cacheRead * 0.3 + tokens.cacheCreation * 3.75) / 1e6,
      12,
    );
    expect(shown.failedReviews.receipts).toBe(0);

    // baton runs, the run page and its JSON: the same total.
    const listed = await runBaton(['runs', '--json'], { cwd: w.repo.root, env: { ...process.env, ...w.env } });
    expect(JSON.parse(listed.stdout).runs[0].cost).toMatchObject({ requests: shown.total.requests, unrecorded: 0, currency: 'USD' });
    const dashboard = await startBaton(['dashboard', '--port', '0'], {
      env: { ...process.env, ...w.env },
      cwd: w.repo.root,
      ready: URL_PATTERN,
    });
    context.onTestFinished(async () => {
      await dashboard.stop('SIGKILL');
    });
    const base = dashboardUrlOf(dashboard);
    const checkout = repoIdentity(w.repo.root).id;
    const detail = (await (await fetch(new URL(`api/runs/${checkout}/${receipts[0]!.taskId}`, base))).json()) as Record<string, any>;
    expect(detail.cost.total).toEqual(shown.total);
    const page = await (await fetch(new URL(`runs/${checkout}/${receipts[0]!.taskId}`, base))).text();
    expect(page).toContain('data-cost-table');
    expect(page).toContain(`${shown.total.requests} requests`);

    // /metrics: the tokens and requests of each seal, by role and model.
    const metrics = await (await fetch(new URL('metrics', base))).text();
    const sample = (name: string, labels: string) =>
      Number(new RegExp(`^${name}\\{[^}]*${labels}[^}]*\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? Number.NaN);
    for (const receipt of receipts) {
      const [{ model, requests, input, output }] = receipt.cost.models;
      const of = `role="${receipt.role}",model="${model}"`;
      expect(sample('baton_stage_requests_total', of), `${receipt.role} requests in\n${metrics}`).toBe(requests);
      expect(sample('baton_stage_tokens_total', `${of},kind="input"`)).toBe(input);
      expect(sample('baton_stage_tokens_total', `${of},kind="output"`)).toBe(output);
    }
  });
});
