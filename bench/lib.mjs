// Shared pieces of the benchmarks: a private redis-server per benchmark (unix socket in a temp dir,
// never a fixed port), a snapshot of the built CLI (so a concurrent `npm run build` cannot change
// the code under measurement halfway), temp repositories, timing, statistics, machine info and the
// result files (bench/results/<name>.md + .json).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const RESULTS_DIR = path.join(PROJECT_ROOT, 'bench', 'results');
export const BUN = path.join(PROJECT_ROOT, 'node_modules', '.bin', 'bun');
export const TASK_ID = 'TASK-20260101-000001';

const cleanups = [];
/** Registers work to do when the benchmark ends (also on SIGINT/SIGTERM and uncaught errors). */
export function onCleanup(fn) {
  cleanups.push(fn);
}
export async function cleanup() {
  while (cleanups.length > 0) {
    try {
      await cleanups.pop()();
    } catch {
      // best effort
    }
  }
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    void cleanup().finally(() => process.exit(130));
  });
}

export function tempDir(label, base = os.tmpdir()) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(base, `baton-bench-${label}-`)));
  onCleanup(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// ---------------------------------------------------------------------------------------------
// Redis

/** A private redis-server on a unix socket (the launcher of src/redisServer, as the tests and `baton start` use). */
export async function startRedis({ appendonly = false } = {}) {
  const { findRedisServer, launchRedisServer } = await importSource('src/redisServer/launch.ts');
  const binary = findRedisServer();
  if (!binary) throw new Error('the benchmarks need redis-server on PATH: run `bash scripts/setup.sh`');
  const server = await launchRedisServer({ dir: tempDir('redis'), binary, appendonly });
  onCleanup(() => server.stop());
  const version = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout.trim();
  return { url: server.url, socket: server.socket, dir: server.dir, pid: server.child.pid, version };
}

export function redisClient(socket) {
  const client = new Redis({ path: socket, maxRetriesPerRequest: null });
  onCleanup(() => client.disconnect());
  return client;
}

// ---------------------------------------------------------------------------------------------
// The code under measurement

/**
 * Copies bin/ and dist/ to a temp dir: the bundle is self-contained, and a copy cannot be rebuilt
 * under our feet by someone running `npm run build` in the same checkout.
 */
export function snapshotBuild(from) {
  // BATON_BENCH_BUILD=DIR (or `from`) measures another build (a DIR holding bin/ and dist/), e.g. for A/B runs.
  const source = from ?? (process.env.BATON_BENCH_BUILD ? path.resolve(process.env.BATON_BENCH_BUILD) : PROJECT_ROOT);
  const dist = path.join(source, 'dist', 'baton.mjs');
  if (!fs.existsSync(dist)) throw new Error(`${dist} is missing: run \`npm run build\` first`);
  const dir = tempDir('build');
  fs.cpSync(path.join(source, 'bin'), path.join(dir, 'bin'), { recursive: true });
  fs.cpSync(path.join(source, 'dist'), path.join(dir, 'dist'), { recursive: true });
  const hash = createHash('sha256');
  for (const name of fs.readdirSync(path.join(dir, 'dist'), { recursive: true }).map(String).sort()) {
    const file = path.join(dir, 'dist', name);
    if (fs.statSync(file).isFile() && name.endsWith('.mjs')) hash.update(name).update(fs.readFileSync(file));
  }
  return { bin: path.join(dir, 'bin', 'baton.mjs'), dir, bundleHash: hash.digest('hex').slice(0, 12) };
}

export function gitCommit() {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: PROJECT_ROOT, encoding: 'utf8' }).trim();
    const dirty =
      execFileSync('git', ['status', '--porcelain', '--', 'src', 'scripts'], { cwd: PROJECT_ROOT, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head}+uncommitted` : head;
  } catch {
    return 'unknown';
  }
}

// ---------------------------------------------------------------------------------------------
// Repositories

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'baton-bench',
  GIT_AUTHOR_EMAIL: 'bench@baton.invalid',
  GIT_COMMITTER_NAME: 'baton-bench',
  GIT_COMMITTER_EMAIL: 'bench@baton.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

export function taskMd(taskId = TASK_ID) {
  return `---\nid: ${taskId}\ncurrent_step: requirement-analysis\n---\n\n# Task\n`;
}

/**
 * A repository with one active task. `git: true` makes a real committed git repository (needed
 * when an event captures a fingerprint); otherwise a bare `.git` directory is enough for baton.
 */
export function makeRepo({ label = 'repo', git = false, taskId = TASK_ID, parent } = {}) {
  const root = parent ? fs.mkdtempSync(path.join(parent, `${label}-`)) : tempDir(label);
  if (git) {
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: root, env: { ...process.env, ...GIT_ENV } });
    fs.writeFileSync(path.join(root, '.gitignore'), '.agents/workspace/\n');
    fs.mkdirSync(path.join(root, 'src'));
    for (let index = 0; index < 20; index += 1) fs.writeFileSync(path.join(root, 'src', `file${index}.ts`), `export const n = ${index};\n`);
    fs.writeFileSync(path.join(root, 'README.md'), '# bench\n');
    execFileSync('git', ['add', '-A'], { cwd: root, env: { ...process.env, ...GIT_ENV } });
    execFileSync('git', ['commit', '-q', '-m', 'initial'], { cwd: root, env: { ...process.env, ...GIT_ENV } });
  } else {
    fs.mkdirSync(path.join(root, '.git'));
  }
  const taskDir = path.join(root, '.agents', 'workspace', 'active', taskId);
  fs.mkdirSync(taskDir, { recursive: true });
  fs.writeFileSync(path.join(taskDir, 'task.md'), taskMd(taskId));
  return {
    root: fs.realpathSync(root),
    taskDir: fs.realpathSync(taskDir),
    runFile: path.join(fs.realpathSync(taskDir), 'orchestration.json'),
  };
}

