import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../runtime/config/errors.ts';
import { configJsonSchema } from '../../runtime/config/json-schema.ts';
import { loadConfig, parseConfig, resolveConfig } from '../../runtime/config/load.ts';
import { defaultStateDir } from '../../runtime/config/state-dir.ts';
import { createPolicyChecker } from '../../runtime/policy/checker.ts';
import { registryFromConfig } from '../../runtime/config/adapters/tool-registry.ts';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-config-')));
mkdirSync(join(dir, 'x'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function problemsOf(text: string): string[] {
  try {
    parseConfig(text, join(dir, 'x', 'snotra.config.json'), join(dir, 'x'));
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
    expect(problems).toContain('sidecar: unknown key "prot"; did you mean "port"?');
    expect(problems).toContain('mcp.servers.s.command: expected string, but it is missing');
  });

  it('suggests the key meant for an unknown one, at any depth', () => {
    expect(problemsOf('{"stateDirr":"s"}')).toEqual([
      '(root): unknown key "stateDirr"; did you mean "stateDir"?',
    ]);
    expect(problemsOf('{"agents":{"a":{"mdoe":"ask"}}}')).toEqual([
      'agents.a: unknown key "mdoe"; did you mean "mode"?',
    ]);
    expect(
      problemsOf('{"workspace":{"roots":[{"id":"w","path":".","access":"read","primray":true}]}}'),
    ).toEqual(['workspace.roots[0]: unknown key "primray"; did you mean "primary"?']);
    expect(problemsOf('{"approvals":{"ttl":5}}')).toEqual([
      'approvals: unknown key "ttl"; did you mean "ttlMs"?',
    ]);
    expect(problemsOf('{"zebra":1}')).toEqual(['(root): unknown key "zebra"']);
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
    expect(problemsOf('{"agents": ')[0]).toBe(
      'not valid JSON: line 1, column 12: expected a value (object, array, string, number, true, false or null), found the end of the file',
    );
    expect(() => loadConfig(join(dir, 'missing.json'))).toThrow(
      /missing\.json: invalid config\n {2}file not found/,
    );
    expect(() =>
      parseConfig('{"tools":{"shell":{"risk":"read"}}}', join(dir, 'x', 'c.json'), join(dir, 'x')),
    ).toThrow(/c\.json: invalid config\n {2}tools\.shell: built-in tool metadata cannot be changed/);
    const loaded = parseConfig('{}', join(dir, 'x', 'c.json'), join(dir, 'x'));
    expect(() =>
      registryFromConfig({ ...loaded, config: { ...loaded.config, tools: { shell: { risk: 'read' } } } }),
    ).toThrow(/tools\.shell: built-in tool metadata cannot be changed/);
  });

  it('resolves relative paths against the config file’s folder', () => {
    const file = join(dir, 'snotra.config.json');
    mkdirSync(join(dir, 'proj'));
    writeFileSync(
      file,
      JSON.stringify({
        stateDir: 'state',
        workspace: {
          roots: [
            { id: 'p', path: 'proj', access: 'read-write' },
            { id: 'abs', path: join(dir, 'x'), access: 'read', primary: false },
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

  it('falls back to the embedded defaults: the folder as the primary read-write root, mode ask, state outside it', () => {
    const empty = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-empty-')));
    try {
      const env = { XDG_STATE_HOME: join(dir, 'xdg'), HOME: join(dir, 'home') };
      const loaded = resolveConfig(undefined, empty, { env });
      expect(loaded.file).toBeNull();
      expect(loaded.config.stateDir).toBe(defaultStateDir(empty, env));
      expect(loaded.config.stateDir.startsWith(`${join(dir, 'xdg', 'snotra')}/`)).toBe(true);
      expect(loaded.config.stateDir.startsWith(empty)).toBe(false);
      expect(loaded.config.workspace.roots).toEqual([
        { id: 'workspace', path: empty, access: 'read-write', primary: true },
      ]);
      expect(loaded.config.agents.assistant?.mode).toBe('ask');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('puts the default state dir under $XDG_STATE_HOME/snotra, else ~/.local/state/snotra, one per workspace', () => {
    const a = join(dir, 'ws-a', 'my project');
    const b = join(dir, 'ws-b', 'my project');
    mkdirSync(a, { recursive: true });
    mkdirSync(b, { recursive: true });
    symlinkSync(a, join(dir, 'ws-link'));
    const xdg = { XDG_STATE_HOME: '/xdg/state', HOME: '/home/u' };
    expect(defaultStateDir(a, xdg)).toMatch(/^\/xdg\/state\/snotra\/my_project-[0-9a-f]{12}$/);
    expect(defaultStateDir(a, { HOME: '/home/u' })).toMatch(
      /^\/home\/u\/\.local\/state\/snotra\/my_project-[0-9a-f]{12}$/,
    );
    // The XDG spec ignores a relative value.
    expect(defaultStateDir(a, { XDG_STATE_HOME: 'rel', HOME: '/home/u' })).toMatch(
      /^\/home\/u\/\.local\/state\/snotra\//,
    );
    expect(defaultStateDir(b, xdg)).not.toBe(defaultStateDir(a, xdg));
    expect(defaultStateDir(join(dir, 'ws-link'), xdg)).toBe(defaultStateDir(a, xdg));
    expect(defaultStateDir('/', xdg)).toMatch(/^\/xdg\/state\/snotra\/root-[0-9a-f]{12}$/);
  });

  it('the default state dir, outside every root, is still a sensitive path for every tool', async () => {
    const ws = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-ws-')));
    try {
      const loaded = resolveConfig(undefined, ws, { env: { XDG_STATE_HOME: join(dir, 'xdg-state') } });
      expect(loaded.config.stateDir.startsWith(join(dir, 'xdg-state', 'snotra'))).toBe(true);
      const checker = await createPolicyChecker(loaded);
      const db = join(loaded.config.stateDir, 'snotra.db');
      expect(checker.check('assistant', { tool: 'read_file', args: { path: db } })).toMatchObject({
        decision: 'deny',
        reason: 'sensitive_path',
      });
      expect(
        checker.check('assistant', { tool: 'write_file', args: { path: db, content: '' } }),
      ).toMatchObject({
        decision: 'deny',
        reason: 'sensitive_path',
      });
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it('honours an explicit stateDir, also inside the workspace, and expands ~ against the home folder', () => {
    const env = { XDG_STATE_HOME: join(dir, 'xdg'), HOME: dir };
    expect(
      parseConfig('{"stateDir":".snotra"}', join(dir, 'x', 'c.json'), join(dir, 'x'), { env }).config
        .stateDir,
    ).toBe(join(dir, 'x', '.snotra'));
    const home = parseConfig(
      '{"stateDir":"~/state","workspace":{"roots":[{"id":"w","path":"~/x","access":"read"}]}}',
      join(dir, 'x', 'c.json'),
      join(dir, 'x'),
      { env },
    ).config;
    expect(home.stateDir).toBe(join(dir, 'state'));
    expect(home.workspace.roots[0]?.path).toBe(join(dir, 'x'));
    expect(() =>
      parseConfig('{"stateDir":"~other/state"}', join(dir, 'x', 'c.json'), join(dir, 'x'), { env }),
    ).toThrow(/stateDir: only "~" and "~\/\.\.\." are expanded, got "~other\/state"/);
  });

  it('ships a JSON Schema generated from the zod schema (run `npm run schema` after changing it)', () => {
    const shipped = JSON.parse(
      readFileSync(new URL('../../schema/snotra.config.schema.json', import.meta.url), 'utf8'),
    );
    expect(shipped).toEqual(JSON.parse(JSON.stringify(configJsonSchema())));
  });
});
