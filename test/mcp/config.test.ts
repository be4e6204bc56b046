/** The `mcp.servers` part of the config: the tool filter, limits and environment checks. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../runtime/config/load.ts';
import { ConfigError } from '../../runtime/config/errors.ts';
import { registryFromConfig } from '../../runtime/config/adapters/tool-registry.ts';

function load(mcp: unknown, tools: unknown = {}) {
  return parseConfig(
    JSON.stringify({
      stateDir: '/tmp/snotra-mcp-config-state',
      workspace: { roots: [{ id: 'w', path: '/tmp', access: 'read' }] },
      mcp,
      tools,
    }),
    '/tmp/snotra.config.json',
    '/tmp',
  );
}

function problems(mcp: unknown): string[] {
  try {
    load(mcp);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
}

describe('mcp.servers config', () => {
  it('accepts the filter beside declared tools (the old shape stays valid), timeoutMs and network', () => {
    const loaded = load({
      servers: {
        s: {
          command: 'srv',
          tools: {
            include: ['read_*'],
            exclude: ['read_secret'],
            read_notes: { annotations: { destructiveHint: true } },
            write_x: {},
          },
          timeoutMs: 5000,
          network: false,
        },
      },
    });
    const def = loaded.config.mcp.servers.s;
    expect(def?.timeoutMs).toBe(5000);
    expect(def?.network).toBe(false);
    // Declared tools outside the filter are not registered.
    const names = registryFromConfig(loaded)
      .names()
      .filter((n) => n.startsWith('mcp:'));
    expect(names).toEqual(['mcp:s:read_notes']);
    expect(load({ servers: { s: { command: 'srv' } } }).config.mcp.servers.s?.network).toBe(true);
  });

  it('names the bad field: filter patterns, timeouts, refused variables', () => {
    expect(
      problems({ servers: { s: { command: 'srv', tools: { include: ['a*b'] } } } }).join('\n'),
    ).toContain('mcp.servers.s.tools.include[0]');
    expect(problems({ servers: { s: { command: 'srv', timeoutMs: 0 } } }).join('\n')).toContain(
      'mcp.servers.s.timeoutMs',
    );
    expect(problems({ servers: { s: { command: 'srv', env: { NODE_OPTIONS: '--require x' } } } })).toEqual([
      'mcp.servers.s.env.NODE_OPTIONS: this variable can make the server run injected code and is never passed',
    ]);
    expect(problems({ servers: { s: { command: 'srv', env: { GITHUB_TOKEN: 'ghp_literal' } } } })).toEqual([
      'mcp.servers.s.env.GITHUB_TOKEN: a credential-like variable must be a secret reference, e.g. { "secret": "s-token" }',
    ]);
    // Benign look-alikes pass: a secret reference, and names that only contain the words.
    expect(
      problems({
        servers: {
          s: {
            command: 'srv',
            env: { GITHUB_TOKEN: { secret: 'gh' }, TOKENIZER_MODE: 'fast', KEYBOARD: 'us' },
          },
        },
      }),
    ).toEqual([]);
  });
});
