import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { uniquePrefix } from '../support/fixtures.ts';
import { UNTOUCHED, startForeignRedis } from '../support/foreignRedis.ts';
import { startedWithCaCerts } from '../support/machineCaCerts.ts';
import { JSON_CORPUS, corpusProject, keptIn, userBytesChanged } from '../support/formattingCorpus.ts';
import { git } from '../support/gitRepo.ts';
import { nativePayload } from '../support/lifecycleDriver.ts';
import { DENO_DIR, HOOK_WAITS_FOR_RESULT, PROJECT_ROOT, jsonOf, runProcess } from '../support/processes.ts';
import type { CliRun } from '../support/processes.ts';
import { USER_CLAUDE_SETTINGS, projectDirs, projectFiles, writeUserClaudeSetup } from '../support/projectFiles.ts';

// Issue 16, "What must be shown", first part: baton as a user gets it. `npm pack` of this checkout
// (dist/ as `npm test` built it), installed with `npm install -g` into an empty prefix from the registry
// with an empty npm cache, run from outside the checkout with a PATH that has only the prefix's bin
// and the system's: `baton init` in a project of the user's, `baton new`, `baton doctor`, and
// `baton uninstall` giving back every byte. Also the package itself (what it ships, its size, its
// version) and the worker of the installed package on Bun and Deno, as docs/adopting.md says.
// Issue 26, "Shown by": the formatting corpus through init → uninstall byte for byte, and the first
// hour (a foreign Redis left untouched by `baton start`, a wrong Review Input refused, doctor levels).

const MAX_INSTALLED_BYTES = 100 * 1024 * 1024;
const VERSION = (JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

let work: string;
let prefix: string;
let tarball: string;
let home: string;

/**
 * The environment of a user's shell: no npm script variables, no baton settings, PATH = the prefix's
 * bin + the system's. The machine's CA bundle for Node (NODE_EXTRA_CA_CERTS, which the global setup
 * takes out of the other tests' processes) is given back: a user behind a TLS-intercepting proxy has
 * it too, and npm cannot reach the registry without it.
 */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^(npm_|NODE_|REDIS_URL$|BATON_|INIT_CWD$)/i.test(key)) env[key] = value;
  const machineCaCerts = inject('machineNodeCaCerts');
  return {
    ...env,
    ...(machineCaCerts ? { NODE_EXTRA_CA_CERTS: machineCaCerts } : {}),
    HOME: home,
    CODEX_HOME: path.join(home, '.codex'),
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    COPILOT_HOME: path.join(home, '.copilot'),
    PATH: `${path.join(prefix, 'bin')}:/usr/local/bin:/usr/bin:/bin`,
    ...extra,
  };
}

function npm(args: string[], cwd: string): CliRun {
  const started = performance.now();
  const run = spawnSync('npm', args, { cwd, env: { ...userEnv(), HOME: os.homedir() }, encoding: 'utf8', timeout: 180_000 });
  if (run.status !== 0) throw new Error(`npm ${args.join(' ')} failed (${run.status}):\n${run.stdout}\n${run.stderr}`);
  return { code: run.status, stdout: run.stdout, stderr: run.stderr, ms: performance.now() - started };
}

/** The processes of a process group: executable name and command line (Linux /proc). */
function processesInGroup(pgid: number): Array<{ exe: string; cmdline: string }> {
  const found: Array<{ exe: string; cmdline: string }> = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== pgid) continue;
      found.push({
        exe: path.basename(fs.readlinkSync(`/proc/${entry}/exe`)).replace(/\.exe$/, ''),
        cmdline: fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' '),
      });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

function sizeOf(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += sizeOf(full);
    else if (entry.isFile()) total += fs.statSync(full).size;
  }
  return total;
}

