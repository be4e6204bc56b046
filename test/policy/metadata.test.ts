import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { evaluate } from '../../policy/evaluate.ts';
import { ToolRegistry } from '../../policy/registry.ts';
import { createWorkspace, type Workspace } from '../support/policy.ts';

let ws: Workspace;
beforeAll(async () => {
  ws = await createWorkspace({
    tools: {
      'ext.lookup': { source: 'extension', risk: 'read', approvalDefault: 'allow' },
      'ext.bare': { source: 'extension' },
      'skill.broken': { source: 'skill', risk: 'dangerous', approvalDefault: 'allow' },
      'ext.typo': { source: 'extension', risk: 'read', approvalDefault: 'allow', pathArgs: ['p'] },
      'ext.claims-builtin': { source: 'builtin', risk: 'read', approvalDefault: 'allow' },
      'mcp:notes:search': { risk: 'read' },
      'mcp:notes:archive': { risk: 'read' },
    },
    mcp: {
      servers: {
        notes: {
          command: 'notes-server',
          tools: {
            search: {},
            archive: { annotations: { destructiveHint: true } },
            delete_all: { annotations: { readOnlyHint: true, idempotentHint: true } },
            send: {},
          },
        },
      },
    },
  });
});
afterAll(() => ws.cleanup());

