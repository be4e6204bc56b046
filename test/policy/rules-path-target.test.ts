import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate } from '../../policy/evaluate.ts';
import { Decision } from '../../policy/decision.ts';
import { ToolRule } from '../../policy/rules.ts';
import { createWorkspace, type Workspace } from '../support/policy.ts';

let ws: Workspace;
let linked: Workspace;
beforeAll(async () => {
  ws = await createWorkspace();
  mkdirSync(join(ws.project, 'migrations', 'v1'), { recursive: true });
  mkdirSync(join(ws.project, 'migrations-old'), { recursive: true });
  mkdirSync(join(ws.project, 'src', 'migrations'), { recursive: true });
  writeFileSync(join(ws.project, 'migrations', 'v1', '001.sql'), 'select 1;\n');
  symlinkSync(join(ws.project, 'migrations'), join(ws.project, 'm'));
  symlinkSync('migrations/v1/001.sql', join(ws.project, 'first.sql'));
  // A workspace whose root is configured through a symlink: targets are canonical, the rule
  // must still find the root.
  linked = await createWorkspace(
    { workspace: { roots: [{ id: 'project', path: 'via-link', access: 'read-write', primary: true }] } },
    (dir, project) => {
      mkdirSync(join(project, 'migrations'), { recursive: true });
      symlinkSync(project, join(dir, 'via-link'));
    },
  );
});
afterAll(() => {
  ws.cleanup();
  linked.cleanup();
});

const NO_MIGRATION_WRITES: ToolRule[] = [
  { id: 'no-migration-writes', path: 'migrations/**', access: 'write', effect: 'deny' },
];

function call(tool: string, args: Record<string, unknown>, rules: ToolRule[], w = ws): Decision {
  return evaluate({ tool, args }, w.context({ mode: 'allow', rules }));
}
const write = (path: string, rules = NO_MIGRATION_WRITES, w = ws) =>
  call('write_file', { path, content: 'x' }, rules, w);

describe('path rules match resolved targets', () => {
  const denied = [
    'migrations/v1/002.sql',
    'migrations/new.sql',
    './migrations/new.sql',
    'src/../migrations/new.sql',
    'migrations/v1/../../migrations/x.sql',
    'm/v1/002.sql', // through a symlinked directory
    'first.sql', // a symlinked file
    'MIGRATIONS/x.sql', // case is ignored: stricter on case-insensitive disks
    'migrations/.hidden',
  ];
  for (const p of denied) {
    it(`a write to ${JSON.stringify(p)} is denied`, () => {
      const d = write(p);
      expect(d).toMatchObject({
        decision: 'deny',
        reason: 'tool_rule_deny',
        rule: { id: 'no-migration-writes', source: 'tool-rule' },
        step: 6,
        detail: 'the call matches path "migrations/**" (write)',
      });
    });
  }
  it('an absolute spelling of the same path is denied too', () => {
    expect(write(join(ws.project, 'migrations', 'a.sql')).reason).toBe('tool_rule_deny');
  });

  const allowed = ['migrations-old/x.sql', 'src/migrations/x.sql', 'migrationsx', 'README.md', 'src/m/x'];
  for (const p of allowed) {
    it(`the look-alike ${JSON.stringify(p)} is not matched`, () => {
      expect(write(p).decision).toBe('allow');
    });
  }

  it('access "write" leaves reads alone; without access the rule covers reads too', () => {
    expect(call('read_file', { path: 'migrations/v1/001.sql' }, NO_MIGRATION_WRITES).decision).toBe('allow');
    const any: ToolRule[] = [{ id: 'no-migrations', path: 'migrations', effect: 'ask' }];
    expect(call('read_file', { path: 'm/v1/001.sql' }, any)).toMatchObject({
      decision: 'approval-required',
      reason: 'tool_rule_ask',
      rule: { id: 'no-migrations' },
    });
    const reads: ToolRule[] = [
      { id: 'no-migration-reads', path: 'migrations/**', access: 'read', effect: 'deny' },
    ];
    expect(call('read_file', { path: 'migrations/v1/001.sql' }, reads).reason).toBe('tool_rule_deny');
    expect(write('migrations/a.sql', reads).decision).toBe('allow');
  });

  it('files a shell command writes are write targets; its cwd is a read target', () => {
    const shell = (command: string, cwd?: string, rules = NO_MIGRATION_WRITES) =>
      call('shell', cwd === undefined ? { command } : { command, cwd }, rules);
    expect(shell('echo x > migrations/a.sql').reason).toBe('tool_rule_deny');
    expect(shell('sudo tee m/a.sql < /dev/null').reason).toBe('tool_rule_deny');
    expect(shell('cd src && cp a.ts ../migrations/').reason).toBe('tool_rule_deny');
    expect(shell('echo x > a.sql', 'migrations').reason).toBe('tool_rule_deny');
    expect(shell('echo x > migrations-old/a.sql').decision).toBe('allow');
    expect(shell('ls', 'migrations').decision).toBe('allow');
    const anyAccess: ToolRule[] = [{ id: 'stay-out', path: 'migrations', effect: 'deny' }];
    expect(shell('ls', 'migrations', anyAccess).reason).toBe('tool_rule_deny');
  });

  it('a root configured through a symlink still anchors the glob', () => {
    expect(write('migrations/a.sql', NO_MIGRATION_WRITES, linked).reason).toBe('tool_rule_deny');
    expect(write(join(linked.project, 'migrations', 'a.sql'), NO_MIGRATION_WRITES, linked).reason).toBe(
      'tool_rule_deny',
    );
    expect(write('src.sql', NO_MIGRATION_WRITES, linked).decision).toBe('allow');
  });

  it('a path rule never lifts a root denial: outside the roots stays outside_roots', () => {
    expect(write('../elsewhere/migrations/x.sql').reason).toBe('outside_roots');
  });
});

