import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../runtime/config/errors.ts';
import { CONFIG_SCHEMA_ID, configJsonSchema } from '../../runtime/config/json-schema.ts';
import { parseConfig } from '../../runtime/config/load.ts';
import { registryFromConfig } from '../../runtime/config/adapters/tool-registry.ts';

type Json = Record<string, unknown>;
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-jsonschema-')));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every named property in the schema, at any depth, as [JSON path, its schema]. */
function propertiesOf(node: unknown, at = '(root)', out: [string, Json][] = []): [string, Json][] {
  if (Array.isArray(node)) {
    node.forEach((n, i) => propertiesOf(n, `${at}[${i}]`, out));
    return out;
  }
  if (node === null || typeof node !== 'object') return out;
  for (const [key, value] of Object.entries(node as Json)) {
    if ((key === 'properties' || key === 'patternProperties') && value && typeof value === 'object') {
      for (const [name, sub] of Object.entries(value as Json)) {
        out.push([`${at}.${name}`, sub as Json]);
        propertiesOf(sub, `${at}.${name}`, out);
      }
    } else if (key !== 'default' && key !== 'examples') {
      propertiesOf(value, `${at}/${key}`, out);
    }
  }
  return out;
}

const schema = configJsonSchema();
const shipped = JSON.parse(
  readFileSync(new URL('../../schema/snotra.config.schema.json', import.meta.url), 'utf8'),
) as Json;

function load(text: string) {
  return parseConfig(text, join(dir, 'snotra.config.json'), dir, {
    env: { HOME: dir, XDG_STATE_HOME: join(dir, 's') },
  });
}

describe('the config JSON Schema', () => {
  it('describes every property, at every depth (editors show it as hover help)', () => {
    const props = propertiesOf(shipped);
    expect(props.length).toBeGreaterThan(80);
    const undescribed = props.filter(
      ([, s]) => typeof s.description !== 'string' || s.description.length < 8,
    );
    expect(undescribed.map(([p]) => p)).toEqual([]);
  });

  it("a schema shared by several fields keeps each field's own description", () => {
    const props = propertiesOf(shipped);
    const at = (suffix: string) => props.filter(([p]) => p.endsWith(suffix)).map(([, s]) => s.description);
    expect(at('rules/items.risk')).toEqual([expect.stringMatching(/^Matches tools of this risk/)]);
    expect(at('.^mcp:[^:]+:.+$.risk')).toEqual([expect.stringMatching(/^Your vetted risk/)]);
    expect(at('anyOf[1].risk')).toEqual([expect.stringMatching(/^How much the tool can change/)]);
  });

  it('the walk would notice an undescribed property', () => {
    expect(propertiesOf({ properties: { a: { description: 'x' }, b: { properties: { c: {} } } } })).toEqual([
      ['(root).a', { description: 'x' }],
      ['(root).b', { properties: { c: {} } }],
      ['(root).b.c', {}],
    ]);
  });

  it('is current: the committed file equals the generated one (run `npm run schema`)', () => {
    expect(shipped).toEqual(JSON.parse(JSON.stringify(schema)));
  });

  it('has an $id and a draft, so it can be referenced from outside the repository', () => {
    expect(shipped.$id).toBe(CONFIG_SCHEMA_ID);
    expect(shipped.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as Json;
    expect(pkg.files).toContain('schema/snotra.config.schema.json');
    expect((pkg.exports as Json)['./schema.json']).toBe('./schema/snotra.config.schema.json');
  });

  it('types tools entries: MCP overrides by name pattern, other names as tool metadata', () => {
    const tools = (shipped.properties as Record<string, Json>).tools as Json;
    const [pattern, mcp] = Object.entries(tools.patternProperties as Json)[0] as [string, Json];
    expect(new RegExp(pattern).test('mcp:notes:search')).toBe(true);
    expect(new RegExp(pattern).test('ext.lookup')).toBe(false);
    expect(Object.keys(mcp.properties as Json).sort()).toEqual(
      ['approvalDefault', 'idempotent', 'pathArguments', 'risk', 'targetArgument'].sort(),
    );
    const variants = (tools.additionalProperties as Json).anyOf as Json[];
    expect(variants.map((v) => v.required)).toEqual([['source'], ['risk', 'approvalDefault', 'source']]);
    expect(variants.every((v) => v.additionalProperties === false)).toBe(true);
  });

  it('types cron with a pattern hint that accepts real patterns and rejects a free sentence', () => {
    const scheduled = (((shipped.properties as Json).surfaces as Json).properties as Json).scheduled as Json;
    const cron = ((scheduled.items as Json).properties as Json).cron as Json;
    const re = new RegExp(cron.pattern as string);
    for (const ok of ['0 9 * * 1-5', '*/15 * * * *', '0 0 9 * * 1-5', '@daily', '2026-12-24T09:00:00Z'])
      expect(re.test(ok)).toBe(true);
    for (const bad of ['every morning', '0 9', '']) expect(re.test(bad)).toBe(false);
  });
});

describe('typed in the schema, permissive at runtime', () => {
  it('a tool whose metadata does not validate is an invalid tool (approval for every call), not a config error', () => {
    const loaded = load(
      JSON.stringify({
        tools: {
          'ext.bare': { source: 'extension' },
          'ext.typo': { source: 'extension', risk: 'read', approvalDefault: 'allow', pathArgs: ['p'] },
          'ext.ok': { source: 'skill', risk: 'read', approvalDefault: 'allow' },
        },
      }),
    );
    const registry = registryFromConfig(loaded);
    expect(registry.get('ext.bare')?.status).toBe('unannotated');
    expect(registry.get('ext.typo')?.status).toBe('invalid_metadata');
    expect(registry.get('ext.ok')?.status).toBe('ok');
  });

  it('accepts "$comment" only at the top level, in agents and in roots', () => {
    const loaded = load(
      JSON.stringify({
        $comment: 'top',
        workspace: { roots: [{ $comment: 'root', id: 'w', path: '.', access: 'read' }] },
        agents: { a: { $comment: 'agent', mode: 'ask' } },
      }),
    );
    expect(loaded.config.agents.a?.mode).toBe('ask');
    expect(() => load('{"sidecar":{"$comment":"x"}}')).toThrow(ConfigError);
    expect(() => load('{"$comment":5}')).toThrow(/\$comment: expected string/);
  });
});