/** A running orchestration.json (what begin-or-resume writes), for benchmarks that skip it. */
export function runningRun(taskId = TASK_ID, maxSteps = 1_000_000) {
  const now = new Date().toISOString();
  return {
    schemaVersion: 1,
    taskId,
    runId: `bench-${taskId}`,
    status: 'running',
    nextStage: null,
    stepCount: 0,
    maxSteps,
    baseline: '',
    pendingDelegation: null,
    receipts: [],
    pause: null,
    commitAuthorization: { issuedAt: null, consumedAt: null },
    createdAt: now,
    updatedAt: now,
  };
}

export function writeRun(file, run) {
  fs.writeFileSync(file, `${JSON.stringify(run, null, 2)}\n`);
}

// ---------------------------------------------------------------------------------------------
// Processes and timing

/** Runs a command to its exit; `ms` is spawn → exit wall time. */
export function timedRun(command, args, { input = '', env = process.env, cwd, timeoutMs = 30_000 } = {}) {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const started = process.hrtime.bigint();
    const child = spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let ms = 0;
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', () => {
      ms = Number(process.hrtime.bigint() - started) / 1e6;
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms });
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/** Starts `baton worker` and waits for its ready line. */
export async function startWorker(bin, args, { env, command = process.execPath, commandArgs = [], readyTimeoutMs = 60_000 } = {}) {
  const child = spawn(command, [...commandArgs, bin, 'worker', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const stop = async (signal = 'SIGTERM') => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    child.kill(signal);
    return exited;
  };
  onCleanup(() => stop('SIGKILL'));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker not ready within ${readyTimeoutMs} ms:\n${output}`)), readyTimeoutMs);
    child.stdout.on('data', () => {
      if (output.includes(' ready:')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited (${code}) before it was ready:\n${output}`));
    });
  });
  return { child, output: () => output, stop };
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------------------------------------
// Statistics and reporting

export function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
}

export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, value) => sum + value, 0) / Math.max(1, sorted.length);
  return {
    n: sorted.length,
    min: round(sorted[0]),
    p50: round(quantile(sorted, 0.5)),
    mean: round(mean),
    p90: round(quantile(sorted, 0.9)),
    p99: round(quantile(sorted, 0.99)),
    max: round(sorted.at(-1)),
  };
}

export function round(value, digits = 2) {
  if (value === undefined || value === null || Number.isNaN(value)) return null;
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function machineInfo() {
  const cpus = os.cpus();
  const bun = spawnSync(BUN, ['--version'], { encoding: 'utf8' });
  return {
    date: new Date().toISOString(),
    host: os.hostname(),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    cpuModel: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryGiB: round(os.totalmem() / 2 ** 30, 1),
    loadAverage: os.loadavg().map((value) => round(value)),
    node: process.version,
    bun: bun.status === 0 ? bun.stdout.trim() : 'unavailable',
    commit: gitCommit(),
  };
}

export function machineMarkdown(info, extra = {}) {
  const rows = { ...info, ...extra };
  return [
    '| machine | |',
    '|---|---|',
    ...Object.entries(rows).map(([key, value]) => `| ${key} | ${Array.isArray(value) ? value.join(', ') : value} |`),
  ].join('\n');
}

export function table(headers, rows) {
  return [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join(
    '\n',
  );
}

export function writeResults(name, json, markdown) {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  fs.writeFileSync(path.join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(json, null, 2)}\n`);
  fs.writeFileSync(path.join(RESULTS_DIR, `${name}.md`), `${markdown.trimEnd()}\n`);
  process.stdout.write(`wrote bench/results/${name}.md and .json\n`);
}

/** Small command-line flags: --name value or --name=value; numbers are converted. */
export function flags(argv = process.argv.slice(2)) {
  const result = {};
  for (let index = 0; index < argv.length; index += 1) {
    const token = argv[index];
    if (!token.startsWith('--')) continue;
    const [name, inline] = token.slice(2).split('=', 2);
    const value = inline ?? (argv[index + 1] && !argv[index + 1].startsWith('--') ? argv[(index += 1)] : 'true');
    result[name] = /^\d+(\.\d+)?$/.test(value) ? Number(value) : value;
  }
  return result;
}

export async function main(fn) {
  try {
    await fn();
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  } finally {
    await cleanup();
  }
}

/**
 * Imports a TypeScript module of src/ (through tsx) for the in-process parts of a benchmark: the
 * queue client or envelope helpers, exactly as the CLI uses them.
 */
export async function importSource(relative) {
  const { tsImport } = await import('tsx/esm/api');
  return tsImport(path.join(PROJECT_ROOT, relative), import.meta.url);
}