describe('tool security metadata', () => {
  it('an unknown tool is denied with tool_not_found, in every mode', () => {
    for (const mode of ['allow', 'ask', 'deny'] as const) {
      const d = evaluate({ tool: 'format_disk', args: {} }, ws.context({ mode }));
      expect(d).toMatchObject({
        decision: 'deny',
        reason: 'tool_not_found',
        step: 1,
        rule: { source: 'metadata' },
      });
    }
  });

  it('a tool outside the agent’s tool set is denied as not granted, apart from an unknown tool', () => {
    const d = evaluate(
      { tool: 'shell', args: { command: 'ls' } },
      ws.context({ mode: 'allow', tools: ['read_file'] }),
    );
    expect(d).toMatchObject({
      decision: 'deny',
      reason: 'tool_not_granted',
      rule: { id: 'metadata.tool-not-granted' },
      detail: '"shell" is defined but not in this agent\'s tools',
    });
  });

  it('an unannotated extension tool needs a human even in allow mode', () => {
    const d = evaluate({ tool: 'ext.bare', args: {} }, ws.context({ mode: 'allow' }));
    expect(d).toMatchObject({
      decision: 'approval-required',
      reason: 'unannotated_tool',
      humanRequired: true,
      step: 1,
    });
  });

  it('an unannotated tool is denied in deny mode', () => {
    const d = evaluate({ tool: 'ext.bare', args: {} }, ws.context({ mode: 'deny' }));
    expect(d).toMatchObject({ decision: 'deny', reason: 'mode_deny' });
  });

  it('metadata with a bad risk is invalid_metadata and needs a human', () => {
    const d = evaluate({ tool: 'skill.broken', args: {} }, ws.context({ mode: 'allow' }));
    expect(d).toMatchObject({ decision: 'approval-required', reason: 'invalid_metadata' });
  });

  it('metadata with an unknown field is invalid, so a misspelt restriction is never ignored', () => {
    const d = evaluate({ tool: 'ext.typo', args: {} }, ws.context({ mode: 'allow' }));
    expect(d).toMatchObject({ decision: 'approval-required', reason: 'invalid_metadata' });
  });

  it('an extension cannot claim to be a built-in', () => {
    const d = evaluate({ tool: 'ext.claims-builtin', args: {} }, ws.context({ mode: 'allow' }));
    expect(d).toMatchObject({ decision: 'approval-required', reason: 'invalid_metadata' });
  });

  it('a valid extension tool is decided by its declared risk', () => {
    expect(evaluate({ tool: 'ext.lookup', args: { q: 'x' } }, ws.context({ mode: 'ask' }))).toMatchObject({
      decision: 'allow',
      risk: 'read',
    });
  });

  it('invalid arguments are denied before anything else is looked at', () => {
    const cases = [
      { tool: 'read_file', args: {} },
      { tool: 'read_file', args: { path: 42 } },
      { tool: 'read_file', args: { path: 'a', extra: true } },
      { tool: 'read_file', args: 'not an object' },
      { tool: 'http_request', args: { url: 'https://x', method: 'TRACE' } },
      { tool: 'git_query', args: { args: ['push', 'origin'] } },
      { tool: 'shell', args: { command: '' } },
    ];
    for (const call of cases) {
      expect(evaluate(call, ws.context({ mode: 'allow' })), JSON.stringify(call)).toMatchObject({
        decision: 'deny',
        reason: 'invalid_arguments',
        step: 1,
      });
    }
  });

  it('an MCP tool without a local override is external + ask, even in allow mode', () => {
    const d = evaluate({ tool: 'mcp:notes:send', args: { to: 'x' } }, ws.context({ mode: 'allow' }));
    expect(d).toMatchObject({ decision: 'approval-required', reason: 'tool_default_ask', risk: 'external' });
  });

  it('a server’s readOnlyHint cannot loosen an MCP tool', () => {
    const d = evaluate({ tool: 'mcp:notes:delete_all', args: {} }, ws.context({ mode: 'allow' }));
    expect(d).toMatchObject({ decision: 'approval-required', risk: 'external' });
    const registry = ToolRegistry.withBuiltins();
    const resolved = registry.registerMcp('s', 't', undefined, { readOnlyHint: true, idempotentHint: true });
    expect(resolved).toMatchObject({ status: 'ok', metadata: { risk: 'external', approvalDefault: 'ask' } });
    expect(resolved.status === 'ok' && resolved.metadata.idempotent).toBeFalsy();
  });

  it('a user override in config may narrow an MCP tool to read', () => {
    const d = evaluate({ tool: 'mcp:notes:search', args: { q: 'x' } }, ws.context({ mode: 'ask' }));
    expect(d).toMatchObject({ decision: 'allow', risk: 'read', reason: 'mode_allow' });
  });

  it('a server’s destructiveHint tightens even a user-narrowed MCP tool', () => {
    const d = evaluate({ tool: 'mcp:notes:archive', args: {} }, ws.context({ mode: 'allow' }));
    expect(d).toMatchObject({ decision: 'approval-required', reason: 'tool_default_ask', risk: 'read' });
  });

  it('name-based inference applies to vetted built-ins only', () => {
    const registry = ToolRegistry.withBuiltins();
    expect(
      registry.register('read_notes', 'builtin', undefined, z.record(z.string(), z.unknown())),
    ).toMatchObject({
      status: 'ok',
      metadata: { risk: 'read' },
    });
    expect(registry.register('read_secrets', 'extension', undefined)).toMatchObject({
      status: 'unannotated',
    });
    expect(registry.register('read_mail', 'skill', null)).toMatchObject({ status: 'unannotated' });
    expect(registry.register('frobnicate', 'builtin', undefined)).toMatchObject({ status: 'unannotated' });
  });

  it('every built-in tool of DESIGN.md §12 is registered with its contract risk', () => {
    const registry = ToolRegistry.withBuiltins();
    const risks = Object.fromEntries(
      registry.names().map((n) => {
        const t = registry.get(n);
        return [n, t?.status === 'ok' ? t.metadata.risk : null];
      }),
    );
    expect(risks).toEqual({
      read_file: 'read',
      list_dir: 'read',
      search_files: 'read',
      write_file: 'write-local',
      edit_file: 'write-local',
      shell: 'exec',
      git_query: 'read',
      http_request: 'external',
      send_message: 'external',
      spawn_agent: 'read',
      request_directory_access: 'write-local',
    });
  });
});
