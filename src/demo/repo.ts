import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
// Static: this module is itself loaded lazily (`baton demo`), and a lazy import of the CommonJS
// package would have only a `default` export in the bundle (scripts/build.mjs refuses it).
import * as git from 'isomorphic-git';
import { activeTaskDir, shortIdRegistryPath, taskFilePath, WORKSPACE_PATH } from '../core/taskLayout.ts';

// The demo's repository: a real git repository made with node:fs and isomorphic-git (baton never
// runs git), one commit, `.agents/workspace/` ignored, and one active task with short id 01.

export const DEMO_TASK_ID = 'TASK-20260101-000001';

export type DemoRepository = Readonly<{ root: string; taskId: string; taskDir: string; remove(): void }>;

const FILES: Record<string, string> = {
  '.gitignore': `${WORKSPACE_PATH}/\nnode_modules/\n`,
  'README.md': '# baton demo\n\nA throwaway repository for `baton demo`.\n',
  'src/retry.ts': 'export const retries = Infinity;\n',
};

const TASK_MD = `---
id: ${DEMO_TASK_ID}
title: Bound the retry budget
current_step: requirement-analysis
---

# Bound the retry budget

\`src/retry.ts\` retries forever; give it a budget of 3.
`;

export async function createDemoRepository(parent: string = os.tmpdir()): Promise<DemoRepository> {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(parent, 'baton-demo-')));
  await git.init({ fs, dir: root, defaultBranch: 'main' });
  for (const [file, content] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), content);
    await git.add({ fs, dir: root, filepath: file });
  }
  await git.commit({ fs, dir: root, message: 'initial', author: { name: 'baton demo', email: 'demo@baton.invalid' } });
  const taskDir = activeTaskDir(root, DEMO_TASK_ID);
  fs.mkdirSync(taskDir, { recursive: true });
  fs.writeFileSync(taskFilePath(taskDir), TASK_MD);
  fs.writeFileSync(shortIdRegistryPath(root), `${JSON.stringify({ version: 1, ids: { '01': DEMO_TASK_ID } }, null, 2)}\n`);
  return { root, taskId: DEMO_TASK_ID, taskDir, remove: () => fs.rmSync(root, { recursive: true, force: true }) };
}
