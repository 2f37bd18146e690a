import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import type { InstallClient } from '../clients/installer.ts';
import { CLIENT_ADAPTERS } from '../clients/registry.ts';
import { endpointFile } from '../base/batonDir.ts';
import { repoIdentity } from '../queue/checkoutId.ts';
import type { RepoIdentity } from '../queue/checkoutId.ts';
import { namedQueueConfig, noRedisNamed } from '../queue/endpoint.ts';
import type { ClientQueueConfig } from '../queue/endpoint.ts';
import { queueNameFor } from '../queue/keys.ts';
import { HEARTBEAT_INTERVAL_MS } from '../queue/keys.ts';
import { redactRedisUrl } from '../queue/redisUrl.ts';
import { spooledFiles } from '../queue/spool.ts';
import { workerWithin } from '../queue/outcome.ts';
import { lookupRepoRoot, printJson } from './common.ts';
import { EXECUTOR, REVIEWER } from '../install/instructions.ts';
import { installContext, readText } from '../install/plan.ts';
import { batonHookPositions, batonOfHookCommand, parseSettings } from '../install/settings.ts';
import { parseCommand } from './options.ts';
import { wiredClients } from './wiredClients.ts';
import { batonVersion } from '../base/batonPackage.ts';
import { LATER_PROFILE, PROFILE_NAMES, profileRules } from '../core/profile.ts';
import { PROFILE_FILE, profileFile, readRepositoryRecord } from '../core/profiles/file.ts';
import { reviewerVendorText } from '../core/profiles/reviewerVendor.ts';

// `baton doctor [--json]` (docs/adopting.md "baton doctor"): is this repository ready for an agent to
// run a task through its lifecycle? One line per check, each saying what to do when it fails: Redis
// (which URL, and where that came from), a worker serving this checkout (the same heartbeat reader
// `baton task` consults before it answers BATON_WORKER_UNAVAILABLE), Redis's eviction and
// persistence settings (what the worker warns about), the spool, and for each client its hooks (and
// whether the command they run starts here), profiles and trust.
// Levels, as `brew doctor` has them: `fail` (agents cannot run a task here), `warn` (fine on a
// development machine, wrong on a shared box: a Redis that forgets its queue on restart, a client
// that the user has not yet trusted the project in), `ok`, and `skip` (does not apply).
// The exit code follows fail only; `--strict` (a shared box, CI) counts every warning as a failure.

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';
export type Check = Readonly<{ check: string; status: CheckStatus; message: string }>;

const CONNECT_TIMEOUT_MS = 2_000;
const LABELS: Record<CheckStatus, string> = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL', skip: 'skip' };

function describeSource(config: ClientQueueConfig, root: string): string {
  switch (config.source) {
    case 'option':
      return '--redis';
    case 'env':
      return 'REDIS_URL';
    case 'endpoint':
      return `recorded by this repository's worker in ${path.relative(root, endpointFile(root))}`;
    case 'private':
      return "the private redis-server 'baton start' runs for this repository";
  }
}

async function redisChecks(root: string, repo: RepoIdentity, redisOption: string | undefined): Promise<Check[]> {
  const resolved = namedQueueConfig({ redisOption, repoRoot: root });
  if (!resolved) {
    // Nothing to look at without guessing: the default address may be someone else's Redis.
    return [
      { check: 'redis', status: 'fail', message: noRedisNamed('baton doctor', root) },
      { check: 'worker', status: 'fail', message: 'unknown: no Redis is named' },
      { check: 'redis settings', status: 'skip', message: 'no Redis is named' },
    ];
  }
  const config = resolved.queue;
  const where = `${redactRedisUrl(config.redisUrl)} (${describeSource(resolved, root)})`;
  const start = `run 'baton start' in ${root} and keep it running`;
  const { RepositoryQueueClient } = await import('../queue/client.ts');
  const { connectFast } = await import('../queue/connection.ts');
  const { redisSettingProblems } = await import('../queue/redisSettings.ts');
  let client: Awaited<ReturnType<typeof RepositoryQueueClient.connect>>;
  try {
    client = await RepositoryQueueClient.connect(config, repo, CONNECT_TIMEOUT_MS);
  } catch (error) {
    const why = `cannot reach ${where}: ${(error as Error).message}`;
    return [
      {
        check: 'redis',
        status: 'fail',
        message: `${why}; ${start} (it starts a private redis-server when none answers), or point REDIS_URL at your Redis`,
      },
      { check: 'worker', status: 'fail', message: 'unknown: Redis cannot be reached' },
      { check: 'redis settings', status: 'skip', message: 'Redis cannot be reached' },
    ];
  }
  const checks: Check[] = [{ check: 'redis', status: 'ok', message: `reachable at ${where}, key prefix '${config.prefix}'` }];
  try {
    // The look `baton task` takes; the grace covers workers that reconnected but have not beaten yet.
    const serving = await workerWithin(client, HEARTBEAT_INTERVAL_MS + 500);
    checks.push(
      serving
        ? { check: 'worker', status: 'ok', message: `a worker serves this checkout (queue ${client.queueName})` }
        : {
            check: 'worker',
            status: 'fail',
            message: `no worker serves ${root} (queue ${client.queueName}): ${start} (or 'baton worker --repo ${root}')`,
          },
    );
  } finally {
    await client.close();
  }
  const connection = await connectFast(config.redisUrl, CONNECT_TIMEOUT_MS).catch(() => null);
  const problems = connection ? await redisSettingProblems(connection) : null;
  connection?.disconnect();
  checks.push(
    problems === null
      ? {
          check: 'redis settings',
          status: 'skip',
          message: 'this Redis does not allow CONFIG: check maxmemory-policy noeviction and persistence (appendonly yes) with its operator',
        }
      : problems.length === 0
        ? { check: 'redis settings', status: 'ok', message: 'maxmemory-policy noeviction; persistence on' }
        : {
            check: 'redis settings',
            // An evicted key is a job lost while Redis runs; no persistence loses jobs only when it restarts.
            status: problems.some((problem) => problem.setting === 'eviction') ? 'fail' : 'warn',
            message: problems.map((problem) => problem.message).join(' '),
          },
  );
  return checks;
}

