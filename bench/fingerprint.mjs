#!/usr/bin/env node
// Fingerprint benchmark: baton's capture against the git procedure it replaces, side by side in one
// run, on generated repositories of 2,000 and 20,000 files (issue 29: --sizes 20000,100000).
//
//   npm run build && node bench/fingerprint.mjs [--sizes 2000,20000] [--reps 7] [--keep] [--baton bin/baton.mjs]
//                                                [--before DIR [--before-label TEXT]]
//
// For each size it generates a repository in a temp dir (nested directories, a committed and packed
// HEAD with most files, some modified/deleted/untracked files, an ignored node_modules/ and the
// force-included, ignored .agents/workspace/active) and measures, interleaved, repetition by
// repetition:
//   git   — wall time of GIT_INDEX_FILE=<temp> git read-tree HEAD && git add -A -- :/ &&
//           git add -f -- .agents/workspace/active && git write-tree (4 processes)
//   cold  — a fresh process: node bin/baton.mjs fingerprint --repo <repo>
//   warm  — capture() again in one long-lived process with one fingerprinter instance, after a small
//           edit (one file rewritten)
//   before — with --before DIR (a directory holding bin/ and dist/ of another build, e.g. a checkout
//           of an earlier commit after `npm ci && npm run build`): its cold run, for a before/after
//           comparison measured in the same run, named by --before-label (default: DIR's git commit,
//           else its name)
// and reports medians and ratios to git. Every baton result is checked against git's tree id. The
// builds are measured from snapshots of bin/ + dist/ (bench/lib.mjs), so a concurrent
// `npm run build` cannot change them halfway; the load average is recorded before and after.
// Results: bench/results/fingerprint.json and bench/results/fingerprint.md.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import { cleanup, snapshotBuild } from './lib.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
// --baton <bin/baton.mjs>: another build of the CLI (default: this checkout's bin/baton.mjs).
const BATON_SOURCE = path.resolve(opt('--baton', path.join(ROOT, 'bin', 'baton.mjs')));
const BEFORE_SOURCE = opt('--before', null);
/** How the results name the before build: --before-label, else the commit of DIR, else its name. */
function beforeLabel() {
  if (opt('--before-label', null)) return opt('--before-label', null);
  try {
    return `commit ${execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: BEFORE_SOURCE, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()}`;
  } catch {
    return path.basename(path.resolve(BEFORE_SOURCE));
  }
}
const SIZES = opt('--sizes', '2000,20000').split(',').map(Number);
const REPS = Number(opt('--reps', '7'));
const KEEP = args.includes('--keep');

for (const bin of [BATON_SOURCE, ...(BEFORE_SOURCE ? [path.join(path.resolve(BEFORE_SOURCE), 'bin', 'baton.mjs')] : [])]) {
  if (!fs.existsSync(path.join(path.dirname(bin), '..', 'dist', 'baton.mjs'))) {
    console.error(`${path.join(path.dirname(bin), '..', 'dist', 'baton.mjs')} missing: run \`npm run build\` first`);
    process.exit(2);
  }
}
/** bin/ + dist/ of a build copied aside (bench/lib.mjs), so a concurrent `npm run build` cannot change it. */
const snapshotOf = (buildDir) => {
  const saved = process.env.BATON_BENCH_BUILD;
  process.env.BATON_BENCH_BUILD = buildDir;
  try {
    return snapshotBuild();
  } finally {
    if (saved === undefined) delete process.env.BATON_BENCH_BUILD;
    else process.env.BATON_BENCH_BUILD = saved;
  }
};
const BATON_BUILD = snapshotOf(path.resolve(path.dirname(BATON_SOURCE), '..'));
const BATON = BATON_BUILD.bin;
const BEFORE_BUILD = BEFORE_SOURCE ? snapshotOf(path.resolve(BEFORE_SOURCE)) : null;
const loadAtStart = os.loadavg().map((x) => Number(x.toFixed(2)));

const HOME = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-bench-home-'));
const GIT_ENV = {
  ...process.env,
  HOME,
  XDG_CONFIG_HOME: path.join(HOME, '.config'),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'bench@example.com',
};
delete GIT_ENV.GIT_INDEX_FILE;
const git = (cwd, argv, env = {}) =>
  execFileSync('git', argv, { cwd, env: { ...GIT_ENV, ...env }, encoding: 'utf8', maxBuffer: 1 << 26 }).trim();

