import { describe, expect, it } from 'vitest';
import { argumentSchema, modelTools, WireNames } from '../../actors/model/tool-schemas.ts';
import { BUILTIN_TOOLS } from '../../policy/builtins.ts';
import { ToolRegistry } from '../../policy/registry.ts';

describe('tool schemas for the model', () => {
  it('every built-in tool gets an object schema generated from its zod schema, with a description', () => {
    const tools = modelTools(ToolRegistry.withBuiltins(), null);
    expect(tools.map((t) => t.name)).toEqual(Object.keys(BUILTIN_TOOLS).sort());
    for (const t of tools) {
      expect(t.parameters.type).toBe('object');
      expect(t.parameters.additionalProperties).toBe(false);
      expect(t.parameters).not.toHaveProperty('$schema');
      expect(t.description.length).toBeGreaterThan(10);
    }
    const http = tools.find((t) => t.name === 'http_request');
    expect(http?.parameters).toMatchObject({
      properties: { method: { enum: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] } },
      required: ['url', 'method'],
    });
  });

  it('offers only granted tools that exist; unannotated tools get an any-object schema', () => {
    const registry = ToolRegistry.withBuiltins();
    registry.register('ext.lookup', 'extension', undefined);
    const tools = modelTools(registry, new Set(['write_file', 'ext.lookup', 'no_such_tool']));
    expect(tools.map((t) => t.name)).toEqual(['ext.lookup', 'write_file']);
    expect(tools[0]?.parameters).toEqual({ type: 'object', additionalProperties: true });
    expect(modelTools(registry, new Set())).toEqual([]);
  });

  it('wire names fit provider rules, never collide, and map back; unknown names pass through', () => {
    const wire = new WireNames(['mcp:fs:read', 'mcp_fs_read', 'read_file', 'ext.lookup', 'x'.repeat(80)]);
    const names = ['mcp:fs:read', 'mcp_fs_read', 'read_file', 'ext.lookup', 'x'.repeat(80)].map((n) =>
      wire.toWire(n),
    );
    for (const n of names) expect(n).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(new Set(names).size).toBe(names.length);
    expect(wire.toWire('read_file')).toBe('read_file');
    // A name that is already valid keeps itself even when a sanitized name would have taken it.
    expect(wire.toWire('mcp_fs_read')).toBe('mcp_fs_read');
    expect(wire.toWire('mcp:fs:read')).toBe('mcp_fs_read_2');
    for (const n of ['mcp:fs:read', 'mcp_fs_read', 'ext.lookup'])
      expect(wire.fromWire(wire.toWire(n))).toBe(n);
    expect(wire.fromWire('made_up')).toBe('made_up');
  });
});

describe('argument schemas are generated once per tool schema', () => {
  it('returns the same frozen schema for the same zod schema, and a different one for another', async () => {
    const { z } = await import('zod');
    const a = z.strictObject({ path: z.string() });
    const b = z.strictObject({ path: z.string(), limit: z.number().optional() });
    const first = argumentSchema(a);
    expect(argumentSchema(a)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.properties)).toBe(true);
    // Nothing a caller does to it reaches the next run's offer.
    expect(() => {
      (first.properties as Record<string, unknown>).extra = { type: 'string' };
    }).toThrow(TypeError);
    expect(Object.keys(argumentSchema(a).properties as object)).toEqual(['path']);
    expect(Object.keys(argumentSchema(b).properties as object)).toEqual(['path', 'limit']);
  });
});
