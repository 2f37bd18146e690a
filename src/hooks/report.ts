import type { ClientHook } from '../clients/hook.ts';

// What a hook says, collected while it runs and written once it is done (docs/hooks.md "Output
// contract"): stdout is the client's hook-output channel, so it stays empty, or carries the notices
// in the client's format when the event was recorded (exit 0); everything goes to stderr too.

export type HookRun = { exitCode: number; stdout: string; stderr: string };

export class HookReport {
  #stderr = '';
  readonly #notices: string[] = [];

  /** Text for stderr only (errors, refusals, the verbose result). */
  say(text: string): void {
    this.#stderr += text;
  }

  /** Something the user should know although the event was recorded (spooled, queued). */
  notice(message: string): void {
    this.#notices.push(message.trim());
  }

  /** The run: stderr, then the notices on stderr and, on exit 0, once on stdout as the client shows them. */
  finish(exitCode: number, client?: ClientHook): HookRun {
    if (this.#notices.length === 0) return { exitCode, stdout: '', stderr: this.#stderr };
    const text = this.#notices.join('\n');
    return { exitCode, stdout: exitCode === 0 && client ? client.notice(text) : '', stderr: `${this.#stderr}${text}\n` };
  }
}
