import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { TASK_ID, readRun, uniquePrefix } from '../support/fixtures.ts';
import { gitRepoWithTask } from '../support/gitRepo.ts';
import type { GitRepo } from '../support/gitRepo.ts';
import { PROJECT_ROOT, batonEnv, jsonOf, runBaton } from '../support/processes.ts';

// The README's "Running the worker on Bun or Deno" commands, run exactly as written there (read from
// the README, so the two cannot drift): each line starts a worker that must apply a job, and the
// process that serves it must really be Bun or Deno.

const redisUrl = inject('redisUrl');
const DENO_DIR = process.env.DENO_DIR ?? path.join(os.tmpdir(), 'baton-deno-cache');
const SECTION = '### Running the worker on Bun or Deno';

function readmeWorkerCommands(readme: string): string[] {
  const at = readme.indexOf(SECTION);
  if (at < 0) throw new Error(`README.md has no '${SECTION}' section`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  if (!block) throw new Error(`README.md's '${SECTION}' has no sh block`);
  return block[1]!
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

const COMMANDS = readmeWorkerCommands(fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8'));

/** Executables of the processes in a process group (Linux /proc). */
function executablesInGroup(pgid: number): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the command name (which may hold spaces): state ppid pgrp …
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid) found.push(path.basename(fs.readlinkSync(`/proc/${entry}/exe`)).replace(/\.exe$/, ''));
    } catch {
      // the process ended meanwhile, or is not ours to read
    }
  }
  return found;
}

let repo: GitRepo | null = null;
let shell: ChildProcess | null = null;

afterEach(async () => {
  if (shell?.pid !== undefined && shell.exitCode === null && shell.signalCode === null) {
    const exited = new Promise((resolve) => shell!.once('exit', resolve));
    process.kill(-shell.pid, 'SIGKILL'); // the group this test started: sh, npm and the runtime
    await exited;
  }
  shell = null;
  repo?.cleanup();
  repo = null;
});

describe('README: the worker on Bun and Deno', () => {
  it('lists the npm scripts and the raw commands for both runtimes', () => {
    expect(COMMANDS).toEqual([
      'npm run worker:bun -- --repo "$REPO"',
      'npm run worker:deno -- --repo "$REPO"',
      'bun bin/baton.mjs worker --repo "$REPO"',
      'deno run -A bin/baton.mjs worker --repo "$REPO"',
    ]);
    const scripts = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')).scripts;
    expect(scripts['worker:bun']).toBe('bun bin/baton.mjs worker');
    expect(scripts['worker:deno']).toBe('deno run -A bin/baton.mjs worker');
    expect(COMMANDS.join('\n')).not.toContain('--node-modules-dir');
  });

  it.each(COMMANDS)(
    '%s serves the repository queue',
    async (command) => {
      const runtime = command.includes('deno') ? 'deno' : 'bun';
      repo = gitRepoWithTask();
      const env = batonEnv(
        { redisUrl, prefix: uniquePrefix(runtime) },
        // As the README says: the raw commands need bun and deno on PATH.
        {
          REPO: repo.root,
          DENO_DIR,
          NO_COLOR: '1',
          PATH: `${path.join(PROJECT_ROOT, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH ?? ''}`,
        },
      );
      shell = spawn('sh', ['-c', command], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let output = '';
      const collect = (chunk: Buffer) => (output += chunk.toString());
      shell.stdout!.on('data', collect);
      shell.stderr!.on('data', collect);
      const started = shell;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`'${command}' not ready within 60 s:\n${output}`)), 60_000);
        started.stdout!.on('data', () => {
          if (output.includes(' ready: ')) {
            clearTimeout(timer);
            resolve();
          }
        });
        started.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`'${command}' exited with ${code} before it was ready:\n${output}`));
        });
      });
      expect(output).toContain(` ready: ${repo.root}`);
      expect(executablesInGroup(started.pid!)).toContain(runtime);

      // A state-changing intent goes through the queue: only the worker above can apply it.
      const run = await runBaton(['task', TASK_ID, 'begin-or-resume'], { cwd: repo.root, env, timeoutMs: 30_000 });
      expect(run.code, `${run.stdout}${run.stderr}`).toBe(0);
      expect(jsonOf(run)).toMatchObject({ status: 'running', changed: true, taskId: TASK_ID });
      expect(readRun(repo.taskDir)).toMatchObject({ status: 'running', stepCount: 0 });
    },
    90_000,
  );
});