beforeAll(() => {
  if (!fs.existsSync(path.join(PROJECT_ROOT, 'dist', 'baton.mjs')))
    throw new Error('dist/ is not built: run npm run build (npm test does)');
  work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-package-')));
  prefix = path.join(work, 'prefix');
  home = path.join(work, 'home');
  fs.mkdirSync(home);
  // dist/ is what `npm test` just built; prepack would rebuild it.
  const packed = npm(['pack', '--ignore-scripts', '--json', '--pack-destination', work], PROJECT_ROOT);
  tarball = path.join(work, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename);
  // From the registry, as on a fresh machine: an npm cache of its own, empty (the one `npm ci` filled
  // would hide a registry npm cannot reach), and the machine's global npm settings (its CA file, proxy,
  // registry), which `--prefix` would otherwise replace with <prefix>/etc/npmrc.
  const globalConfig = npm(['config', 'get', 'globalconfig'], work).stdout.trim();
  const cache = path.join(work, 'npm-cache');
  npm(
    ['install', '--global', '--prefix', prefix, '--globalconfig', globalConfig, '--cache', cache, '--no-audit', '--no-fund', tarball],
    work,
  );
}, 240_000);

afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

const baton = (args: string[], cwd: string, extra: Record<string, string> = {}) =>
  runProcess('baton', args, { cwd, env: userEnv(extra), timeoutMs: 60_000 });

