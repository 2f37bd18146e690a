import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ACTIVE_TASKS_PATH,
  activeTaskDir,
  archiveDayDirs,
  configPath,
  isActiveRunFilePath,
  shortIdRegistryPath,
  taskFilePath,
  workspaceDir,
} from '../../src/core/taskLayout.ts';
import { resolveTaskRef, shortIdsByTask } from '../../src/core/taskRef.ts';

// The `.agents/workspace` layout, defined once in src/core/taskLayout.ts: the paths it names, the
// archive walk that both task resolution and the run listing use, and the one short-id registry reader.

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

function repo(): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'baton-layout-')));
  roots.push(root);
  return root;
}

function task(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(taskFilePath(dir), `---\nid: ${path.basename(dir)}\n---\n`);
}

describe('the task layout', () => {
  it('names the agent-infra paths', () => {
    const root = '/r';
    expect(ACTIVE_TASKS_PATH).toBe('.agents/workspace/active');
    expect(workspaceDir(root)).toBe('/r/.agents/workspace');
    expect(activeTaskDir(root, 'TASK-20260101-000001')).toBe('/r/.agents/workspace/active/TASK-20260101-000001');
    expect(taskFilePath('/r/x')).toBe('/r/x/task.md');
    expect(shortIdRegistryPath(root)).toBe('/r/.agents/workspace/active/.short-ids.json');
    expect(configPath(root)).toBe('/r/.agents/.airc.json');
  });

  it('recognises the run file of an active task, and nothing else', () => {
    expect(isActiveRunFilePath('.agents/workspace/active/TASK-20260101-000001/orchestration.json')).toBe(true);
    for (const other of [
      '.agents/workspace/active/orchestration.json',
      '.agents/workspace/active//orchestration.json',
      '.agents/workspace/active/T/sub/orchestration.json',
      '.agents/workspace/active/T/orchestration.json.tmp',
      '.agents/workspace/blocked/T/orchestration.json',
      'x/.agents/workspace/active/T/orchestration.json',
      '.agents/workspace/active/T/task.md',
    ]) {
      expect(isActiveRunFilePath(other), other).toBe(false);
    }
  });

  it('walks the archive newest first for lookup', () => {
    const root = repo();
    const archive = path.join(workspaceDir(root), 'archive');
    task(path.join(archive, '2025', '12', '31', 'TASK-20251201-000001'));
    task(path.join(archive, '2026', '01', '02', 'TASK-20260101-000002'));
    task(path.join(archive, '2026', '01', '10', 'TASK-20260101-000003'));
    fs.mkdirSync(path.join(archive, 'notes')); // not a date: never walked
    task(activeTaskDir(root, 'TASK-20260201-000004'));
    task(path.join(workspaceDir(root), 'blocked', 'TASK-20260201-000005'));

    expect(archiveDayDirs(root).map((dir) => path.relative(archive, dir))).toEqual(['2026/01/10', '2026/01/02', '2025/12/31']);
    const resolved = resolveTaskRef('TASK-20260101-000002', { repoRoot: root });
    expect(resolved).toMatchObject({ ok: true, state: 'archive', taskDir: path.join(archive, '2026', '01', '02', 'TASK-20260101-000002') });
  });

  it('reads the short-id registry once for resolution and for listings', () => {
    const root = repo();
    task(activeTaskDir(root, 'TASK-20260101-000001'));
    expect(shortIdsByTask(root)).toEqual(new Map()); // no registry
    fs.writeFileSync(shortIdRegistryPath(root), JSON.stringify({ version: 1, ids: { '07': 'TASK-20260101-000001' } }));
    expect(shortIdsByTask(root)).toEqual(new Map([['TASK-20260101-000001', '07']]));
    expect(resolveTaskRef('#7', { repoRoot: root })).toMatchObject({ ok: true, taskId: 'TASK-20260101-000001' });
    // A registry that resolution refuses gives a listing no short ids either.
    fs.writeFileSync(
      shortIdRegistryPath(root),
      JSON.stringify({ version: 1, ids: { '07': 'TASK-20260101-000001', '08': 'TASK-20260101-000001' } }),
    );
    expect(shortIdsByTask(root)).toEqual(new Map());
    expect(resolveTaskRef('#7', { repoRoot: root })).toMatchObject({ ok: false, code: 'SHORT_ID_REGISTRY_DUPLICATE_TASK' });
  });
});
