import { describe, expect, it } from 'vitest';
import { runBaton } from '../support/processes.ts';

// The help texts of the built `baton`, every command's: one style (commander's
// layout, hand-written ones included), a default said once as "(default: …)", the token advice for
// shared machines, "did you mean" for a mistyped command, and --client vs --agent explained.

/** The commands `baton --help` lists: the first word of each line under "Commands:". */
async function commands(): Promise<string[]> {
  const help = await runBaton(['--help']);
  expect(help.code).toBe(0);
  const section = help.stdout.split('\nCommands:\n')[1]!.split('\n\n')[0]!;
  return section
    .split('\n')
    .filter((line) => /^ {2}\S/.test(line))
    .map((line) => line.trim().split(/\s/)[0]!);
}

describe('help texts', () => {
  it('every command: "Usage: baton <command>", one "(default: …)" per option, the same help option', async () => {
    const names = await commands();
    expect(names).toEqual(
      expect.arrayContaining(['task', 'hook', 'worker', 'fingerprint', 'start', 'dashboard', 'runs', 'install-hooks', 'demo']),
    );
    for (const name of names) {
      const help = await runBaton([name, '--help']);
      expect(help.code, `${name}: ${help.stderr}`).toBe(0);
      const text = help.stdout;
      expect(text.startsWith(`Usage: baton ${name}`), name).toBe(true);
      expect(text, name).toMatch(/\n {2}-h, --help +display help for command\n/);
      const flat = text.replace(/\s+/g, ' ');
      // A default is said once, commander's way ("(default: …)", or "(choices: …, default: …)"):
      // never "(default: …) (default: …)", never "(default 3000".
      expect(flat, name).not.toMatch(/\(default[^)]*\) \(default/);
      expect(
        [...flat.matchAll(/.{0,12}default.{0,3}/gi)].map((match) => match[0]).filter((at) => !/(\(|, )default: /.test(at)),
        name,
      ).toEqual([]);
      expect(flat, name).not.toContain('(default: [])');
    }
    const main = await runBaton(['--help']);
    expect(main.stdout.startsWith('Usage: baton <command> [options]\n')).toBe(true);
  }, 60_000);

  it('the dashboard commands say to prefer BATON_DASHBOARD_TOKEN over --token on a shared machine', async () => {
    for (const name of ['worker', 'start', 'dashboard']) {
      const flat = (await runBaton([name, '--help'])).stdout.replace(/\s+/g, ' ');
      expect(flat, name).toContain(
        '--token <secret> dashboard token; on a shared machine set $BATON_DASHBOARD_TOKEN instead (a --token value shows in the process list)',
      );
    }
  });

  it('baton task --help tells --client from --agent', async () => {
    const help = (await runBaton(['task', '--help'])).stdout;
    expect(help).toContain('--client and --agent name different things:');
    expect(help).toContain(
      '  --client C  the agent client the lifecycle runs in, as baton hook and install-hooks name it: claude-code, codex or copilot-cli',
    );
    expect(help).toContain(
      '  --agent A   the name a subagent gives when it completes its stage: claude for claude-code, codex for codex, copilot for copilot-cli',
    );
  });

  it("a mistyped command: commander's suggestion, exit 2", async () => {
    const run = await runBaton(['wroker']);
    expect(run.code).toBe(2);
    expect(run.stderr.split('\n')[0]).toBe("baton: unknown command 'wroker' (did you mean worker?)");
    expect((await runBaton(['instal-hooks'])).stderr.split('\n')[0]).toBe(
      "baton: unknown command 'instal-hooks' (did you mean install-hooks?)",
    );
    expect((await runBaton(['frobnicate'])).stderr.split('\n')[0]).toBe("baton: unknown command 'frobnicate'");
  });

  it('baton runs --status <unknown> is a usage error naming the statuses', async () => {
    const run = await runBaton(['runs', '--status', 'stuck']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      "error: option '--status <status>' argument 'stuck' is invalid. Allowed choices are running, paused, completed, corrupt.\n",
    );
  });
});