function spoolCheck(root: string): Check {
  const waiting = spooledFiles(root).length;
  return waiting === 0
    ? { check: 'spool', status: 'ok', message: 'empty: no event waits for Redis' }
    : {
        check: 'spool',
        status: 'fail',
        message: `${waiting} event(s) wait in .git/baton/spool/ (Redis was down when a hook ran): a worker delivers them, in order, once Redis answers`,
      };
}

/** The lifecycle profile the worker and `baton task` apply here (src/core/profile.ts), and its reviewer-vendor policy. */
function profileCheck(root: string): Check {
  try {
    const { profile: name, reviewerVendor } = readRepositoryRecord(root);
    const recorded = fs.existsSync(profileFile(root)) ? `recorded in ${PROFILE_FILE}` : `the default: ${PROFILE_FILE} records none`;
    const message = `${name} (${recorded})`;
    if (reviewerVendor === null) return { check: 'profile', status: 'ok', message };
    if (!profileRules(name).reviewerVendorPolicy) {
      return {
        check: 'profile',
        status: 'warn',
        message: `${message}; its reviewerVendor "${reviewerVendor}" is not enforced under ${name}: run baton init --profile ${LATER_PROFILE}`,
      };
    }
    return { check: 'profile', status: 'ok', message: `${message}; reviewer vendor: ${reviewerVendorText(reviewerVendor)}` };
  } catch (error) {
    return {
      check: 'profile',
      status: 'fail',
      message: `BATON_PROFILE_INVALID: ${(error as Error).message}; run baton init --profile <name> (${PROFILE_NAMES.join(', ')})`,
    };
  }
}

/** What the hooks' command answers to --version here, or why it does not start. */
function commandVersion(command: string, root: string): { ok: true; version: string } | { ok: false; why: string } {
  const run = spawnSync('/bin/sh', ['-c', `${command} --version`], { cwd: root, encoding: 'utf8', timeout: 15_000 });
  const version = /^baton (\S+)/m.exec(run.stdout ?? '')?.[1];
  if (run.status === 0 && version) return { ok: true, version };
  const said = `${run.stderr ?? ''}${run.stdout ?? ''}`.trim().split('\n')[0] || (run.error?.message ?? `exit ${run.status}`);
  return { ok: false, why: said };
}

