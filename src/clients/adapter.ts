import type { ClientFacts } from './facts.ts';
import type { ClientHook } from './hook.ts';
import type { ClientHeadless } from './headless.ts';
import type { ClientInstall } from './installer.ts';

// The adapter interface: what baton knows about one agent client, so that each client lives in one
// folder, src/clients/<id>/, and the rest of baton reads it from the registry (registry.ts). One
// object per client, in parts by who reads them:
//
//   facts (top level)  id, display name, 0.9.2's capability levels,     the lifecycle rules (core),
//                      the agent names its subagents report, the vendor  every help text
//                      of its models when none is reported (facts.ts)
//   hook               its subagent-spawning tools, its output format   `baton hook` (hooks/)
//                      (hook.ts)
//   install            the hooks it registers, its instructions file,   the installer (src/install/):
//                      settings and profile files, skills, options,      init, install-hooks,
//                      and a lazily loaded installer (installer.ts)      uninstall, doctor
//   demo               the fields its SubagentStart/Stop payloads carry  the demo driver
//                      besides the common ones
//   headless           how to start it headless as a reviewer            `baton task … review`
//                      (headless.ts); absent: it cannot review for       (src/cli/headlessReview.ts)
//                      another client
//
// An adapter is data and pure functions and imports nothing else of baton: core reads the registry
// for the lifecycle facts, and `baton hook` loads it on every event, so it must stay light. Whatever
// needs files or parsers (trust files, TOML) sits in the installer module of the client's folder,
// which `install.installer()` imports lazily.

export type ClientDemo = Readonly<{ payloadFields: Readonly<Record<string, unknown>> }>;

export type ClientAdapter<Id extends string = string> = ClientFacts<Id> &
  Readonly<{ hook: ClientHook; install: ClientInstall; demo: ClientDemo; headless?: ClientHeadless }>;