describe('target rules match an external tool’s target, and a URL by its host', () => {
  const NO_EXAMPLE: ToolRule[] = [{ id: 'no-example', target: '*.example.com', effect: 'deny' }];
  const http = (url: string, rules = NO_EXAMPLE) => call('http_request', { url, method: 'GET' }, rules);
  const denied = [
    'https://api.example.com/v1',
    'HTTPS://API.EXAMPLE.COM./',
    'https://user:pw@api.example.com/',
    'https://%61pi.example.com/',
    'http://a.b.example.com:8080/x?y=1',
  ];
  for (const url of denied) {
    it(`denies ${url}`, () => {
      const d = http(url);
      expect(d).toMatchObject({ decision: 'deny', reason: 'tool_rule_deny', rule: { id: 'no-example' } });
      expect(d.detail).toBe('the call matches target "*.example.com"');
    });
  }
  const allowed = [
    'https://example.com.evil.net/',
    'https://evilexample.com/',
    'https://api.example.com@evil.net/',
    'https://example.org/api.example.com',
  ];
  for (const url of allowed) {
    it(`does not match the look-alike ${url}`, () => {
      expect(http(url).decision).toBe('allow');
    });
  }

  it('a bare host rule matches the URL host exactly, IP spellings normalized', () => {
    const rules: ToolRule[] = [{ id: 'no-local', target: '127.0.0.1', effect: 'deny' }];
    expect(http('http://127.0.0.1:9000/', rules).reason).toBe('tool_rule_deny');
    expect(http('http://2130706433/', rules).reason).toBe('tool_rule_deny');
    expect(http('http://127.0.0.10/', rules).decision).toBe('allow');
  });

  it('a URL glob matches the normalized URL', () => {
    const rules: ToolRule[] = [{ id: 'no-v1', target: 'https://api.example.com/v1/*', effect: 'deny' }];
    expect(http('HTTPS://API.example.com/v1/users', rules).reason).toBe('tool_rule_deny');
    expect(http('https://api.example.com/v2/users', rules).decision).toBe('allow');
  });

  it('a URL that does not parse may match: the deny rule asks', () => {
    expect(http('https://exa mple.com/')).toMatchObject({
      decision: 'approval-required',
      reason: 'tool_rule_ask',
      rule: { id: 'no-example' },
    });
  });

  it('channels match as written, case ignored; other tools have no target to match', () => {
    const rules: ToolRule[] = [{ id: 'ask-ops', target: '#ops', effect: 'ask' }];
    const send = (channel: string) => call('send_message', { channel, text: 'hi' }, rules);
    expect(send('#ops')).toMatchObject({ decision: 'approval-required', reason: 'tool_rule_ask' });
    expect(send('#OPS').reason).toBe('tool_rule_ask');
    expect(send('#ops-dev').decision).toBe('allow');
    expect(call('read_file', { path: 'README.md' }, rules).decision).toBe('allow');
  });

  it('matchers of one rule are and-ed', () => {
    const rules: ToolRule[] = [
      { id: 'no-post', tool: 'http_request', target: '*.example.com', effect: 'deny' },
    ];
    expect(http('https://api.example.com/', rules).reason).toBe('tool_rule_deny');
    expect(call('send_message', { channel: 'x.example.com', text: 'hi' }, rules).decision).toBe('allow');
  });
});

describe('the rule schema', () => {
  const bad: [unknown, RegExp][] = [
    [{ id: 'r', command: 'git push', effect: 'allow' }, /effect/],
    [{ id: 'r', command: 'git; rm -rf x', effect: 'deny' }, /program or command prefix/],
    [{ id: 'r', command: '', effect: 'deny' }, /program or command prefix/],
    [{ id: 'r', command: 'git push', tool: 'read_file', effect: 'deny' }, /matches shell commands/],
    [{ id: 'r', access: 'write', effect: 'deny', tool: 'x' }, /only goes with/],
    [{ id: 'r', effect: 'deny' }, /at least one of/],
    [{ id: 'r', path: 'x', effect: 'deny', extra: 1 }, /Unrecognized key/],
  ];
  for (const [rule, message] of bad) {
    it(`rejects ${JSON.stringify(rule)}`, () => {
      const r = ToolRule.safeParse(rule);
      expect(r.success).toBe(false);
      expect(JSON.stringify(r.error?.issues)).toMatch(message);
    });
  }
  it('accepts the new matchers beside the old ones', () => {
    for (const rule of [
      { id: 'a', command: 'git push', effect: 'deny' },
      { id: 'b', command: 'npm', tool: 'shell', effect: 'ask' },
      { id: 'c', path: 'migrations/**', access: 'write', effect: 'deny' },
      { id: 'd', target: '*.example.com', risk: 'external', effect: 'ask' },
      { id: 'e', tool: 'mcp:*', effect: 'ask' },
    ]) {
      expect(ToolRule.safeParse(rule).success, JSON.stringify(rule)).toBe(true);
    }
  });
});

describe('a long rule pattern keeps the Decision valid', () => {
  it('the detail is cut at 400 characters', () => {
    const target = `${'a'.repeat(450)}*`;
    const d = call('send_message', { channel: 'a'.repeat(500), text: 'hi' }, [
      { id: 'long', target, effect: 'deny' },
    ]);
    expect(d.reason).toBe('tool_rule_deny');
    expect(d.detail?.length).toBe(400);
    expect(Decision.safeParse(d).success).toBe(true);
  });
});
