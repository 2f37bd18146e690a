import { describe, expect, it } from 'vitest';
import { copilotPayload } from '../../src/clients/copilot-cli/index.ts';
import { CopilotConfigError, copilotConfigFile, copilotFolderTrusted, withCopilotTrust } from '../../src/clients/copilot-cli/install.ts';
import { newJsonText, patchJson } from '../../src/install/jsonText.ts';

// Copilot CLI's adapter without the client: its payload names, and the folder trust in its own
// config file (the real 1.0.102 runs are in test/agents; docs/wiring.md "Copilot CLI trust").

const patch = (text: string | null, value: unknown) => (text === null || text.trim() === '' ? newJsonText(value) : patchJson(text, value));

// As Copilot 1.0.102 writes the file: a comment line first, then its own keys.
const WRITTEN_BY_COPILOT = `// User settings belong in settings.json.
// This file is managed automatically.
{
  "trustedFolders": [
    "/home/me/other"
  ],
  "firstLaunchAt": "2026-03-11T00:00:00.000Z"
}
`;

describe('Copilot CLI folder trust ($COPILOT_HOME/config.json)', () => {
  it('adds the folder to trustedFolders, keeping every other byte, and a second run changes nothing', () => {
    const trusted = withCopilotTrust(WRITTEN_BY_COPILOT, '/home/me/project', 'config.json', patch);
    expect(trusted).toBe(WRITTEN_BY_COPILOT.replace('"/home/me/other"\n', '"/home/me/other",\n    "/home/me/project"\n'));
    expect(copilotFolderTrusted(trusted, '/home/me/project', 'config.json')).toBe(true);
    expect(copilotFolderTrusted(WRITTEN_BY_COPILOT, '/home/me/project', 'config.json')).toBe(false);
    expect(withCopilotTrust(trusted, '/home/me/project', 'config.json', patch)).toBe(trusted);
  });

  it('creates the file when there is none, and refuses one it cannot read safely', () => {
    expect(JSON.parse(withCopilotTrust(null, '/p', 'config.json', patch))).toEqual({ trustedFolders: ['/p'] });
    expect(() => withCopilotTrust('{"trustedFolders": "/p"}', '/p', 'config.json', patch)).toThrow(CopilotConfigError);
    expect(() => withCopilotTrust('{"trustedFolders": [', '/p', 'config.json', patch)).toThrow(/config\.json is not valid JSON/);
  });

  it('lives in $COPILOT_HOME, else ~/.copilot', () => {
    expect(copilotConfigFile({ COPILOT_HOME: '/c', HOME: '/h' })).toBe('/c/config.json');
    expect(copilotConfigFile({ HOME: '/h' })).toBe('/h/.copilot/config.json');
  });
});

describe("Copilot CLI's payloads in baton's names", () => {
  it('maps the camelCase fields, parses a toolArgs string, and keeps a name baton already has', () => {
    expect(
      copilotPayload({
        sessionId: 's',
        agentId: 'a',
        agentName: 'agent-infra-lifecycle-executor',
        agentType: 'agent-infra-lifecycle-executor',
        parentAgentId: 'p',
        cwd: '/r',
      }),
    ).toMatchObject({
      session_id: 's',
      agent_id: 'a',
      agent_name: 'agent-infra-lifecycle-executor',
      agent_type: 'agent-infra-lifecycle-executor',
      parent_id: 'p',
      cwd: '/r',
    });
    expect(copilotPayload({ toolName: 'task', toolArgs: '{"agent_type":"x","name":"n"}' })).toMatchObject({
      tool_name: 'task',
      tool_input: { agent_type: 'x', name: 'n' },
    });
    expect(copilotPayload({ agentId: 'camel', agent_id: 'snake' }).agent_id).toBe('snake');
  });
});