/** Deterministic pseudo-random numbers, so every run generates the same repository. */
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function generate(n) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `baton-bench-${n}-`)));
  const rand = rng(n);
  git(root, ['init', '-q', '-b', 'main']);
  const files = [];
  // About 10 files per directory, three levels deep: src/pkgP/modM/partD.
  const pkgs = Math.max(1, Math.round(n / 800));
  for (let i = 0; i < n; i++) {
    const d = Math.floor(i / 10);
    const dir = `src/pkg${d % pkgs}/mod${Math.floor(d / pkgs) % 8}/part${Math.floor(d / (pkgs * 8))}`;
    const rel = `${dir}/file${i}.${['ts', 'md', 'json', 'txt'][i % 4]}`;
    files.push(rel);
    const abs = path.join(root, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    const lines = 1 + Math.floor(rand() * 60);
    fs.writeFileSync(abs, `// file ${i}\n${'export const value = "lorem ipsum dolor sit amet";\n'.repeat(lines)}`);
    if (i % 97 === 0) fs.chmodSync(abs, 0o755);
  }
  fs.writeFileSync(path.join(root, '.gitignore'), 'node_modules/\n*.log\n.agents/workspace/\ndist/\n');
  fs.writeFileSync(path.join(root, 'README.md'), '# bench\n');
  // Commit 95% of the files; pack them as a cloned repository would be.
  git(root, ['-c', 'gc.auto=0', 'add', '-A']);
  const untrackedLater = files.filter((_, i) => i % 20 === 7);
  git(root, ['rm', '-q', '--cached', '--', ...untrackedLater]);
  git(root, ['-c', 'gc.auto=0', 'commit', '-q', '-m', 'initial']);
  git(root, ['gc', '-q']);
  // Work in progress: modified, deleted, untracked, ignored, the task workspace.
  files.forEach((rel, i) => {
    if (i % 100 === 3) fs.appendFileSync(path.join(root, rel), '// modified\n');
    if (i % 200 === 5) fs.rmSync(path.join(root, rel));
  });
  const extra = Math.max(50, Math.floor(n / 40));
  for (let i = 0; i < extra; i++) {
    const abs = path.join(root, `node_modules/dep${i % 10}/lib/f${i}.js`);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, `module.exports = ${i};\n`);
  }
  for (let i = 0; i < 20; i++) {
    const abs = path.join(root, `.agents/workspace/active/TASK-${i % 4}/note${i}.md`);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, `note ${i}\n`);
  }
  fs.writeFileSync(path.join(root, 'debug.log'), 'ignored\n');
  return root;
}

function gitProcedure(root) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-bench-index-'));
  const env = { GIT_INDEX_FILE: path.join(dir, 'index') };
  const t0 = performance.now();
  git(root, ['read-tree', 'HEAD'], env);
  git(root, ['add', '-A', '--', ':/'], env);
  if (fs.existsSync(path.join(root, '.agents/workspace/active'))) {
    git(root, ['add', '-f', '--', '.agents/workspace/active'], env);
  }
  const tree = git(root, ['write-tree'], env);
  const ms = performance.now() - t0;
  fs.rmSync(dir, { recursive: true, force: true });
  return { tree, ms };
}

/** The runtime starting and exiting with nothing to do, in the same environment: the floor of any cold run. */
function emptyStart() {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['-e', '0'], { env: GIT_ENV });
  if (r.status !== 0) throw new Error('node -e 0 failed');
  return performance.now() - t0;
}

function batonCold(root, bin = BATON) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [bin, 'fingerprint', '--repo', root], { encoding: 'utf8', env: GIT_ENV });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`baton fingerprint failed: ${r.stderr}`);
  return { tree: r.stdout.trim(), ms };
}

