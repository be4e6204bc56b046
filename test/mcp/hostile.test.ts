/**
 * A hostile MCP server (test/fixtures/mcp-hostile.mjs) through the real runtime, the OS sandbox
 * and the scripted model: lying annotations, huge results, a secret echoed back, a tool renamed
 * or its schema changed between the decision and the call, a crash mid-call, a repeated cursor.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  eventually,
  filesUnder,
  hostileLog,
  hostileServer,
  mcpFixture,
  ready,
  runOnce,
  script,
  type McpFixture,
} from './support.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

const SECRET = 'hs-Zq81-secret-value-3141';
let fx: McpFixture | null = null;
afterEach(() => fx?.cleanup());

function setup(
  agentMode: 'ask' | 'allow',
  extra: Record<string, unknown> = {},
  mode = '',
  tools: Record<string, unknown> = {},
): McpFixture {
  fx = mcpFixture(
    (project) => ({
      agents: { a: { mode: agentMode } },
      mcp: { servers: { h: hostileServer(project, extra, mode) } },
      tools,
    }),
    SECRET,
  );
  return fx;
}

const control = (f: McpFixture, cmd: string): void =>
  appendFileSync(join(f.project, '.hostile/control'), `${cmd}\n`);

describe('a hostile MCP server', () => {
  it('its tools are listed over pages, invalid ones dropped and reported; lying annotations loosen nothing', async () => {
    const f = setup('allow');
    const rt = await f.start({ a: script([{ tool: 'mcp:h:lookup', args: { q: 'x' } }]) });
    try {
      await ready(rt, 'h');
      const status = runtimeInternals(rt).mcp?.status()[0];
      expect(status?.listingProblems).toEqual([
        'tool "bad:name" dropped: not a valid MCP tool name',
        'tool "deep" dropped: its inputSchema is nested deeper than 24 levels',
      ]);
      // Three pages of three tools: the cursors were followed.
      expect(hostileLog(f.project).filter((l) => l.startsWith('list'))).toEqual([
        'list ',
        'list p3',
        'list p6',
      ]);
      const lookup = runtimeInternals(rt)
        .mcp?.tools('h')
        ?.find((t) => t.tool === 'lookup');
      expect(lookup?.metadata).toEqual({ risk: 'external', approvalDefault: 'ask', source: 'mcp' });
      expect(lookup?.why).toContain('readOnlyHint is ignored: a server cannot lower the risk');
      // In allow mode, "readOnlyHint: true, destructiveHint: false" still needs a human.
      const { outcome, seen, approvals } = await runOnce(rt, 'a');
      expect(outcome.status).toBe('completed');
      expect(approvals.map((a) => [a.tool, a.risk, a.reason])).toEqual([
        ['mcp:h:lookup', 'external', 'tool_default_ask'],
      ]);
      expect(seen[0]).toMatchObject({ kind: 'tool.result' });
      expect(JSON.stringify(seen[0])).toContain('looked up x');
    } finally {
      await rt.stop();
    }
  }, 120_000);

  it('a repeated page cursor stops the listing; endless pages are cut at the bound', async () => {
    for (const [mode, problem] of [
      ['repeat-cursor', 'the server repeated a page cursor: the listing stopped there'],
      ['endless-pages', 'the listing was cut after 32 pages'],
    ] as const) {
      const f = setup('ask', {}, mode);
      const rt = await f.start({ a: [] });
      try {
        await ready(rt, 'h');
        expect(runtimeInternals(rt).mcp?.status()[0]?.listingProblems).toContain(problem);
        expect(hostileLog(f.project).filter((l) => l.startsWith('list')).length).toBeLessThanOrEqual(32);
      } finally {
        await rt.stop();
        f.cleanup();
      }
    }
  }, 120_000);

  it('a list_changed that arrives while the first listing is read is not lost: the catalog is read again', async () => {
    const f = setup('ask', {}, 'change-after-list');
    const rt = await f.start({ a: [] });
    try {
      await ready(rt, 'h');
      // The server renamed "target" right after its first listing and said so at once.
      await eventually(
        () => runtimeInternals(rt).registry.get('mcp:h:target_v2') !== undefined,
        30_000,
        'the change announced during start applied',
      );
      expect(runtimeInternals(rt).registry.get('mcp:h:target')).toBeUndefined();
      expect(
        runtimeInternals(rt)
          .mcp?.tools('h')
          ?.map((t) => t.tool),
      ).toContain('target_v2');
      expect(hostileLog(f.project).filter((l) => l === 'list ').length).toBeGreaterThanOrEqual(2);
    } finally {
      await rt.stop();
    }
  }, 120_000);

  it('a secret given to the server and echoed back reaches neither the model, the state dir nor the logs', async () => {
    const f = setup('ask');
    const rt = await f.start({
      a: script([
        { tool: 'mcp:h:echo_env', args: {} },
        { tool: 'mcp:h:error_result', args: {} },
        { tool: 'mcp:h:crash', args: {} },
      ]),
    });
    try {
      await ready(rt, 'h');
      const { outcome, seen } = await runOnce(rt, 'a');
      expect(outcome.status).toBe('completed');
      // The server really had it (it echoed it back): the value reached the server's environment.
      const echoed = JSON.stringify(seen[0]);
      expect(echoed).toContain('the token is');
      expect(echoed).not.toContain(SECRET);
      expect(echoed).toContain('[REDACTED]');
      expect(seen[1]).toMatchObject({ kind: 'tool.failed' });
      expect(JSON.stringify(seen[1])).toContain('mcp_tool_error');
      expect(seen[2]).toMatchObject({ kind: 'tool.failed' });
      expect(JSON.stringify(seen[2])).toContain('mcp_server_crashed');
      // Its outcome is unknown: not run again, neither on the restarted server nor by the model's run.
      expect(hostileLog(f.project).filter((l) => l.startsWith('call crash'))).toHaveLength(1);
      // The crash report names the server's last words, redacted.
      await eventually(
        () => runtimeInternals(rt).mcp?.status()[0]?.lastError?.message.includes('fatal: token'),
        30_000,
        'crash report',
      );
      expect(runtimeInternals(rt).mcp?.status()[0]?.lastError?.message).not.toContain(SECRET);
      expect(JSON.stringify(seen)).not.toContain(SECRET);
    } finally {
      await rt.stop();
    }
    for (const file of filesUnder(f.stateDir)) {
      expect(readFileSync(file).includes(Buffer.from(SECRET)), file).toBe(false);
    }
    expect(f.logs.join('')).not.toContain(SECRET);
    expect(f.logs.join('')).toContain('MCP server stopped');
  }, 120_000);

  it('a tool or server name that carries the secret is dropped or redacted, never offered', async () => {
    const f = setup('ask', {}, 'secret-name');
    const rt = await f.start({ a: [] });
    try {
      await ready(rt, 'h');
      const status = runtimeInternals(rt).mcp?.status()[0];
      expect(status?.listingProblems).toContain(
        '1 tool(s) dropped: the name contains a secret or looks like a credential',
      );
      expect(
        runtimeInternals(rt)
          .registry.names()
          .filter((n) => n.includes('leak')),
      ).toEqual([]);
      expect(
        runtimeInternals(rt)
          .mcp?.tools('h')
          ?.map((t) => t.tool),
      ).not.toContain(`leak-${SECRET}`);
      // The benign look-alike: the other tools are still offered.
      expect(runtimeInternals(rt).registry.get('mcp:h:lookup')).toBeDefined();
      expect(status?.serverName).toBe('hostile [REDACTED]');
      expect(JSON.stringify(runtimeInternals(rt).mcp?.status())).not.toContain(SECRET);
    } finally {
      await rt.stop();
    }
    for (const file of filesUnder(f.stateDir)) {
      expect(readFileSync(file).includes(Buffer.from(SECRET)), file).toBe(false);
    }
    expect(f.logs.join('')).not.toContain(SECRET);
  }, 120_000);

  it('a crash report cut to its last 1000 characters keeps no piece of a secret cut in two', async () => {
    const f = setup('ask', {}, 'stderr-cut');
    const rt = await f.start({ a: script([{ tool: 'mcp:h:crash', args: {} }]) });
    try {
      await ready(rt, 'h');
      await runOnce(rt, 'a');
      const message = await eventually(
        () =>
          runtimeInternals(rt).mcp?.status()[0]?.lastError?.message.includes('yyyy') &&
          runtimeInternals(rt).mcp?.status()[0]?.lastError?.message,
        30_000,
        'crash report',
      );
      expect(message).not.toContain(SECRET.slice(-12));
      expect(message).toContain('[REDACTED]');
    } finally {
      await rt.stop();
    }
    expect(f.logs.join('')).not.toContain(SECRET.slice(-12));
  }, 120_000);

  it('a protocol error cut to 1000 characters keeps no piece of a secret cut in two', async () => {
    const f = setup('ask', {}, 'error-cut');
    const rt = await f.start({ a: script([{ tool: 'mcp:h:error_result', args: {} }]) });
    try {
      await ready(rt, 'h');
      const { seen } = await runOnce(rt, 'a');
      const text = JSON.stringify(seen[0]);
      expect(text).toContain('mcp_protocol_error');
      expect(text).toContain('eeee');
      expect(text).not.toContain(SECRET.slice(0, 10));
    } finally {
      await rt.stop();
    }
    for (const file of filesUnder(f.stateDir)) {
      expect(readFileSync(file).includes(Buffer.from(SECRET.slice(0, 10))), file).toBe(false);
    }
  }, 120_000);

  it('a huge result is capped before the model and the ledger see it', async () => {
    const f = setup('ask');
    const rt = await f.start({ a: script([{ tool: 'mcp:h:huge', args: {} }]) });
    try {
      await ready(rt, 'h');
      const { seen, runId } = await runOnce(rt, 'a');
      expect(seen[0]).toMatchObject({ kind: 'tool.result' });
      // 2 MiB from the server: bounded by the client (256 KiB), then by the observation cap,
      // which keeps a slice that fills nearly all of it (not an empty string with a marker).
      const content = (seen[0] as { content: string }).content;
      expect(Buffer.byteLength(content)).toBeLessThanOrEqual(64 * 1024);
      expect(content).toContain('truncated');
      expect(content.match(/x/g)?.length ?? 0).toBeGreaterThan(0.9 * 64 * 1024);
      const row = runtimeInternals(rt).store.ledger.lookup(`call:${runId}:c1`);
      expect(row?.status).toBe('completed');
      expect(Buffer.byteLength((row?.result as { content: string }).content)).toBeLessThanOrEqual(64 * 1024);
    } finally {
      await rt.stop();
    }
  }, 120_000);

  it('arguments that fail the tool schema are denied by the policy before anything runs', async () => {
    const f = setup('allow');
    const rt = await f.start({ a: script([{ tool: 'mcp:h:target', args: { note: 5 } }]) });
    try {
      await ready(rt, 'h');
      const { seen, approvals } = await runOnce(rt, 'a');
      expect(approvals).toEqual([]);
      expect(seen[0]).toMatchObject({ kind: 'tool.denied', reason: 'invalid_arguments' });
      expect(hostileLog(f.project).some((l) => l.startsWith('call'))).toBe(false);
    } finally {
      await rt.stop();
    }
  }, 120_000);

  for (const [cmd, code] of [
    ['rename', 'mcp_tool_not_listed'],
    ['schema', 'mcp_tool_changed'],
  ] as const) {
    it(`a tool ${cmd === 'rename' ? 'renamed' : 'whose schema changed'} between the approval and the call is refused (${code})`, async () => {
      const f = setup('ask');
      const rt = await f.start({ a: script([{ tool: 'mcp:h:target', args: { note: 'n' } }]) });
      try {
        await ready(rt, 'h');
        const before = runtimeInternals(rt).registry.get('mcp:h:target');
        const { seen, approvals } = await runOnce(rt, 'a', async () => {
          // While the human looks at the request, the server changes the tool under it.
          control(f, cmd);
          await eventually(
            () => {
              const now = runtimeInternals(rt).registry.get('mcp:h:target');
              return cmd === 'rename'
                ? now === undefined && runtimeInternals(rt).registry.get('mcp:h:target_v2')
                : now !== before && now;
            },
            30_000,
            'list_changed applied',
          );
          return 'approved';
        });
        expect(approvals).toHaveLength(1);
        expect(seen[0]).toMatchObject({ kind: 'tool.failed' });
        expect(JSON.stringify(seen[0])).toContain(code);
        expect(hostileLog(f.project).some((l) => l.startsWith('call target'))).toBe(false);
      } finally {
        await rt.stop();
      }
    }, 120_000);
  }

  it('a runtime stopped while an MCP call runs sends notifications/cancelled before it ends the server', async () => {
    // Vetted as a read by the user (the server says it destroys nothing): it runs without a human.
    const f = setup('ask', {}, '', { 'mcp:h:slow': { risk: 'read' } });
    const rt = await f.start({ a: script([{ tool: 'mcp:h:slow', args: {} }]) });
    try {
      await ready(rt, 'h');
      await rt.runs.runTask('a', 'task-stop', 'go');
      await eventually(
        () => hostileLog(f.project).some((l) => l.startsWith('call slow')),
        60_000,
        'call sent',
      );
    } finally {
      await rt.stop();
    }
    // The server logged the cancellation it received before its stdin closed.
    expect(hostileLog(f.project).filter((l) => l.startsWith('cancelled'))).toHaveLength(1);
    expect(hostileLog(f.project).filter((l) => l.startsWith('call slow'))).toHaveLength(1);
  }, 120_000);

  it('a call past timeoutMs is cancelled with notifications/cancelled', async () => {
    const f = setup('ask', { timeoutMs: 1500 });
    const rt = await f.start({ a: script([{ tool: 'mcp:h:slow', args: {} }]) });
    try {
      await ready(rt, 'h');
      const { seen } = await runOnce(rt, 'a');
      expect(JSON.stringify(seen[0])).toContain('mcp_call_timeout');
      await eventually(
        () => hostileLog(f.project).some((l) => l.startsWith('cancelled')),
        20_000,
        'cancel received',
      );
    } finally {
      await rt.stop();
    }
  }, 120_000);
});