async function clientChecks(root: string, client: InstallClient, anyInstalled: boolean): Promise<Check[]> {
  const name = client.id;
  const settingsFile = client.install.settingsFile;
  const text = readText(path.join(root, settingsFile), settingsFile);
  const parsed = text === null ? null : parseSettings(text, settingsFile);
  if (parsed && !parsed.ok)
    return [{ check: `hooks ${name}`, status: 'fail', message: parsed.message.replace(/ Nothing was written$/, '') }];
  const hooks = parsed?.ok ? batonHookPositions(parsed.settings) : [];
  if (hooks.length === 0) {
    const message = `not set up here (${settingsFile} has no hook of baton's): run 'baton init --client ${name}'`;
    return [{ check: `hooks ${name}`, status: anyInstalled ? 'skip' : 'fail', message }];
  }
  const missingEvents = client.install.hooks.filter((spec) => !hooks.some((hook) => hook.event === spec.event)).map((spec) => spec.event);
  const missingFiles = [client.install.agentFile(EXECUTOR), client.install.agentFile(REVIEWER)].filter(
    (file) => !fs.existsSync(path.join(root, file)),
  );
  const command = batonOfHookCommand(hooks[0]!.command) ?? 'baton';
  const checks: Check[] = [];
  if (missingEvents.length > 0 || missingFiles.length > 0) {
    const missing = [...missingEvents.map((event) => `the ${event} hook`), ...missingFiles].join(', ');
    checks.push({ check: `hooks ${name}`, status: 'fail', message: `${missing} missing: run 'baton init --client ${name}' again` });
  } else {
    const started = commandVersion(command, root);
    const mine = batonVersion();
    checks.push(
      !started.ok
        ? {
            check: `hooks ${name}`,
            status: 'fail',
            message: `the hooks run '${command}', which does not start here (${started.why}): put baton on PATH, or run 'baton init --command "<how to run baton>"'`,
          }
        : {
            check: `hooks ${name}`,
            status: 'ok',
            message: `${client.install.hooks.map((spec) => spec.event).join(', ')} run '${command}' (baton ${started.version}${started.version === mine ? '' : `; this is baton ${mine}`})`,
          },
    );
  }
  const installer = await client.install.installer();
  const problems =
    installer.trustProblems?.(installContext(root, client, hooks, { trustCommand: `baton init --client ${name} --trust` })) ?? [];
  checks.push(
    problems.length === 0
      ? { check: `trust ${name}`, status: 'ok', message: `${client.displayName} honours this repository's hooks and permissions` }
      : // On a dev machine the user trusts the project in the client (its trust dialog, /hooks screen); an unattended agent cannot.
        { check: `trust ${name}`, status: 'warn', message: problems.join(' ') },
  );
  return checks;
}

export async function run(argv: string[]): Promise<number> {
  const program = new Command('baton doctor')
    .description(
      'Check that agents can run tasks here: Redis, a worker serving this checkout, Redis settings, the spool, and for each client its hooks and trust. Each check is ok, WARN (fine on a development machine) or FAIL; exit 1 when one fails.',
    )
    .option('--repo <dir>', 'repository (default: the nearest ancestor of the working directory holding .git)')
    .option(
      '--redis <url>',
      "the Redis to check (default: as baton task finds it: REDIS_URL, the worker's recorded endpoint, the private Redis of baton start; never an unnamed one)",
    )
    .option(
      '--strict',
      'count warnings as failures (a shared box, CI): a Redis without persistence, a client that has not trusted the project',
    )
    .option('--json', 'print { ok, strict, repository, checks: [{ check, status, message }] }');
  const exit = parseCommand(program, argv);
  if (exit !== null) return exit;
  const options = program.opts<{ repo?: string; redis?: string; json?: boolean; strict?: boolean }>();
  const strict = options.strict === true;
  const root = lookupRepoRoot(options.repo);
  if (!root.ok) {
    const message = `${root.message}: run it inside your project's git repository, or pass --repo DIR`;
    if (options.json) printJson({ ok: false, strict, repository: null, checks: [{ check: 'repository', status: 'fail', message }] });
    else process.stderr.write(`baton doctor: ${message}\n`);
    return 1;
  }
  const repo = repoIdentity(root.root);
  const found: Check[] = [
    { check: 'repository', status: 'ok', message: `${repo.root}, checkout id ${repo.id} (queue ${queueNameFor(repo.id)})` },
  ];
  found.push(profileCheck(root.root));
  found.push(...(await redisChecks(root.root, repo, options.redis)));
  found.push(spoolCheck(root.root));
  const installed = wiredClients(root.root);
  for (const client of CLIENT_ADAPTERS) found.push(...(await clientChecks(root.root, client, installed.length > 0)));
  const checks = strict ? found.map((check) => (check.status === 'warn' ? { ...check, status: 'fail' as const } : check)) : found;
  const ok = checks.every((check) => check.status !== 'fail');
  if (options.json) printJson({ ok, strict, repository: repo.root, checks });
  else {
    for (const check of checks) process.stdout.write(`${LABELS[check.status]}  ${check.check.padEnd(18)} ${check.message}\n`);
    const warnings = checks.filter((check) => check.status === 'warn').length;
    if (warnings > 0)
      process.stdout.write(
        `${warnings} warning(s): fine on a development machine; on a shared box or in CI, 'baton doctor --strict' fails on them\n`,
      );
  }
  return ok ? 0 : 1;
}
