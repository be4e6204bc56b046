/** `snotra mcp-servers list|tools ID` as a real process against the hostile server and a missing program. */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN as SNOTRA } from '../support/snotra-process.ts';
import { hostileServer, mcpFixture } from './support.ts';

const SECRET = 'cli-secret-Hh4-mcp-servers';
const fx = mcpFixture(
  (project) => ({
    secrets: { backend: 'env' },
    tools: { 'mcp:h:lookup': { risk: 'read' } },
    mcp: {
      servers: {
        h: { ...hostileServer(project), tools: { exclude: ['huge'] } },
        gone: { command: join(project, 'no-such-server'), network: false },
      },
    },
  }),
  SECRET,
);
afterAll(() => fx.cleanup());

function snotra(...args: string[]) {
  const r = spawnSync(process.execPath, [SNOTRA, ...args, '--config', join(fx.dir, 'snotra.config.json')], {
    encoding: 'utf8',
    env: { ...process.env, SNOTRA_SECRET_HOSTILE_TOKEN: SECRET },
    timeout: 120_000,
    killSignal: 'SIGKILL',
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('snotra mcp-servers', () => {
  it('list shows each server’s status, listing problems and a failed start', () => {
    const r = snotra('mcp-servers', 'list');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^h: ready, server hostile, protocol 2025-\S+, 6 tools, sandbox bubblewrap$/m);
    expect(r.out).toContain('tool "bad:name" dropped: not a valid MCP tool name');
    expect(r.out).toMatch(/^gone: crashed, 0 tools, .*last error mcp_start_failed: /m);
    expect(r.out + r.err).not.toContain(SECRET);
    const json = snotra('mcp-servers', 'list', '--json');
    const lines = json.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; state: string });
    expect(lines.map((l) => [l.id, l.state])).toEqual([
      ['h', 'ready'],
      ['gone', 'crashed'],
    ]);
  }, 180_000);

  it('tools ID shows effective metadata and why; unknown ids and failed servers exit 1', () => {
    const r = snotra('mcp-servers', 'tools', 'h');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^ {2}mcp:h:lookup {2}read allow$/m);
    expect(r.out).toMatch(/^ {2}mcp:h:huge {2}not offered$/m);
    expect(r.out).toContain('excluded by mcp.servers.<id>.tools.exclude ("huge")');
    expect(r.out).toMatch(/^ {2}mcp:h:echo_env {2}external ask$/m);
    expect(r.out).toContain('readOnlyHint is ignored: a server cannot lower the risk');
    const json = JSON.parse(snotra('mcp-servers', 'tools', 'h', '--json').out) as {
      tools: { name: string; metadata: unknown; digest: string }[];
    };
    expect(json.tools.find((t) => t.name === 'mcp:h:target')?.metadata).toEqual({
      risk: 'external',
      approvalDefault: 'ask',
      source: 'mcp',
    });
    const unknown = snotra('mcp-servers', 'tools', 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('no MCP server "nope" under mcp.servers (configured: h, gone)');
    expect(snotra('mcp-servers', 'tools', 'gone').code).toBe(1);
    expect(snotra('mcp-servers', 'tools').code).toBe(2);
  }, 180_000);
});
