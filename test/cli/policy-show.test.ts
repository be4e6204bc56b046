import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HARDLINE_RULES } from '../../policy/shell/index.ts';
import { openStore, Redactor, resolveDbPath } from '../../store/index.ts';

const BIN = new URL('../../bin/snotra.js', import.meta.url).pathname;
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-show-')));
const configFile = join(dir, 'snotra.config.json');
const stateDir = join(dir, 'state');

function snotra(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    input,
    encoding: 'utf8',
    cwd: dir,
    timeout: 60_000,
    killSignal: 'SIGKILL',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  mkdirSync(join(dir, 'project', 'migrations'), { recursive: true });
  writeFileSync(
    configFile,
    JSON.stringify({
      stateDir: 'state',
      workspace: {
        roots: [
          { id: 'project', path: 'project', access: 'read-write', primary: true, deny: ['secrets/**'] },
        ],
      },
      agents: {
        assistant: {
          mode: 'allow',
          rules: [
            { id: 'no-push', command: 'git push', effect: 'deny' },
            { id: 'ask-migrations', path: 'migrations/**', access: 'write', effect: 'ask' },
            { id: 'no-example', target: '*.example.com', effect: 'deny' },
          ],
        },
        bot: { mode: 'ask', tools: ['read_file', 'http_request'] },
      },
      sensitivePaths: [{ id: 'extra.vault', kind: 'sensitive', patterns: ['~/vault'] }],
      surfaces: { scheduled: [{ id: 'nightly', agent: 'bot', cron: '0 3 * * *', message: 'go' }] },
    }),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('snotra policy show', () => {
  it('prints the effective policy per agent as text, without a state database', () => {
    const r = snotra(['policy', 'show', '--config', configFile]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = r.stdout;
    expect(out).toContain(`config: ${configFile}`);
    expect(out).toContain('agent assistant: mode allow, attended');
    expect(out).toContain('tools (every registered tool: the agent names no list):');
    expect(out).toMatch(/shell\s+exec allow {2}\[built-in\]/);
    expect(out).toContain(`no-push: deny command "git push"  [${configFile}: agents.assistant.rules[0]]`);
    expect(out).toContain(
      `ask-migrations: ask path "migrations/**" (write)  [${configFile}: agents.assistant.rules[1]]`,
    );
    expect(out).toContain('no-example: deny target "*.example.com"');
    expect(out).toContain('agent bot: mode ask, attended');
    expect(out).toMatch(
      /agent bot[^]*tools:\n {4}read_file\s+read allow {2}\[built-in\]\n {4}http_request\s+external allow/,
    );
    expect(out).toContain(`project: ${join(dir, 'project')}  read-write, primary  deny "secrets/**"`);
    expect(out).toContain('sensitive.ssh: ~/.ssh  [built-in]');
    expect(out).toContain(`sensitive.runtime-state: ${stateDir}  [runtime (state dir)]`);
    expect(out).toContain(`extra.vault: ~/vault  [${configFile}: sensitivePaths[0]]`);
    expect(out).toMatch(/never-writable paths \(\d+, denied in every mode for writes\):/);
    expect(out).toContain(
      `hardline rules (${HARDLINE_RULES.length}, denied in every mode): hardline.rm-recursive-root`,
    );
    expect(out).toContain('(no database in the state dir yet: no grants)');
    // Read-only: showing the policy creates no state.
    expect(existsSync(stateDir)).toBe(false);
  });

  it('--json prints one object, --agent narrows it to one agent', () => {
    const r = snotra(['policy', 'show', '--config', configFile, '--agent', 'bot', '--json']);
    expect(r.status).toBe(0);
    const p = JSON.parse(r.stdout);
    expect(Object.keys(p.agents)).toEqual(['bot']);
    expect(p.agents.bot).toMatchObject({ mode: 'ask', allTools: false, rules: [] });
    expect(p.agents.bot.tools.map((t: { name: string }) => t.name)).toEqual(['read_file', 'http_request']);
    expect(p.roots[0]).toMatchObject({ id: 'project', access: 'read-write', deny: ['secrets/**'] });
    expect(p.sensitivePaths).toContainEqual({
      id: 'extra.vault',
      kind: 'sensitive',
      patterns: ['~/vault'],
      from: `${configFile}: sensitivePaths[0]`,
    });
    expect(p.grants).toBeNull();
    const all = JSON.parse(snotra(['policy', 'show', '--config', configFile, '--json']).stdout);
    expect(all.agents.assistant.rules[0]).toEqual({
      id: 'no-push',
      command: 'git push',
      effect: 'deny',
      from: `${configFile}: agents.assistant.rules[0]`,
    });
  });

  it('lists the active grants of the state dir, opened read-only', () => {
    const store = openStore({ path: resolveDbPath({ stateDir }), redactor: new Redactor() });
    try {
      store.sessionApprovals.grant({
        id: 'se-1',
        sessionId: 'chat:1',
        tool: 'write_file',
        grantedBy: 'local:me',
      });
      const revoked = store.sessionApprovals.grant({
        sessionId: 'chat:1',
        tool: 'shell',
        target: 'ls',
        grantedBy: 'local:me',
      });
      store.sessionApprovals.revoke(revoked.id, { revokedBy: 'local:me' });
      store.standingApprovals.grant({
        id: 'sa-1',
        ownerTaskId: 'nightly',
        tool: 'http_request',
        target: 'https://api.example.org/',
        grantedBy: 'local:me',
      });
    } finally {
      store.close();
    }
    const before = readdirSync(stateDir).sort();
    const db = readFileSync(resolveDbPath({ stateDir }));
    const r = snotra(['policy', 'show', '--config', configFile]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/session se-1: write_file, any target, session chat:1, by local:me at \d{4}-/);
    expect(r.stdout).toContain(
      'standing sa-1: http_request, target "https://api.example.org/", task nightly (agent bot)',
    );
    expect(r.stdout).not.toContain('target "ls"');
    const p = JSON.parse(
      snotra(['policy', 'show', '--config', configFile, '--agent', 'assistant', '--json']).stdout,
    );
    expect(p.grants.session.map((g: { id: string }) => g.id)).toEqual(['se-1']);
    // The standing approval belongs to bot's scheduled task, not to assistant.
    expect(p.grants.standing).toEqual([]);
    // Nothing written: the database is byte for byte the same; only SQLite's own WAL companions
    // (which a reader of a WAL database maps) may appear.
    expect(readFileSync(resolveDbPath({ stateDir }))).toEqual(db);
    const added = readdirSync(stateDir).filter((f) => !before.includes(f));
    for (const f of added) expect(f).toMatch(/^snotra\.db-(shm|wal)$/);
  });

  it('--state-dir points at another state dir', () => {
    const other = join(dir, 'other-state');
    const p = JSON.parse(
      snotra(['policy', 'show', '--config', configFile, '--state-dir', other, '--json']).stdout,
    );
    expect(p.stateDir).toBe(other);
    expect(p.grants).toBeNull();
  });

  it('an unknown agent or flag is a clear error', () => {
    const r = snotra(['policy', 'show', '--config', configFile, '--agent', 'nobody']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('unknown agent "nobody"; the config defines: assistant, bot');
    const u = snotra(['policy', 'show', '--bogus']);
    expect(u.status).toBe(2);
    expect(u.stderr).toContain('usage: snotra policy show');
  });
});

describe('argument rules through snotra policy check', () => {
  const cases: [string, unknown, string, string][] = [
    ['shell', { command: 'sudo git -C project push origin' }, 'tool_rule_deny', 'no-push'],
    ['shell', { command: "sh -c 'FOO=1 command git push'" }, 'tool_rule_deny', 'no-push'],
    ['shell', { command: 'git status' }, 'mode_allow', 'mode.allow'],
    ['shell', { command: 'echo git push' }, 'mode_allow', 'mode.allow'],
    [
      'write_file',
      { path: 'migrations/../migrations/001.sql', content: 'x' },
      'tool_rule_ask',
      'ask-migrations',
    ],
    ['write_file', { path: 'src/a.sql', content: 'x' }, 'mode_allow', 'mode.allow'],
    ['read_file', { path: 'migrations/001.sql' }, 'mode_allow', 'mode.allow'],
    ['http_request', { url: 'HTTPS://API.EXAMPLE.COM/x', method: 'GET' }, 'tool_rule_deny', 'no-example'],
    ['http_request', { url: 'https://example.com.evil.net/', method: 'GET' }, 'mode_allow', 'mode.allow'],
    ['read_file', { path: 7 }, 'invalid_arguments', 'metadata.invalid-arguments'],
  ];
  let lines: { reason: string; rule: { id: string } }[] = [];
  beforeAll(() => {
    const input = cases.map(([tool, args]) => JSON.stringify({ tool, args })).join('\n');
    const r = snotra(['policy', 'check', '--config', configFile, '--stdin', '--json'], `${input}\n`);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    lines = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
  });
  cases.forEach(([tool, args, reason, rule], i) => {
    it(`${tool} ${JSON.stringify(args)} → ${reason}`, () => {
      expect({ reason: lines[i]?.reason, rule: lines[i]?.rule.id }).toEqual({ reason, rule });
    });
  });

  it('the text explanation names the rule and the detail, and the exit code is the decision', () => {
    const r = snotra([
      'policy',
      'check',
      '--config',
      configFile,
      '--tool',
      'shell',
      '--args',
      '{"command":"sudo git push"}',
    ]);
    expect(r.status).toBe(11);
    expect(r.stdout).toContain('by rule no-push [tool-rule]');
    expect(r.stdout).toContain('detail: the call matches command "git push"');
  });

  it('invalid arguments and a tool outside the agent’s tools say so in the text', () => {
    const input = [
      '{"tool":"read_file","args":{"path":7}}',
      '{"tool":"shell","args":{"command":"ls"},"agent":"bot"}',
    ];
    const r = snotra(['policy', 'check', '--config', configFile, '--stdin'], `${input.join('\n')}\n`);
    expect(r.stdout).toContain('detail: path: expected string, got number');
    expect(r.stdout).toContain('reason: tool_not_granted');
    expect(r.stdout).toContain('detail: "shell" is defined but not in this agent\'s tools');
  });
});
