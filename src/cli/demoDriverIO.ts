import { spawn } from 'node:child_process';
import { applyEvent } from '../core/engine.ts';
import { READ_ONLY_INTENTS } from '../core/intents.ts';
import type { WorkspaceFingerprinter } from '../core/types.ts';
import { RepositoryQueueClient } from '../queue/client.ts';
import { envelopeFor } from '../queue/envelope.ts';
import { randomEventId } from '../queue/eventIds.ts';
import type { RepoIdentity } from '../queue/checkoutId.ts';
import type { QueueConfig } from '../queue/keys.ts';
import { parseTaskCommand } from './taskArgs.ts';
import { batonArgv } from '../base/batonPackage.ts';
import type { ClientId } from '../clients/registry.ts';
import type { DriverIO, JsonResult } from '../demo/driver.ts';

// `baton demo`'s DriverIO (the interface src/demo/driver.ts drives baton through): lifecycle
// intents go through the repository queue exactly as `baton task` sends them (one connection for the whole demo instead of one process per intent), and native
// hook events go through real `baton hook <client>` processes.

const noFingerprints: WorkspaceFingerprinter = {
  capture: () => Promise.reject(new Error('read-only intents do not capture fingerprints')),
  diff: () => Promise.reject(new Error('read-only intents do not capture fingerprints')),
};

export type QueueDriverIO = DriverIO & { close(): Promise<void> };

export async function queueDriverIO(options: {
  config: QueueConfig;
  repo: RepoIdentity;
  taskRef: string;
  client: ClientId;
  timeoutMs?: number;
}): Promise<QueueDriverIO> {
  const { config, repo } = options;
  const client = await RepositoryQueueClient.connect(config, repo, 2_000);
  const hookEnv = { ...process.env, REDIS_URL: config.redisUrl, BATON_PREFIX: config.prefix };
  const [command, ...prefixArgs] = batonArgv();
  return {
    async task(args) {
      const parsed = parseTaskCommand([options.taskRef, ...args]);
      if (parsed.kind !== 'ok') throw new Error(`demo: bad task arguments ${args.join(' ')}`);
      if (READ_ONLY_INTENTS.has(parsed.event.intent)) {
        return (await applyEvent(parsed.event, { repoRoot: repo.root, fingerprinter: noFingerprints })).result as JsonResult;
      }
      const eventId = randomEventId();
      await client.enqueue(envelopeFor(parsed.event, repo, 'cli', eventId));
      const outcome = await client.waitFor(eventId, options.timeoutMs ?? 30_000);
      if (outcome.kind === 'completed') return outcome.value as JsonResult;
      throw new Error(
        outcome.kind === 'failed' ? `job ${eventId} failed: ${outcome.reason}` : `no result for job ${eventId} within the timeout`,
      );
    },
    hook(payload) {
      return new Promise((resolve, reject) => {
        const child = spawn(command!, [...prefixArgs, 'hook', options.client], {
          cwd: repo.root,
          env: hookEnv,
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
        child.stdin.on('error', () => undefined);
        child.stdin.end(payload);
      });
    },
    close: () => client.close(),
  };
}
