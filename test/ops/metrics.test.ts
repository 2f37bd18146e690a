import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TASK_ID, uniquePrefix } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { batonEnv, jsonOf, runBaton } from '../support/processes.ts';
import { URL_PATTERN, dashboardUrlOf, startBaton } from '../support/services.ts';
import type { ServiceProcess } from '../support/services.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { stepContext, task, wholeStage } from '../support/runSteps.ts';
import type { StepContext } from '../support/runSteps.ts';
import { eventIdForKey } from '../../src/queue/eventIds.ts';
import { repoIdentity } from '../../src/queue/checkoutId.ts';

// /metrics after a real lifecycle: every counter matches what the test made happen (events per
// intent and result, a job that failed, the latency histogram, queue depth, runs by status, pending
// delegations, workers, a spooled event); and the page is closed beyond loopback without the token.

const redisUrl = inject('redisUrl');
let served: GitRepo;
let unserved: GitRepo;
let env: NodeJS.ProcessEnv;
let worker: ServiceProcess;
const services: ServiceProcess[] = [];
let ctx: StepContext;

type Sample = { name: string; labels: Record<string, string>; value: number };

function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

async function scrape(url: string): Promise<{ text: string; samples: Sample[]; contentType: string | null }> {
  const response = await fetch(new URL('metrics', url));
  expect(response.status).toBe(200);
  const text = await response.text();
  return { text, samples: parseMetrics(text), contentType: response.headers.get('content-type') };
}

function value(samples: Sample[], name: string, labels: Record<string, string>): number | undefined {
  return samples.find((sample) => sample.name === name && Object.entries(labels).every(([key, wanted]) => sample.labels[key] === wanted))
    ?.value;
}

beforeAll(async () => {
  served = gitRepoWithTask();
  unserved = gitRepoWithTask();
  env = batonEnv({ redisUrl, prefix: uniquePrefix('metrics') });
  worker = await startBaton(['worker', '--repo', served.root, '--dashboard', '--port', '0'], { env, ready: / ready:/ });
  services.push(worker);
  ctx = stepContext(served.root, served.taskDir, env);
  expect((await task(ctx, ['begin-or-resume'])).status).toBe('running');
  let status = 'running';
  for (let stage = 1; stage <= 7 && status === 'running'; stage += 1) {
    if (stage === 3) {
      // A refused event mid-lifecycle: a second prepare while one is pending.
      expect((await task(ctx, ['prepare', '--client', 'claude-code'])).status).toBe('running');
      const busy = await task(ctx, ['prepare', '--client', 'claude-code']);
      expect(busy.error?.code).toBe('ORCHESTRATION_DELEGATION_BUSY');
      expect((await task(ctx, ['abort', '--reason', 'metrics test'])).status).toBe('paused');
      expect((await task(ctx, ['begin-or-resume'])).status).toBe('running');
    }
    status = await wholeStage(ctx, `child-${stage}`);
  }
  expect(status).toBe('completed');
  // A job that fails: its journal record is corrupt (task 02 does not exist, so no run is paused).
  const failingKey = 'metrics-failing';
  const record = path.join(served.root, '.git', 'baton', 'journal', `${eventIdForKey(failingKey)}.json`);
  fs.writeFileSync(record, 'not a journal record');
  const failing = await runBaton(
    ['task', '02', 'pause', '--code', 'X', '--message', 'y', '--recoverable', 'true', '--idempotency-key', failingKey],
    { env, cwd: served.root },
  );
  expect(jsonOf(failing).error?.code).toBe('BATON_JOB_FAILED');

  // A second repository: known to Redis (inline commands), no worker, a delegation prepared and
  // its SubagentStart spooled by a hook while Redis was unreachable.
  const inline = await runBaton(['task', '01', 'begin-or-resume', '--worker', 'inline'], { env, cwd: unserved.root });
  expect(jsonOf(inline).status, inline.stderr).toBe('running');
  const prepared = await runBaton(['task', '01', 'prepare', '--client', 'claude-code', '--worker', 'inline'], { env, cwd: unserved.root });
  expect(jsonOf(prepared).status, prepared.stderr).toBe('running');
  const spooled = await runBaton(['hook', 'claude-code', '--redis', 'unix:///nonexistent/redis.sock'], {
    env,
    cwd: unserved.root,
    input: nativePayload('claude-code', 'SubagentStart', 'executor', 'child-x', unserved.root),
  });
  expect(spooled.code, spooled.stderr).toBe(0);
  const spoolDir = path.join(unserved.root, '.git', 'baton', 'spool');
  expect(
    fs.existsSync(spoolDir) ? fs.readdirSync(spoolDir).filter((name) => name.endsWith('.json')) : [],
    `${spooled.stdout}${spooled.stderr}`,
  ).toHaveLength(1);
}, 120_000);

