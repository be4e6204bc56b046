/**
 * The reference MCP servers from npm (SDK v1, the 2025 protocol revisions) through the real
 * runtime with the v2 client: `@modelcontextprotocol/server-filesystem` behind our roots and
 * approvals, `@modelcontextprotocol/server-everything` for structured output, annotations and a
 * long-running call cut by the timeout (the server is sent `notifications/cancelled` for exactly that
 * request, seen on its stdin, and goes on answering).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { McpHost } from '../../actors/mcp/index.ts';
import { mcpServerSpecs } from '../../runtime/mcp/host.ts';
import { createPolicyEnvironment } from '../../runtime/policy/environment.ts';
import { registryFromConfig } from '../../runtime/config/adapters/tool-registry.ts';
import { ProcessSupervisor } from '../../runtime/processes/index.ts';
import { createSecretResolver } from '../../runtime/secrets/index.ts';
import { MemorySecretStore } from '../../runtime/secrets/memory.ts';
import { Redactor } from '../../store/index.ts';
import { BIN, mcpFixture, ready, runOnce, script } from './support.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

const SECRET = 'unused-secret-value-for-ref-servers';

describe('@modelcontextprotocol/server-filesystem', () => {
  const fx = mcpFixture((project) => {
    const outside = join(project, '..', 'outside');
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, 'private.txt'), 'outside-content');
    writeFileSync(join(project, 'a.txt'), 'inside-content');
    return {
      agents: { a: { mode: 'ask' } },
      mcp: {
        servers: {
          // The server itself may use both folders; our roots hold only the project.
          fs: { command: join(BIN, 'mcp-server-filesystem'), args: [project, outside], network: false },
        },
      },
      tools: {
        'mcp:fs:read_text_file': { risk: 'read', pathArguments: ['path'] },
        'mcp:fs:write_file': { risk: 'write-local', pathArguments: ['path'] },
      },
    };
  }, SECRET);
  afterAll(() => fx.cleanup());

  it('reads only where our roots allow; a write to its own allowed dir still needs our approval in ask', async () => {
    const outside = join(fx.project, '..', 'outside');
    const rt = await fx.start({
      a: script([
        { tool: 'mcp:fs:read_text_file', args: { path: join(fx.project, 'a.txt') } },
        { tool: 'mcp:fs:read_text_file', args: { path: join(outside, 'private.txt') } },
        { tool: 'mcp:fs:read_text_file', args: { path: 'a.txt' } },
        { tool: 'mcp:fs:write_file', args: { path: join(fx.project, 'c.txt'), content: 'approved' } },
        { tool: 'mcp:fs:write_file', args: { path: join(fx.project, 'b.txt'), content: 'written' } },
      ]),
    });
    try {
      await ready(rt, 'fs');
      expect(runtimeInternals(rt).mcp?.status()[0]?.protocolVersion).toMatch(/^2025-/);
      const { outcome, seen, approvals } = await runOnce(rt, 'a', async (a) =>
        String(a.args && (a.args as { path?: string }).path).endsWith('b.txt') ? 'denied' : 'approved',
      );
      // The human denied the last write: the run ends there (a denial is never retried).
      expect(outcome.status).toBe('denied');
      // Inside the root: a vetted read runs without a human.
      expect(seen[0]).toMatchObject({ kind: 'tool.result' });
      expect(JSON.stringify(seen[0])).toContain('inside-content');
      // The server would read it (its own allowed dir); our roots do not hold it.
      expect(seen[1]).toMatchObject({ kind: 'tool.denied', reason: 'outside_roots' });
      expect(JSON.stringify(seen)).not.toContain('outside-content');
      // A relative path is resolved against the primary root and sent canonical.
      expect(JSON.stringify(seen[2])).toContain('inside-content');
      // Writes ask (mode ask, and the server marks write_file destructive): approved, then denied.
      expect(approvals.map((a) => [a.tool, a.reason])).toEqual([
        ['mcp:fs:write_file', 'mode_ask'],
        ['mcp:fs:write_file', 'mode_ask'],
      ]);
      expect(seen[3]).toMatchObject({ kind: 'tool.result' });
      expect(readFileSync(join(fx.project, 'c.txt'), 'utf8')).toBe('approved');
      expect(seen[4]).toMatchObject({ kind: 'tool.denied' });
      expect(existsSync(join(fx.project, 'b.txt'))).toBe(false);
    } finally {
      await rt.stop();
    }
  }, 180_000);
});

describe('@modelcontextprotocol/server-everything', () => {
  const fx = mcpFixture(
    () => ({
      agents: { a: { mode: 'allow' } },
      mcp: {
        servers: {
          ev: {
            command: join(BIN, 'mcp-server-everything'),
            args: ['stdio'],
            network: false,
            timeoutMs: 2000,
            tools: { exclude: ['toggle-*'] },
          },
        },
      },
    }),
    SECRET,
  );
  afterAll(() => fx.cleanup());

  it('structured output reaches the model; annotations never loosen; a long call is cut by timeoutMs; the filter applies', async () => {
    const rt = await fx.start({
      a: script([
        { tool: 'mcp:ev:get-structured-content', args: { location: 'Chicago' } },
        { tool: 'mcp:ev:trigger-long-running-operation', args: { duration: 30, steps: 30 } },
        { tool: 'mcp:ev:toggle-simulated-logging', args: {} },
      ]),
    });
    try {
      await ready(rt, 'ev');
      const tools = runtimeInternals(rt).mcp?.tools('ev') ?? [];
      const echo = tools.find((t) => t.tool === 'echo');
      // echo says readOnlyHint, destructiveHint false, idempotentHint: still external + ask, not idempotent.
      expect(echo?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
      expect(echo?.metadata).toEqual({ risk: 'external', approvalDefault: 'ask', source: 'mcp' });
      const toggle = tools.find((t) => t.tool === 'toggle-simulated-logging');
      expect(toggle?.offered).toBe(false);
      expect(toggle?.why[0]).toContain('excluded');
      expect(runtimeInternals(rt).registry.get('mcp:ev:toggle-simulated-logging')).toBeUndefined();
      const { outcome, seen, approvals } = await runOnce(rt, 'a');
      expect(outcome.status).toBe('completed');
      expect(approvals.map((a) => a.reason)).toEqual(['tool_default_ask', 'tool_default_ask']);
      expect(seen[0]).toMatchObject({ kind: 'tool.result' });
      expect(JSON.stringify(seen[0])).toContain('structuredContent');
      expect(JSON.stringify(seen[0])).toContain('temperature');
      expect(seen[1]).toMatchObject({ kind: 'tool.failed' });
      expect(JSON.stringify(seen[1])).toContain('mcp_call_timeout');
      expect(seen[2]).toMatchObject({ kind: 'tool.denied', reason: 'tool_not_found' });
    } finally {
      await rt.stop();
    }
  }, 180_000);
});

describe('@modelcontextprotocol/server-everything, a long-running call cut by its time limit', () => {
  it('the server is sent notifications/cancelled for that request and goes on answering', async () => {
    const fx = mcpFixture(
      () => ({
        mcp: {
          servers: {
            ev: {
              command: join(BIN, 'mcp-server-everything'),
              args: ['stdio'],
              network: false,
              timeoutMs: 1000,
            },
          },
        },
      }),
      SECRET,
    );
    const env = await createPolicyEnvironment(fx.loaded);
    const supervisor = new ProcessSupervisor({ sandbox: env.sandboxBackend, killGraceMs: 300 });
    const registry = registryFromConfig(fx.loaded);
    const redactor = new Redactor();
    // What the client wrote to the server's stdin (observed, passed on unchanged).
    const sent: string[] = [];
    const spec = mcpServerSpecs(fx.loaded.config);
    const host = new McpHost({
      servers: spec,
      registry,
      override: () => undefined,
      secrets: createSecretResolver(new MemorySecretStore({}), redactor),
      redactor,
      sandboxed: supervisor.sandbox !== null,
      placement: () => ({
        confine: { roots: [{ path: fx.project, access: 'read-write' }] },
        cwd: fx.project,
      }),
      spawn: async (request) => {
        const child = await supervisor.spawnConfined({ ...request, stdin: 'pipe' });
        const stdin = child.stdin;
        if (stdin !== null) {
          const write = stdin.write.bind(stdin) as (chunk: unknown, cb?: unknown) => boolean;
          stdin.write = ((chunk: unknown, cb?: unknown) => {
            sent.push(String(chunk));
            return write(chunk, cb);
          }) as typeof stdin.write;
        }
        return child;
      },
    });
    const context = (name: string) => {
      const tool = registry.get(name);
      return {
        runId: 'r',
        callId: name,
        idempotencyKey: name,
        decision: {
          decision: 'allow' as const,
          reason: 'session_approval' as const,
          risk: 'external' as const,
          rule: { id: 's', source: 'session-approval' as const },
          targets: [],
          humanRequired: false,
          step: 7,
          ...(tool?.status === 'ok' && tool.digest ? { toolDigest: tool.digest } : {}),
        },
        roots: [],
        paths: env.paths,
        signal: new AbortController().signal,
        secrets: { resolve: async () => '' },
      };
    };
    try {
      await host.start();
      expect(host.status()[0]?.state).toBe('ready');
      const long = 'mcp:ev:trigger-long-running-operation';
      await expect(
        host.executor(long)?.execute({ duration: 30, steps: 30 }, context(long)),
      ).rejects.toMatchObject({ code: 'mcp_call_timeout' });
      const messages = sent
        .flatMap((chunk) => chunk.split('\n').filter(Boolean))
        .map((l) => JSON.parse(l) as { id?: number; method?: string; params?: Record<string, unknown> });
      const call = messages.find(
        (m) => m.method === 'tools/call' && m.params?.name === 'trigger-long-running-operation',
      );
      expect(call?.id).toBeTypeOf('number');
      expect(
        messages.filter((m) => m.method === 'notifications/cancelled').map((m) => m.params?.requestId),
      ).toEqual([call?.id]);
      // The server is still ready and answers the next call.
      const echo = 'mcp:ev:echo';
      const result = await host.executor(echo)?.execute({ message: 'still here' }, context(echo));
      expect(JSON.stringify(result)).toContain('still here');
      expect(host.status()[0]?.state).toBe('ready');
    } finally {
      await host.stop();
      await supervisor.shutdown();
      fx.cleanup();
    }
  }, 120_000);
});
