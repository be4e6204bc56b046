import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../runtime/config/errors.ts';
import { configJsonSchema } from '../../runtime/config/json-schema.ts';
import { loadConfig, parseConfig, resolveConfig } from '../../runtime/config/load.ts';
import { registryFromConfig } from '../../runtime/policy/registry-from-config.ts';

const dir = mkdtempSync(join(tmpdir(), 'snotra-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function problemsOf(text: string): string[] {
  try {
    parseConfig(text, '/x/snotra.config.json', '/x');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return [...(err as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}

describe('config loading', () => {
  it('names the JSON path, what was expected and what was found', () => {
    expect(problemsOf('{"agents":{"assistant":{"mode":"yolo"}}}')).toEqual([
      'agents.assistant.mode: expected "allow" | "ask" | "deny", got "yolo"',
    ]);
  });

  it('reports array positions, unknown keys and missing fields', () => {
    const problems = problemsOf(
      JSON.stringify({
        workspace: { roots: [{ id: 'a', path: '.', access: 'write' }] },
        agents: { a: { mode: 'ask', rules: [{ id: 'r', effect: 'allow', tool: 'shell' }] } },
        sidecar: { prot: 1 },
        mcp: { servers: { s: {} } },
      }),
    );
    expect(problems).toContain('workspace.roots[0].access: expected "read" | "read-write", got "write"');
    expect(problems).toContain('agents.a.rules[0].effect: expected "ask" | "deny", got "allow"');
    expect(problems).toContain('sidecar: unknown key "prot"');
    expect(problems).toContain('mcp.servers.s.command: expected string, but it is missing');
  });

  it('a rule cannot grant: only ask or deny effects exist', () => {
    expect(problemsOf('{"agents":{"a":{"rules":[{"id":"x","tool":"shell","effect":"allow"}]}}}')[0]).toMatch(
      /^agents\.a\.rules\[0\]\.effect: expected "ask" \| "deny"/,
    );
  });

  it('never echoes a value found under a secret-looking key', () => {
    const problems = problemsOf('{"bus":{"credentials":{"secret":12345678}}}');
    expect(problems.join('\n')).not.toContain('12345678');
    expect(problems[0]).toMatch(/^bus\.credentials\.secret: expected string, got a number$/);
  });

  it('requires exactly one primary root when there are several, and unique ids', () => {
    const problems = problemsOf(
      JSON.stringify({
        workspace: {
          roots: [
            { id: 'a', path: 'a', access: 'read' },
            { id: 'a', path: 'b', access: 'read' },
          ],
        },
      }),
    );
    expect(problems).toContain('workspace.roots: exactly one root must be "primary": true, found 0');
    expect(problems).toContain('workspace.roots[1].id: duplicate root id "a"');
  });

  it('rejects malformed JSON, a missing file and a built-in metadata override with clear errors', () => {
    expect(problemsOf('{"agents": ')[0]).toMatch(/^not valid JSON: /);
    expect(() => loadConfig(join(dir, 'missing.json'))).toThrow(
      /missing\.json: invalid config\n {2}file not found/,
    );
    const loaded = parseConfig('{"tools":{"shell":{"risk":"read"}}}', '/x/c.json', '/x');
    expect(() => registryFromConfig(loaded)).toThrow(
      /tools\.shell: built-in tool metadata cannot be changed/,
    );
  });

  it('resolves relative paths against the config file’s folder', () => {
    const file = join(dir, 'snotra.config.json');
    writeFileSync(
      file,
      JSON.stringify({
        stateDir: 'state',
        workspace: {
          roots: [
            { id: 'p', path: 'proj', access: 'read-write' },
            { id: 'abs', path: '/opt/x', access: 'read', primary: false },
          ],
        },
      }),
    );
    expect(() => loadConfig(file)).toThrow(/exactly one root must be "primary"/);
    writeFileSync(
      file,
      JSON.stringify({
        stateDir: 'state',
        workspace: { roots: [{ id: 'p', path: 'proj', access: 'read-write' }] },
      }),
    );
    const { config } = resolveConfig(undefined, dir);
    expect(config.stateDir).toBe(join(dir, 'state'));
    expect(config.workspace.roots[0]).toMatchObject({ path: join(dir, 'proj'), primary: true });
  });

  it('falls back to the embedded defaults: the folder as the primary read-write root, mode ask, state in ./.snotra', () => {
    const empty = mkdtempSync(join(tmpdir(), 'snotra-empty-'));
    try {
      const loaded = resolveConfig(undefined, empty);
      expect(loaded.file).toBeNull();
      expect(loaded.config.stateDir).toBe(join(empty, '.snotra'));
      expect(loaded.config.workspace.roots).toEqual([
        { id: 'workspace', path: empty, access: 'read-write', primary: true },
      ]);
      expect(loaded.config.agents.assistant?.mode).toBe('ask');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('ships a JSON Schema generated from the zod schema (run `npm run schema` after changing it)', () => {
    const shipped = JSON.parse(
      readFileSync(new URL('../../schema/snotra.config.schema.json', import.meta.url), 'utf8'),
    );
    expect(shipped).toEqual(JSON.parse(JSON.stringify(configJsonSchema())));
  });
});
