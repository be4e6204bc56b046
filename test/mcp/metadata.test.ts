/**
 * The laws of MCP tool metadata and of what an MCP result may carry, without servers: server
 * annotations only tighten; the tool filter; schema bounds and defusing; result bounds; a secret
 * anywhere in a result never survives the observation (fast-check over random secrets).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { boundResult } from '../../actors/mcp/result.ts';
import { compileArgumentCheck, defuseSchema, toolDigest } from '../../actors/mcp/schema.ts';
import { DEFAULT_MCP_LIMITS } from '../../actors/mcp/limits.ts';
import { readCatalog } from '../../actors/mcp/catalog.ts';
import { toObservation } from '../../actors/tools/observation.ts';
import { APPROVAL_STRICTNESS } from '../../policy/metadata.ts';
import { explainMcpMetadata, mcpMetadata, mcpToolFiltered, type McpOverride } from '../../policy/mcp.ts';
import { Redactor } from '../../store/index.ts';
import { runs } from '../support/laws.ts';

const RISK_ORDER = { read: 0, 'write-local': 1, exec: 2, external: 3 } as const;
const hint = fc.option(fc.boolean(), { nil: undefined });
const annotations = fc.record(
  { readOnlyHint: hint, destructiveHint: hint, idempotentHint: hint, openWorldHint: hint },
  { requiredKeys: [] },
);
const override: fc.Arbitrary<McpOverride | undefined> = fc.option(
  fc.record(
    {
      risk: fc.constantFrom('read', 'write-local', 'exec', 'external'),
      approvalDefault: fc.constantFrom('allow', 'ask', 'deny'),
      idempotent: fc.boolean(),
    },
    { requiredKeys: [] },
  ),
  { nil: undefined },
);

describe('MCP tool metadata', () => {
  it('law: server annotations never loosen what the override (or the default) gives', () => {
    fc.assert(
      fc.property(override, annotations, (o, a) => {
        const base = mcpMetadata(o, undefined);
        const hinted = mcpMetadata(o, a);
        expect(RISK_ORDER[hinted.risk]).toBe(RISK_ORDER[base.risk]);
        expect(APPROVAL_STRICTNESS[hinted.approvalDefault]).toBeGreaterThanOrEqual(
          APPROVAL_STRICTNESS[base.approvalDefault],
        );
        // Only the user's override can mark a tool idempotent.
        expect(hinted.idempotent).toBe(o?.idempotent);
      }),
      { numRuns: runs(100) },
    );
  });

  it('without an override every listed tool is external + ask, whatever it claims', () => {
    fc.assert(
      fc.property(annotations, (a) => {
        expect(mcpMetadata(undefined, a)).toEqual({
          risk: 'external',
          approvalDefault: 'ask',
          source: 'mcp',
        });
      }),
      { numRuns: runs(100) },
    );
  });

  it('an absent destructiveHint is the worst case; readOnlyHint makes no destructive claim', () => {
    const read: McpOverride = { risk: 'read' };
    expect(mcpMetadata(read, {}).approvalDefault).toBe('ask');
    expect(mcpMetadata(read, { readOnlyHint: false }).approvalDefault).toBe('ask');
    expect(mcpMetadata(read, { destructiveHint: true, readOnlyHint: true }).approvalDefault).toBe('ask');
    expect(mcpMetadata(read, { destructiveHint: false }).approvalDefault).toBe('allow');
    expect(mcpMetadata(read, { readOnlyHint: true }).approvalDefault).toBe('allow');
    // Declared in config only (nothing reported yet): the override decides.
    expect(mcpMetadata(read, undefined).approvalDefault).toBe('allow');
    expect(explainMcpMetadata(read, {}).why.join(' ')).toContain('absent destructiveHint');
    // An explicit allow is tightened by a destructive hint too.
    expect(
      mcpMetadata({ risk: 'read', approvalDefault: 'allow' }, { destructiveHint: true }).approvalDefault,
    ).toBe('ask');
  });

  it('the filter: exact names and prefixes; exclude wins; benign look-alikes pass', () => {
    const f = { include: ['read_*', 'list_directory'], exclude: ['read_media*'] };
    expect(mcpToolFiltered(f, 'read_text_file')).toBeNull();
    expect(mcpToolFiltered(f, 'list_directory')).toBeNull();
    expect(mcpToolFiltered(f, 'list_directory_with_sizes')).toContain('not in');
    expect(mcpToolFiltered(f, 'read_media_file')).toContain('excluded');
    expect(mcpToolFiltered(f, 'write_file')).toContain('not in');
    expect(mcpToolFiltered({}, 'anything')).toBeNull();
    expect(mcpToolFiltered({ exclude: ['x'] }, 'xy')).toBeNull();
  });
});

describe('MCP input schemas', () => {
  it('are bounded in size and depth, and must describe an object', () => {
    const limits = { ...DEFAULT_MCP_LIMITS, maxSchemaBytes: 200, maxSchemaDepth: 4 };
    expect(() => compileArgumentCheck({ type: 'object', description: 'x'.repeat(300) }, limits)).toThrow(
      /bytes/,
    );
    expect(() =>
      compileArgumentCheck(
        { type: 'object', properties: { a: { type: 'object', properties: { b: { type: 'object' } } } } },
        limits,
      ),
    ).toThrow(/deeper/);
    expect(() => compileArgumentCheck({ type: 'string' }, limits)).toThrow(/object/);
    expect(() => compileArgumentCheck([1], limits)).toThrow(/object/);
    expect(() =>
      compileArgumentCheck({ type: 'object', properties: { a: { type: 'nonsense' } } }, limits),
    ).toThrow(/compile/);
  });

  it('server regexes never run (ReDoS), remote refs are never fetched; the check stays an object check', () => {
    const hostile = {
      type: 'object',
      properties: { s: { type: 'string', pattern: '^(a+)+$' }, r: { $ref: 'https://evil.test/schema.json' } },
      patternProperties: { '^(x+)+$': { type: 'number' } },
      additionalProperties: false,
      required: ['s'],
    };
    const defused = defuseSchema(hostile) as Record<string, unknown>;
    expect(JSON.stringify(defused)).not.toContain('(a+)+');
    expect(JSON.stringify(defused)).not.toContain('evil.test');
    const check = compileArgumentCheck(hostile, DEFAULT_MCP_LIMITS);
    // Run by a backtracking engine, `^(a+)+$` on 50,000 a's and a '!' would not end in a lifetime: it returning is the proof.
    expect(check({ s: `${'a'.repeat(50_000)}!` })).toBeNull();
    expect(check({})).toContain("required property 's'");
    expect(check({ s: 5 })).toContain('must be string');
  });

  it('an argument error names the place, never the value', () => {
    const check = compileArgumentCheck(
      { type: 'object', properties: { to: { type: 'string', enum: ['a@b.c'] } } },
      DEFAULT_MCP_LIMITS,
    );
    const problem = check({ to: 'hunter2-not-shown' }) ?? '';
    expect(problem).toContain('/to');
    expect(problem).not.toContain('hunter2');
  });

  it('the digest changes with the schema or the annotations, not with key order', () => {
    const a = toolDigest({
      name: 't',
      inputSchema: { type: 'object', properties: { x: {} } },
      annotations: {},
    });
    expect(
      toolDigest({ name: 't', inputSchema: { properties: { x: {} }, type: 'object' }, annotations: {} }),
    ).toBe(a);
    expect(
      toolDigest({ name: 't', inputSchema: { type: 'object', properties: { y: {} } }, annotations: {} }),
    ).not.toBe(a);
    expect(
      toolDigest({
        name: 't',
        inputSchema: { type: 'object', properties: { x: {} } },
        annotations: { destructiveHint: false },
      }),
    ).not.toBe(a);
  });
});

describe('MCP listings', () => {
  it('stop at a repeated cursor, cut endless pages and too many tools', async () => {
    const tool = (n: number) => ({ name: `t${n}`, inputSchema: { type: 'object' } });
    let calls = 0;
    const repeat = await readCatalog(
      async (cursor) => {
        calls++;
        return { tools: [tool(calls)], nextCursor: cursor === undefined ? 'c1' : 'c1' };
      },
      { filter: {} },
      DEFAULT_MCP_LIMITS,
    );
    expect(calls).toBe(2);
    expect(repeat.problems).toEqual(['the server repeated a page cursor: the listing stopped there']);
    let n = 0;
    const endless = await readCatalog(
      async () => ({ tools: [tool(n++)], nextCursor: `c${n}` }),
      { filter: {} },
      {
        ...DEFAULT_MCP_LIMITS,
        maxPages: 5,
      },
    );
    expect(n).toBe(5);
    expect(endless.problems).toEqual(['the listing was cut after 5 pages']);
    const many = await readCatalog(
      async () => ({ tools: Array.from({ length: 20 }, (_, i) => tool(i)) }),
      { filter: {} },
      { ...DEFAULT_MCP_LIMITS, maxTools: 7 },
    );
    expect(many.tools).toHaveLength(7);
    expect(many.problems).toEqual(['more than 7 tools: the rest were dropped']);
  });
});

describe('MCP results', () => {
  it('are bounded: blocks, bytes, structured content; binary payloads are described, not kept', () => {
    const limits = { ...DEFAULT_MCP_LIMITS, maxResultBytes: 1000, maxContentBlocks: 3 };
    const r = boundResult(
      {
        content: [
          { type: 'text', text: 'y'.repeat(5000) },
          { type: 'image', data: 'QUJD'.repeat(100), mimeType: 'image/png' },
          { type: 'text', text: 'z' },
          { type: 'text', text: 'dropped' },
        ],
        structuredContent: { big: 'q'.repeat(5000) },
      },
      limits,
    );
    expect(r.truncated).toBe(true);
    expect(JSON.stringify(r).length).toBeLessThan(1500);
    expect(r.content).toHaveLength(1);
    expect(r.structuredContent).toBeUndefined();
    const img = boundResult(
      { content: [{ type: 'image', data: 'QUJD'.repeat(100), mimeType: 'image/png' }] },
      limits,
    );
    expect(img.content).toEqual([{ type: 'binary', kind: 'image', mimeType: 'image/png', bytes: 300 }]);
    expect(boundResult({ isError: true, content: [] }, limits).isError).toBe(true);
    expect(boundResult('garbage', limits)).toEqual({ content: [], truncated: false, isError: false });
  });

  it('a secret across a cut (result budget, link, tool name in a listing problem) is redacted before the cut', async () => {
    const secret = 'cut-Secret-Value-7f3a9Q';
    const redactor = new Redactor();
    redactor.registerSecret(secret);
    const redact = (t: string) => redactor.redactString(t);
    const limits = { ...DEFAULT_MCP_LIMITS, maxResultBytes: 100 };
    const r = boundResult(
      {
        content: [
          { type: 'text', text: `${'a'.repeat(90)}${secret}` },
          { type: 'resource_link', uri: `${'u'.repeat(2040)}${secret}`, name: `${'n'.repeat(250)}${secret}` },
        ],
      },
      limits,
      redact,
    );
    expect(JSON.stringify(r)).not.toContain(secret.slice(0, 6));
    const listing = await readCatalog(
      async () => ({ tools: [{ name: `${'x'.repeat(50)}${secret}:`, inputSchema: { type: 'object' } }] }),
      { filter: {} },
      DEFAULT_MCP_LIMITS,
      redact,
    );
    expect(listing.problems.join(' ')).toContain('not a valid MCP tool name');
    expect(listing.problems.join(' ')).not.toContain(secret.slice(0, 6));
  });

  it('property: a registered secret anywhere in a result (text, structured, error) never reaches the observation', () => {
    const secret = fc.string({
      unit: fc.constantFrom(...'abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789-_'),
      minLength: 12,
      maxLength: 40,
    });
    fc.assert(
      fc.property(
        secret,
        fc.string({ maxLength: 30 }),
        fc.string({ maxLength: 30 }),
        fc.boolean(),
        (s, pre, post, asError) => {
          const redactor = new Redactor();
          redactor.registerSecret(s);
          const raw = {
            isError: asError,
            content: [
              { type: 'text', text: `${pre}${s}${post}` },
              { type: 'resource', resource: { uri: 'x:', text: `k=${s}` } },
            ],
            structuredContent: { nested: [{ v: `${pre}${s}` }], [`key-${s.slice(0, 4)}`]: s },
          };
          const bounded = boundResult(raw, DEFAULT_MCP_LIMITS);
          const outcome = asError
            ? {
                ok: false as const,
                error: Object.assign(new Error('mcp tool error'), {
                  code: 'mcp_tool_error',
                  details: bounded,
                }),
              }
            : { ok: true as const, result: bounded };
          const observed = toObservation(outcome, redactor);
          expect(JSON.stringify(observed)).not.toContain(s);
        },
      ),
      { numRuns: runs(200) },
    );
  });
});