/** The fingerprint module, bundled from src exactly as the build bundles it, for in-process use. */
async function loadFingerprinter() {
  const { build } = await import('esbuild');
  const out = path.join(ROOT, 'bench', '.work', 'fingerprint.mjs');
  await build({
    entryPoints: [path.join(ROOT, 'src/fingerprint/index.ts')],
    outfile: out,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    banner: { js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" },
  });
  return import(pathToFileURL(out).href);
}

// A full garbage collection before reading the heap, for the warm instance's memory per file.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const heapUsed = () => {
  gc();
  return process.memoryUsage().heapUsed;
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function benchSize(n, fpModule) {
  process.stderr.write(`generating ${n}-file repository…\n`);
  const root = generate(n);
  const tracked = git(root, ['ls-files']).split('\n').length;
  const heapBefore = heapUsed();
  const fingerprinter = fpModule.createFingerprinter();
  // Warm-up of the long-lived instance (its first capture is a cold one, not measured as warm).
  const first = await fingerprinter.capture(root);
  const gitTimes = [];
  const coldTimes = [];
  const warmTimes = [];
  const beforeTimes = [];
  const startTimes = [];
  const loads = [];
  const edited = path.join(root, 'src/pkg0/mod0/part0/file1.md');
  for (let rep = 0; rep < REPS; rep++) {
    // A small edit, then each contender on the same work tree.
    fs.appendFileSync(edited, `// edit ${rep}\n`);
    const g = gitProcedure(root);
    // With a before build, the two cold runs take turns going first.
    const b0 = BEFORE_BUILD && rep % 2 === 1 ? batonCold(root, BEFORE_BUILD.bin) : null;
    const c = batonCold(root);
    const b = BEFORE_BUILD ? (b0 ?? batonCold(root, BEFORE_BUILD.bin)) : null;
    const t0 = performance.now();
    const w = await fingerprinter.capture(root);
    const wMs = performance.now() - t0;
    if (c.tree !== g.tree || w !== g.tree || (b && b.tree !== g.tree)) {
      throw new Error(`mismatch at ${n} files, rep ${rep}: git ${g.tree}, cold ${c.tree}, warm ${w}${b ? `, before ${b.tree}` : ''}`);
    }
    gitTimes.push(g.ms);
    coldTimes.push(c.ms);
    warmTimes.push(wMs);
    if (b) beforeTimes.push(b.ms);
    startTimes.push(emptyStart());
    loads.push(os.loadavg()[0]);
    process.stderr.write(
      `  rep ${rep + 1}/${REPS}: git ${g.ms.toFixed(0)} ms, cold ${c.ms.toFixed(0)} ms, warm ${wMs.toFixed(0)} ms${b ? `, before ${b.ms.toFixed(0)} ms` : ''}\n`,
    );
  }
  // What the long-lived instance keeps (stat data, listings, trees, HEAD trees, pack indexes).
  const retainedBytes = heapUsed() - heapBefore;
  const g = gitProcedure(root);
  if (first === g.tree) throw new Error('the edits did not change the fingerprint');
  const result = {
    files: n,
    trackedFiles: tracked,
    fingerprint: g.tree,
    reps: REPS,
    gitMs: median(gitTimes),
    coldMs: median(coldTimes),
    warmMs: median(warmTimes),
    emptyStartMs: median(startTimes),
    warmRetainedBytes: retainedBytes,
    warmRetainedBytesPerFile: Math.round(retainedBytes / n),
    samples: {
      git: gitTimes,
      cold: coldTimes,
      warm: warmTimes,
      ...(BEFORE_BUILD ? { before: beforeTimes } : {}),
      emptyStart: startTimes,
      loadAverage1m: loads,
    },
  };
  result.coldRatio = result.coldMs / result.gitMs;
  result.warmRatio = result.warmMs / result.gitMs;
  // Paired: each repetition's ratio (git and baton ran back to back), then the median. Less sensitive
  // to load from other processes drifting during the run.
  result.pairedColdRatio = median(coldTimes.map((c, i) => c / gitTimes[i]));
  result.pairedWarmRatio = median(warmTimes.map((w, i) => w / gitTimes[i]));
  result.medianLoadAverage1m = Number(median(loads).toFixed(2));
  if (BEFORE_BUILD) {
    result.beforeColdMs = median(beforeTimes);
    result.beforeColdRatio = result.beforeColdMs / result.gitMs;
    result.pairedBeforeColdRatio = median(beforeTimes.map((c, i) => c / gitTimes[i]));
  }
  if (!KEEP) fs.rmSync(root, { recursive: true, force: true });
  else result.repo = root;
  return result;
}

const fpModule = await loadFingerprinter();
const results = [];
for (const n of SIZES) results.push(await benchSize(n, fpModule));

const cpus = os.cpus();
const machine = {
  loadAverageAtStart: loadAtStart,
  cpu: cpus[0]?.model ?? 'unknown',
  cores: cpus.length,
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  os: `${os.type()} ${os.release()}`,
  node: process.version,
  git: execFileSync('git', ['--version'], { encoding: 'utf8' }).trim(),
  loadAverage: os.loadavg().map((x) => Number(x.toFixed(2))),
};
// The command as run, with the before build's directory (outside this checkout) written as DIR.
const shownArgs = args.map((a, i) => (args[i - 1] === '--before' ? 'DIR' : /[\s'"]/.test(a) ? `'${a.replace(/'/g, "'\\''")}'` : a));
const command = `npm run build && node bench/fingerprint.mjs${shownArgs.length ? ` ${shownArgs.join(' ')}` : ''}`;
const builds = {
  measured: BATON_BUILD.bundleHash,
  ...(BEFORE_BUILD ? { before: BEFORE_BUILD.bundleHash, beforeLabel: beforeLabel() } : {}),
};
const report = {
  date: new Date().toISOString(),
  command,
  machine,
  builds,
  goals: { cold20000: 1.0, cold100000: 0.5, warm: 0.3 },
  results,
};

const outDir = path.join(ROOT, 'bench', 'results');
fs.mkdirSync(outDir, { recursive: true });
fs.writeFileSync(path.join(outDir, 'fingerprint.json'), `${JSON.stringify(report, null, 2)}\n`);
const fmt = (x) => x.toFixed(0);
const md = [
  '# Fingerprint benchmark',
  '',
  `Reproduce: \`${command}\``,
  '',
  `Date: ${report.date} · CPU: ${machine.cpu} × ${machine.cores} · ${machine.memoryGiB} GiB · ${machine.os} · Node ${machine.node} · ${machine.git} · load average (1, 5, 15 min) at the start: ${machine.loadAverageAtStart.join(' ')}, at the end: ${machine.loadAverage.join(' ')}; median 1-minute load during the repetitions: ${results.map((r) => `${r.medianLoadAverage1m} (${r.files} files)`).join(', ')}`,
  '',
  `Builds (hash of dist/*.mjs): measured ${builds.measured}${builds.before ? `, before ${builds.before}` : ''}.`,
  '',
  'Medians of interleaved repetitions, wall time in ms. git = the 4-command git procedure on a temporary',
  'index; cold = a fresh `node bin/baton.mjs fingerprint` process (start-up included); warm = `capture()`',
  'again in one process with one fingerprinter instance, after a one-file edit. Every result was checked',
  "against git's tree id. Goals (issue 29): cold ≤ 1.0× git at 20,000 files and ≤ 0.5× at 100,000; warm ≤ 0.3×.",
  '',
  '| files | tracked | git (ms) | baton cold (ms) | baton warm (ms) | cold / git | warm / git | paired cold / git | paired warm / git |',
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...results.map(
    (r) =>
      `| ${r.files} | ${r.trackedFiles} | ${fmt(r.gitMs)} | ${fmt(r.coldMs)} | ${fmt(r.warmMs)} | ${r.coldRatio.toFixed(2)}× | ${r.warmRatio.toFixed(2)}× | ${r.pairedColdRatio.toFixed(2)}× | ${r.pairedWarmRatio.toFixed(2)}× |`,
  ),
  '',
  ...(BEFORE_BUILD
    ? [
        `Before (${builds.beforeLabel}, \`--before DIR\`), cold, measured in the same repetitions:`,
        '',
        '| files | git (ms) | before cold (ms) | after cold (ms) | before cold / git | after cold / git | paired before / git | paired after / git |',
        '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
        ...results.map(
          (r) =>
            `| ${r.files} | ${fmt(r.gitMs)} | ${fmt(r.beforeColdMs)} | ${fmt(r.coldMs)} | ${r.beforeColdRatio.toFixed(2)}× | ${r.coldRatio.toFixed(2)}× | ${r.pairedBeforeColdRatio.toFixed(2)}× | ${r.pairedColdRatio.toFixed(2)}× |`,
        ),
        '',
      ]
    : []),
  '"cold / git" divides the medians; "paired" is the median of the per-repetition ratios (git and baton',
  'measured back to back), less sensitive to other load on the machine drifting during the run.',
  '',
  `Memory: what the long-lived (warm) instance keeps after its captures, heap after a full GC: ${results.map((r) => `${(r.warmRetainedBytes / 2 ** 20).toFixed(1)} MiB, ${r.warmRetainedBytesPerFile} bytes per file (${r.files} files)`).join('; ')}.`,
  '',
  `Of a cold run, the runtime's own start (\`node -e 0\` in the same environment, median) takes ${results.map((r) => `${fmt(r.emptyStartMs)} ms (${r.files} files)`).join(', ')}${process.env.NODE_EXTRA_CA_CERTS ? '; NODE_EXTRA_CA_CERTS is set here, so every Node process parses that CA bundle before running any code' : ''}.`,
  '',
  'Repository shape: `src/pkgP/modM/partD/fileN.*`, ~10 files per directory (1–60 lines each, every 97th executable), 95% of them',
  'committed and packed (`git gc`), 1% modified, 0.5% deleted, 5% untracked, an ignored `node_modules/`',
  '(n/40 files), an ignored `debug.log`, and 20 files in the ignored, force-included',
  '`.agents/workspace/active`.',
  '',
].join('\n');
fs.writeFileSync(path.join(outDir, 'fingerprint.md'), md);
process.stdout.write(md);
fs.rmSync(HOME, { recursive: true, force: true });
await cleanup();