describe('the npm package', () => {
  it('installs with the CA bundle the suite was started with (NODE_EXTRA_CA_CERTS, handed back by the global setup)', () => {
    // The witness: the environment vitest's main process was started with, which the global setup
    // then changed. Each project's setup hands the same value down (test/support/machineCaCerts.ts).
    const started = startedWithCaCerts(process.ppid, (file) => fs.readFileSync(file));
    expect(started).not.toBeNull();
    expect(inject('machineNodeCaCerts')).toBe(started);
    expect(process.env.NODE_EXTRA_CA_CERTS).toBeUndefined();
    expect(fs.readdirSync(path.join(work, 'npm-cache')).length).toBeGreaterThan(0);
  });

  it('ships bin/, dist/, docs/, README.md and the license; no tests, fixtures or CI files', () => {
    const listing = spawnSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).stdout.trim().split('\n');
    const top = [...new Set(listing.map((entry) => entry.replace(/^package\//, '').split('/')[0]))].sort();
    expect(top).toEqual(['LICENSE', 'README.md', 'bin', 'dist', 'docs', 'package.json']);
    expect(listing).toEqual(
      expect.arrayContaining([
        'package/bin/baton',
        'package/bin/baton.mjs',
        'package/dist/baton.mjs',
        'package/dist/hook.mjs',
        'package/dist/task.mjs',
        'package/dist/task-engine.mjs',
        'package/docs/adopting.md',
      ]),
    );
    expect(listing.filter((entry) => /\.map$|(^|\/)(test|\.ci|fixtures)\//.test(entry))).toEqual([]);
    expect(fs.readFileSync(path.join(prefix, 'lib', 'node_modules', 'baton', 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
  });

  it(`installs with its production dependencies only, in at most ${MAX_INSTALLED_BYTES / 1024 / 1024} MB, and prints its version`, async () => {
    const installed = path.join(prefix, 'lib', 'node_modules', 'baton');
    const dependencies = Object.keys(
      (JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8')) as { dependencies: object }).dependencies,
    );
    expect(dependencies).toEqual(['@bull-board/ui']);
    expect(fs.existsSync(path.join(installed, 'node_modules', 'vitest'))).toBe(false);
    expect(sizeOf(prefix)).toBeLessThanOrEqual(MAX_INSTALLED_BYTES);
    const version = await baton(['--version'], work);
    expect(version.stdout).toBe(`baton ${VERSION}\n`);
  });

  it("sets up a project of the user's and takes itself out again: init, new, doctor, uninstall", async () => {
    const project = path.join(work, 'project');
    fs.mkdirSync(project);
    git(project, ['init', '-q']);
    writeUserClaudeSetup(project);
    fs.writeFileSync(path.join(project, 'README.md'), '# retry client\n');
    const before = projectFiles(project);

    const init = await baton(['init'], project);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).not.toContain('which is not on PATH here');
    // No file outside .git names the prefix or this machine's node.
    const nodePaths = [process.execPath, fs.realpathSync(process.execPath), prefix];
    for (const [file, text] of projectFiles(project))
      for (const needle of nodePaths) expect(text.includes(needle), `${file} names ${needle}`).toBe(false);
    // The user's hook and permission survive.
    const settings = JSON.parse(fs.readFileSync(path.join(project, '.claude', 'settings.json'), 'utf8'));
    const user = JSON.parse(USER_CLAUDE_SETTINGS);
    expect(settings.permissions.allow).toEqual([...user.permissions.allow, 'Bash(baton task *)']);
    expect(settings.hooks.Stop).toEqual(user.hooks.Stop);
    expect(settings.hooks.SubagentStop[0].hooks[0].command).toBe('baton hook claude-code');
    // Guidance with the Review Input format, for both clients.
    for (const skill of ['.claude/skills/review-analysis/SKILL.md', '.agents/skills/review-code/SKILL.md']) {
      const text = fs.readFileSync(path.join(project, skill), 'utf8');
      expect(text).toMatch(/^- \*\*Review Input\*\*: `<the (analysis|code) file you reviewed>`$/m);
      expect(text).toContain('## Review Summary');
    }

    const created = await baton(['new', 'Bound the retry budget'], project);
    expect(created.code, created.stderr).toBe(0);
    const taskId = /^created (TASK-\d{8}-\d{6}) \(short id 01\)/m.exec(created.stdout)?.[1];
    expect(taskId).toBeDefined();
    expect(fs.existsSync(path.join(project, '.agents', 'workspace', 'active', taskId!, 'task.md'))).toBe(true);
    expect(created.stdout).toContain('Run task 01 through its lifecycle.');

    const doctor = await baton(['doctor'], project, { REDIS_URL: inject('redisUrl'), BATON_PREFIX: uniquePrefix('package') });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(new RegExp(`^FAIL {2}worker {13}no worker serves ${project}`, 'm'));

    const uninstall = await baton(['uninstall'], project);
    expect(uninstall.code, uninstall.stderr).toBe(0);
    expect(projectFiles(project)).toEqual(before);
    expect(projectDirs(project)).toEqual(['.agents', '.claude']);
  }, 120_000);

  // Issue 26, "Shown by": the formatting corpus through the installed `baton`, byte for byte.
  JSON_CORPUS.forEach((_, index) => {
    const { settings, codexHooks, codexConfig, files } = corpusProject(index);
    it(`keeps the user's formatting through init → uninstall: settings: ${settings.name}; hooks.json: ${codexHooks.name}; config.toml: ${codexConfig.name}`, async () => {
      const project = path.join(work, `formatted-${index}`);
      fs.mkdirSync(project);
      git(project, ['init', '-q']);
      for (const [file, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
        fs.writeFileSync(path.join(project, file), text);
      }
      const before = projectFiles(project);
      const dirs = projectDirs(project);

      const init = await baton(['init'], project);
      expect(init.code, init.stderr).toBe(0);
      for (const [file, text] of Object.entries(files)) {
        const after = fs.readFileSync(path.join(project, file), 'utf8');
        // The user's own sandbox table gets network access turned on; every other file keeps every byte.
        if (file === '.codex/config.toml' && text.includes('[sandbox_workspace_write]')) continue;
        expect(after, file).not.toBe(text);
        expect(keptIn(text, after), `${file} keeps every byte of the user's`).toBe(true);
        if (file.endsWith('.json')) expect(userBytesChanged(text, after), file).toEqual([]);
      }
      const record = JSON.parse(fs.readFileSync(path.join(project, '.git', 'baton', 'init.json'), 'utf8')) as {
        files: { path: string; before: string | null }[];
      };
      for (const [file, text] of Object.entries(files))
        expect(record.files.find((recorded) => recorded.path === file)?.before, file).toBe(text);

      const uninstall = await baton(['uninstall'], project);
      expect(uninstall.code, uninstall.stderr).toBe(0);
      expect(projectFiles(project)).toEqual(before);
      expect(projectDirs(project)).toEqual(dirs);
    }, 60_000);
  });

  // Issue 26, "Shown by": the first hour with the installed package. A Redis of someone else's answers
  // on the default address (a private redis-server on a port this test owns, never 6379): `baton start`
  // runs its own and writes nothing there; a review naming the wrong Review Input is refused at
  // complete-stage; `baton doctor` warns on a development machine (exit 0) and fails with --strict.
  it('the first hour: start passes over a foreign Redis, a wrong Review Input is refused, doctor warns and --strict fails', async () => {
    const foreign = await startForeignRedis();
    const project = path.join(work, 'first-hour');
    fs.mkdirSync(project);
    git(project, ['init', '-q']);
    const env = { BATON_DEFAULT_REDIS_URL: foreign.url, ...HOOK_WAITS_FOR_RESULT };
    let service: ReturnType<typeof spawn> | null = null;
    let output = '';
    try {
      expect((await baton(['init'], project, env)).code).toBe(0);
      const created = await baton(['new', 'Bound the retry budget'], project, env);
      expect(created.code, created.stderr).toBe(0);
      const taskDir = path.join(project, '.agents', 'workspace', 'active', /^created (TASK-\d{8}-\d{6})/m.exec(created.stdout)![1]!);

      const started = spawn('baton', ['start', '--port', '0'], {
        cwd: project,
        env: userEnv(env),
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      service = started;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`baton start not ready within 60 s:\n${output}`)), 60_000);
        const collect = (chunk: Buffer) => {
          output += chunk.toString();
          if (/baton ready in \d+ ms/.test(output)) {
            clearTimeout(timer);
            resolve();
          }
        };
        started.stdout!.on('data', collect);
        started.stderr!.on('data', collect);
        started.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`baton start exited with ${code} before it was ready:\n${output}`));
        });
      });
      expect(output).toMatch(/^ {2}redis {6}unix:\/\/\S+ \(private redis-server, append-only data in /m);
      expect(output).toContain(
        `not using the Redis that answers on ${foreign.url} (nothing names it); to use it: baton start --redis ${foreign.url}`,
      );

      // One stage by hand, then its review naming task.md: refused, nothing written.
      const task = async (args: string[], input?: string) => {
        const run = await runProcess('baton', ['task', '01', ...args, '--timeout', '20000'], {
          cwd: project,
          env: userEnv(env),
          timeoutMs: 60_000,
          ...(input !== undefined ? { input } : {}),
        });
        return { ...run, json: jsonOf(run) };
      };
      const hook = async (phase: 'SubagentStart' | 'SubagentStop', role: string, childId: string) => {
        const run = await runProcess('baton', ['hook', 'claude-code'], {
          cwd: project,
          env: userEnv(env),
          timeoutMs: 60_000,
          input: nativePayload('claude-code', phase, role, childId, project),
        });
        expect(run.code, run.stderr).toBe(0);
      };
      const complete = (stage: string, artifact: string, content: string) =>
        task(['complete-stage', '--stage', stage, '--round', '1', '--artifact', artifact, '--agent', 'claude', '--content', '-'], content);
      expect((await task(['begin-or-resume'])).json.status).toBe('running');
      expect((await task(['prepare', '--client', 'claude-code'])).json.next).toMatchObject({ stage: 'analysis', round: 1 });
      await hook('SubagentStart', 'executor', 'child-a');
      expect((await complete('analysis', 'analysis.md', '# Analysis\n\nCap retries at 3.\n')).json.status).toBe('running');
      await hook('SubagentStop', 'executor', 'child-a');
      expect((await task(['advance'])).json.status).toBe('running');
      expect((await task(['prepare', '--client', 'claude-code'])).json.next).toMatchObject({ stage: 'review-analysis', round: 1 });
      await hook('SubagentStart', 'reviewer', 'child-r');
      const runFile = path.join(taskDir, 'orchestration.json');
      const before = fs.readFileSync(runFile, 'utf8');
      const refused = await complete(
        'review-analysis',
        'review-analysis.md',
        '# Review\n\n- **Review Input**: `task.md`\n\n## Review Summary\n\n- **Overall Verdict**: Approved\n' +
          '- **Findings (AI-actionable)**: 0 blockers, 0 majors, 0 minors / **Manual validation**: 0\n',
      );
      expect(refused.code, refused.stdout).toBe(1);
      expect(refused.json).toMatchObject({ status: 'failed', changed: false, error: { code: 'ORCHESTRATION_REVIEW_INPUT_MISMATCH' } });
      expect(refused.json.error.message).toContain('expected Review Input analysis.md (the latest artifact under review), given task.md');
      expect(fs.readFileSync(runFile, 'utf8')).toBe(before);
      expect(fs.existsSync(path.join(taskDir, 'review-analysis.md'))).toBe(false);

      // doctor: a worker serves, its Redis keeps its data; the clients do not trust the project yet.
      const doctor = await baton(['doctor'], project, env);
      expect(doctor.code, doctor.stdout).toBe(0);
      expect(doctor.stdout).toMatch(/^ok {4}worker {13}a worker serves this checkout/m);
      expect(doctor.stdout).toMatch(/^WARN {2}trust codex {8}/m);
      expect(doctor.stdout).not.toMatch(/^FAIL/m);
      expect(doctor.stdout).toMatch(
        /warning\(s\): fine on a development machine; on a shared box or in CI, 'baton doctor --strict' fails on them\n$/,
      );
      const strict = await baton(['doctor', '--strict'], project, env);
      expect(strict.code, strict.stdout).toBe(1);
      expect(strict.stdout).toMatch(/^FAIL {2}trust codex {8}/m);

      const stopped = new Promise((resolve) => started.once('exit', resolve));
      started.kill('SIGINT');
      expect(await stopped, output).toBe(0);
      expect(fs.existsSync(path.join(project, '.git', 'baton', 'redis', 'redis.sock'))).toBe(false);
      expect(await foreign.touches()).toEqual(UNTOUCHED);
    } finally {
      if (service && service.exitCode === null && service.signalCode === null) process.kill(-service.pid!, 'SIGKILL');
      await foreign.stop();
    }
  }, 120_000);

  // docs/adopting.md, "On Bun or Deno": the installed package's worker, as written there.
  const RUNTIME_LINES = /## On Bun or Deno[\s\S]*?```sh\n([\s\S]*?)```/
    .exec(fs.readFileSync(path.join(PROJECT_ROOT, 'docs', 'adopting.md'), 'utf8'))![1]!
    .trim()
    .split('\n');

  it.each(RUNTIME_LINES)(
    '%s serves the project from the installed package',
    async (line) => {
      const project = path.join(work, `runtime-${line.startsWith('bun') ? 'bun' : 'deno'}`);
      fs.mkdirSync(project);
      git(project, ['init', '-q']);
      // Bun and Deno are installed as the documents say (here: the pinned dev dependencies).
      const env = userEnv({
        REDIS_URL: inject('redisUrl'),
        BATON_PREFIX: uniquePrefix('runtime'),
        DENO_DIR,
        NO_COLOR: '1',
        npm_config_prefix: prefix,
      });
      env.PATH = `${path.join(prefix, 'bin')}:${path.join(PROJECT_ROOT, 'node_modules', '.bin')}:/usr/local/bin:/usr/bin:/bin`;
      const shell = spawn('sh', ['-c', line], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let output = '';
      try {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`'${line}' not ready within 60 s:\n${output}`)), 60_000);
          const collect = (chunk: Buffer) => {
            output += chunk.toString();
            if (output.includes(' ready: ')) {
              clearTimeout(timer);
              resolve();
            }
          };
          shell.stdout.on('data', collect);
          shell.stderr.on('data', collect);
          shell.once('exit', (code) => {
            clearTimeout(timer);
            reject(new Error(`'${line}' exited with ${code} before it was ready:\n${output}`));
          });
        });
        expect(output).toContain(` ready: ${project}`);
        // The runtime named on the line runs the installed package's bundle.
        const runtime = line.startsWith('bun') ? 'bun' : 'deno';
        const entry = path.join(prefix, 'lib', 'node_modules', 'baton', 'bin', 'baton.mjs');
        expect(
          processesInGroup(shell.pid!).some((proc) => proc.exe === runtime && proc.cmdline.includes(entry)),
          JSON.stringify(processesInGroup(shell.pid!)),
        ).toBe(true);
      } finally {
        const exited = new Promise((resolve) => shell.once('exit', resolve));
        if (shell.exitCode === null) process.kill(-shell.pid!, 'SIGKILL');
        await exited;
      }
    },
    90_000,
  );
});