afterAll(async () => {
  await Promise.all(services.map((service) => service.stop('SIGKILL')));
  served?.cleanup();
  unserved?.cleanup();
});

describe('/metrics', () => {
  it('counts what the lifecycle did, per repository and intent', async () => {
    const { samples, contentType, text } = await scrape(dashboardUrlOf(worker));
    expect(contentType).toContain('text/plain');
    expect(text).toContain('# TYPE baton_event_latency_seconds histogram');
    const repo = { repository: served.root };
    const applied = (intent: string, result: string) => value(samples, 'baton_events_applied_total', { ...repo, intent, result }) ?? 0;
    // 7 stages: 7 prepares (+1 aborted, +1 refused), 7 starts, 6 complete-stage + 1 stage-completed, 7 stops, 7 advances, 1 abort, 2 begin-or-resume
    expect(applied('begin-or-resume', 'running')).toBe(2);
    expect(applied('prepare', 'running')).toBe(8);
    expect(applied('prepare', 'failed')).toBe(1);
    expect(applied('hook-start', 'running')).toBe(7);
    expect(applied('complete-stage', 'running')).toBe(6);
    expect(applied('stage-completed', 'running')).toBe(1);
    expect(applied('hook-stop', 'running')).toBe(7);
    expect(applied('advance', 'running')).toBe(6);
    expect(applied('advance', 'completed')).toBe(1);
    expect(applied('abort', 'paused')).toBe(1);
    expect(value(samples, 'baton_events_failed_total', { ...repo, intent: 'pause' })).toBe(1);
    const total = samples
      .filter((sample) => sample.name === 'baton_events_applied_total' && sample.labels.repository === served.root)
      .reduce((sum, sample) => sum + sample.value, 0);
    expect(total).toBe(40);
    // Every applied job is in the latency histogram; buckets are cumulative and end at the count.
    expect(value(samples, 'baton_event_latency_seconds_count', repo)).toBe(total);
    expect(value(samples, 'baton_event_latency_seconds_bucket', { ...repo, le: '+Inf' })).toBe(total);
    const buckets = samples
      .filter((sample) => sample.name === 'baton_event_latency_seconds_bucket' && sample.labels.repository === served.root)
      .map((sample) => sample.value);
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b));
    const sum = value(samples, 'baton_event_latency_seconds_sum', repo)!;
    expect(sum).toBeGreaterThan(0);
    expect(sum / total).toBeLessThan(5);
    expect(value(samples, 'baton_queue_jobs', { ...repo, state: 'completed' })).toBe(total);
    expect(value(samples, 'baton_queue_jobs', { ...repo, state: 'failed' })).toBe(1);
    expect(value(samples, 'baton_queue_jobs', { ...repo, state: 'waiting' })).toBe(0);
    expect(value(samples, 'baton_runs', { ...repo, status: 'completed' })).toBe(1);
    expect(value(samples, 'baton_runs', { ...repo, status: 'running' })).toBe(0);
    expect(value(samples, 'baton_pending_delegations', repo)).toBe(0);
    expect(value(samples, 'baton_oldest_pending_delegation_age_seconds', repo)).toBe(0);
    expect(value(samples, 'baton_spool_events', repo)).toBe(0);
    expect(value(samples, 'baton_workers', repo)).toBe(1);
    const beat = samples.find(
      (sample) => sample.name === 'baton_worker_heartbeat_age_seconds' && sample.labels.repository === served.root,
    )!;
    expect(beat.labels.worker).toMatch(/^w-/);
    expect(beat.value).toBeLessThan(5);
    expect(beat.labels.machine).toBeTruthy();

    // The run view of the same lifecycle: every stage done, the commit authorization consumed,
    // and each of the 8 receipts (one aborted) on the timeline with the job behind every step.
    const { id } = repoIdentity(served.root);
    const detail = (await (await fetch(new URL(`api/runs/${id}/${TASK_ID}`, dashboardUrlOf(worker)))).json()) as any;
    expect(detail.run.status).toBe('completed');
    expect(detail.view.stages.map((stage: any) => stage.state)).toEqual(Array(7).fill('done'));
    expect(detail.view.commit.state).toBe('consumed');
    expect(detail.view.commit.issuedAt).toBeTruthy();
    const receipts = new Set(detail.view.timeline.map((step: any) => step.receiptId));
    expect(receipts.size).toBe(8);
    expect(detail.view.timeline.filter((step: any) => step.status === 'aborted')).toHaveLength(1);
    expect(detail.view.timeline).toHaveLength(7 * 5 + 2); // the aborted one was prepared, then aborted
    expect(detail.view.timeline.every((step: any) => step.job !== null)).toBe(true);
    for (const step of detail.view.timeline) expect(detail.jobLinks[step.job.id]).toMatch(/^\/queue\/.+\/[ch]-/);
  });

  it('`baton dashboard` reports every repository in Redis: spool depth, no worker, a pending delegation', async () => {
    const dashboard = await startBaton(['dashboard', '--port', '0'], { env, ready: URL_PATTERN });
    services.push(dashboard);
    const { samples } = await scrape(dashboardUrlOf(dashboard));
    const other = { repository: unserved.root };
    expect(value(samples, 'baton_spool_events', other)).toBe(1);
    expect(value(samples, 'baton_workers', other)).toBe(0);
    expect(value(samples, 'baton_runs', { ...other, status: 'running' })).toBe(1);
    expect(value(samples, 'baton_events_applied_total', { ...other, intent: 'begin-or-resume', result: 'running' })).toBe(1);
    expect(value(samples, 'baton_events_applied_total', { ...other, intent: 'prepare', result: 'running' })).toBe(1);
    // the served repository's counters, as the worker's own dashboard reports them
    expect(value(samples, 'baton_events_applied_total', { repository: served.root, intent: 'advance', result: 'completed' })).toBe(1);

    // The delegation left pending shows its age.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const later = (await scrape(dashboardUrlOf(dashboard))).samples;
    expect(value(later, 'baton_pending_delegations', other)).toBe(1);
    expect(value(later, 'baton_oldest_pending_delegation_age_seconds', other)).toBeGreaterThanOrEqual(1);
  });

  it('is closed beyond loopback without the token, and to foreign host names', async () => {
    const token = 'metrics-tok-5d1e';
    const guarded = await startBaton(['dashboard', '--host', '127.0.0.2', '--port', '0', '--token', token], { env, ready: URL_PATTERN });
    services.push(guarded);
    const url = dashboardUrlOf(guarded);
    expect((await fetch(new URL('metrics', url))).status).toBe(401);
    expect((await fetch(new URL('metrics', url), { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const allowed = await fetch(new URL('metrics', url), { headers: { authorization: `Bearer ${token}` } });
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toContain(`baton_runs{repository="${served.root}"`);
    // the run view is under the same rule
    expect((await fetch(new URL('runs', url))).status).toBe(401);
    expect((await fetch(new URL('api/runs', url))).status).toBe(401);

    const local = new URL(dashboardUrlOf(worker));
    const status = await new Promise<number>((resolve, reject) => {
      http
        .get(
          { host: local.hostname, port: local.port, path: '/metrics', headers: { host: `metrics.example:${local.port}` } },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        )
        .on('error', reject);
    });
    expect(status).toBe(403);
  });
});
