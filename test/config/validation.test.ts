import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../runtime/config/errors.ts';
import { loadConfig, resolveConfig } from '../../runtime/config/load.ts';
import { runCliInProcess } from '../support/cli-in-process.ts';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-validate-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));

let n = 0;
/** A fresh folder with a `project` root, a file `notes.txt` and the config given written into it. */
function workspace(config: unknown): { dir: string; file: string; stateDir: string } {
  const dir = join(base, `w${++n}`);
  mkdirSync(join(dir, 'project'), { recursive: true });
  writeFileSync(join(dir, 'notes.txt'), 'a file, not a folder\n');
  const file = join(dir, 'snotra.config.json');
  writeFileSync(file, typeof config === 'string' ? config : JSON.stringify(config));
  return { dir, file, stateDir: join(dir, 'state') };
}

const root = { id: 'project', path: 'project', access: 'read-write' };

async function cli(argv: string[], cwd: string): Promise<{ code: number; stderr: string; stdout: string }> {
  const r = await runCliInProcess(argv, cwd);
  return { code: r.code, stdout: r.out, stderr: r.err };
}

/**
 * Every command that reads config refuses it with exit 1, the error names the file and the JSON
 * path, and nothing appears in the state dir (configured or default).
 */
async function expectRefused(config: unknown, path: string, detail: RegExp): Promise<string> {
  const ws = workspace(config);
  const before = readdirSync(ws.dir).sort();
  const stateHome = process.env.XDG_STATE_HOME as string;
  const homeBefore = existsSync(stateHome) ? readdirSync(stateHome).sort() : [];
  let problems: readonly string[] = [];
  try {
    loadConfig(ws.file);
    throw new Error('expected a ConfigError');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    problems = (err as ConfigError).problems;
  }
  const line = problems.find((p) => p.startsWith(`${path}: `));
  expect(line, `a problem at ${path} in ${JSON.stringify(problems)}`).toBeDefined();
  expect(line).toMatch(detail);
  for (const argv of [
    ['start', '--config', ws.file],
    ['policy', 'check', '--config', ws.file, '--tool', 'read_file', '--args', '{"path":"x"}'],
    ['runs', 'list', '--config', ws.file],
    ['inbox', 'list', '--config', ws.file],
  ]) {
    const r = await cli(argv, ws.dir);
    expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`${ws.file}: invalid config`);
    expect(r.stderr).toContain(`${path}: `);
  }
  expect(readdirSync(ws.dir).sort()).toEqual(before);
  expect(existsSync(ws.stateDir)).toBe(false);
  expect(existsSync(stateHome) ? readdirSync(stateHome).sort() : []).toEqual(homeBefore);
  return line as string;
}

describe('config validation at load (start, policy check, runs, inbox)', () => {
  it('refuses a root that does not exist', async () => {
    await expectRefused(
      { stateDir: 'state', workspace: { roots: [{ ...root, path: 'nowhere' }] } },
      'workspace.roots[0].path',
      /nowhere" does not exist$/,
    );
  });

  it('refuses a root that is a file', async () => {
    await expectRefused(
      { stateDir: 'state', workspace: { roots: [{ ...root, path: 'notes.txt' }] } },
      'workspace.roots[0].path',
      /notes\.txt" is a file, not a directory$/,
    );
  });

  it('refuses a NUL byte or a control character in any path', async () => {
    await expectRefused(
      { stateDir: 'state', workspace: { roots: [{ ...root, path: 'proj\u0000ect' }] } },
      'workspace.roots[0].path',
      /must not contain NUL or other control characters/,
    );
    await expectRefused(
      { stateDir: 'st\u0000ate', workspace: { roots: [root] } },
      'stateDir',
      /must not contain NUL or other control characters, got "st\\u0000ate"$/,
    );
    await expectRefused(
      {
        stateDir: 'state',
        workspace: { roots: [root] },
        agents: { a: { model: { provider: 'scripted', script: 'steps\n.json' } } },
      },
      'agents.a.model.script',
      /control characters/,
    );
    await expectRefused(
      { stateDir: 'state', workspace: { roots: [{ ...root, deny: ['secret\u001b[0m/**'] }] } },
      'workspace.roots[0].deny[0]',
      /control characters/,
    );
    await expectRefused(
      { stateDir: 'state', workspace: { roots: [root] }, mcp: { servers: { s: { command: 'srv\u0085' } } } },
      'mcp.servers.s.command',
      /control characters/,
    );
  });

  it('refuses a workspace whose folder name holds a control character (embedded defaults too)', () => {
    const odd = join(base, 'odd\nname');
    mkdirSync(odd, { recursive: true });
    expect(() => resolveConfig(undefined, odd)).toThrow(
      /workspace\.roots\[0\]\.path: resolves to ".*odd\\nname", which holds control characters/,
    );
  });

  it('refuses a rule naming a tool that does not exist, with a did-you-mean', async () => {
    const line = await expectRefused(
      {
        stateDir: 'state',
        workspace: { roots: [root] },
        agents: { a: { mode: 'allow', rules: [{ id: 'no-shell', tool: 'shel', effect: 'deny' }] } },
      },
      'agents.a.rules[0].tool',
      /unknown tool "shel"; did you mean "shell"\?$/,
    );
    expect(line).toBe('agents.a.rules[0].tool: unknown tool "shel"; did you mean "shell"?');
    await expectRefused(
      {
        stateDir: 'state',
        workspace: { roots: [root] },
        agents: { a: { rules: [{ id: 'x', tool: 'frobnicate', effect: 'deny' }] } },
      },
      'agents.a.rules[0].tool',
      /^agents\.a\.rules\[0\]\.tool: unknown tool "frobnicate"$/,
    );
    await expectRefused(
      {
        stateDir: 'state',
        workspace: { roots: [root] },
        mcp: { servers: { github: { command: 'gh-mcp' } } },
        agents: { a: { rules: [{ id: 'x', tool: 'mcp:githb:*', effect: 'deny' }] } },
      },
      'agents.a.rules[0].tool',
      /unknown MCP server "githb" in "mcp:githb:\*"; did you mean "github"\?/,
    );
    await expectRefused(
      {
        stateDir: 'state',
        workspace: { roots: [root] },
        mcp: { servers: { github: { command: 'gh-mcp' } } },
        agents: { a: { rules: [{ id: 'x', tool: 'mcp:github', effect: 'deny' }] } },
      },
      'agents.a.rules[0].tool',
      /"mcp:github" is not a tool name: MCP tools are named "mcp:<server>:<tool>"$/,
    );
    await expectRefused(
      {
        stateDir: 'state',
        workspace: { roots: [root] },
        agents: { a: { rules: [{ id: 'x', tool: 'mcp:slack:post', effect: 'deny' }] } },
      },
      'agents.a.rules[0].tool',
      /unknown MCP server "slack" in "mcp:slack:post" \(servers are configured under mcp\.servers\)$/,
    );
    await expectRefused(
      {
        stateDir: 'state',
        workspace: { roots: [root] },
        agents: { a: { rules: [{ id: 'x', tool: 'sehll*', effect: 'deny' }] } },
      },
      'agents.a.rules[0].tool',
      /no tool matches "sehll\*"/,
    );
    await expectRefused(
      {
        stateDir: 'state',
        workspace: { roots: [root] },
        agents: { a: { tools: ['read_file', 'write_fiel'] } },
      },
      'agents.a.tools[1]',
      /unknown tool "write_fiel"; did you mean "write_file"\?$/,
    );
  });

  it('accepts rules naming built-ins, config tools, MCP tools of configured servers and matching patterns', () => {
    const ws = workspace({
      stateDir: 'state',
      workspace: { roots: [root] },
      tools: { deploy: { risk: 'external', approvalDefault: 'ask', source: 'extension' } },
      mcp: { servers: { github: { command: 'gh-mcp', tools: { create_issue: {} } } } },
      agents: {
        a: {
          tools: ['shell', 'deploy', 'mcp:github:create_issue'],
          rules: [
            { id: 'r1', tool: 'shell', effect: 'ask' },
            { id: 'r2', tool: 'deploy', effect: 'deny' },
            { id: 'r3', tool: 'mcp:github:*', effect: 'ask' },
            { id: 'r4', tool: 'mcp:github:delete_repo', effect: 'deny' },
            { id: 'r5', tool: 'read_*', effect: 'ask' },
            { id: 'r6', tool: 'mcp:*', effect: 'ask' },
            { id: 'r8', tool: 'mcp:git*', effect: 'ask' },
            { id: 'r7', risk: 'exec', effect: 'deny' },
          ],
        },
      },
    });
    expect(loadConfig(ws.file).config.agents.a?.rules).toHaveLength(8);
    // A defensive "no MCP at all" rule needs no server.
    const none = workspace({
      stateDir: 'state',
      workspace: { roots: [root] },
      agents: { a: { rules: [{ id: 'no-mcp', tool: 'mcp:*', effect: 'deny' }] } },
    });
    expect(loadConfig(none.file).config.agents.a?.rules).toHaveLength(1);
    expect(existsSync(ws.stateDir)).toBe(false);
  });

  it('refuses duplicate ids of roots, scheduled tasks, goal loops, platforms and rules', async () => {
    const common = { stateDir: 'state', workspace: { roots: [root] } };
    await expectRefused(
      {
        ...common,
        surfaces: {
          scheduled: [
            { id: 'daily', agent: 'assistant', cron: '0 9 * * *', message: 'a' },
            { id: 'daily', agent: 'assistant', cron: '0 10 * * *', message: 'b' },
          ],
        },
      },
      'surfaces.scheduled[1].id',
      /duplicate scheduled task id "daily"$/,
    );
    await expectRefused(
      {
        ...common,
        surfaces: {
          goalLoops: [
            { id: 'g', agent: 'assistant', objective: 'a' },
            { id: 'g', agent: 'assistant', objective: 'b' },
          ],
        },
      },
      'surfaces.goalLoops[1].id',
      /duplicate goal loop id "g"$/,
    );
    await expectRefused(
      {
        ...common,
        surfaces: {
          platforms: [
            { id: 'tg', kind: 'telegram', agent: 'assistant', token: { secret: 'bot' } },
            { id: 'tg', kind: 'telegram', agent: 'assistant', token: { secret: 'bot' } },
          ],
        },
      },
      'surfaces.platforms[1].id',
      /duplicate platform id "tg"$/,
    );
    mkdirSync(join(base, 'other'), { recursive: true });
    await expectRefused(
      {
        stateDir: 'state',
        workspace: {
          roots: [
            { ...root, primary: true },
            { ...root, path: join(base, 'other'), primary: false },
          ],
        },
      },
      'workspace.roots[1].id',
      /duplicate root id "project"$/,
    );
    await expectRefused(
      {
        ...common,
        agents: {
          a: {
            rules: [
              { id: 'r', tool: 'shell', effect: 'ask' },
              { id: 'r', tool: 'shell', effect: 'deny' },
            ],
          },
        },
      },
      'agents.a.rules[1].id',
      /duplicate rule id "r"$/,
    );
  });

  it('refuses a key given twice in one object (JSON.parse would keep only the last)', async () => {
    const text = `{"stateDir":"state","workspace":{"roots":[{"id":"project","path":"project","access":"read-write"}]},
  "agents":{"a":{"mode":"ask","rules":[{"id":"no-shell","tool":"shell","effect":"deny"}],"rules":[]}}}`;
    await expectRefused(text, 'agents.a.rules', /duplicate key "rules" \(line 2, column \d+\)/);
  });

  it('refuses an invalid cron pattern at load, so policy check refuses it too', async () => {
    await expectRefused(
      {
        stateDir: 'state',
        workspace: { roots: [root] },
        surfaces: { scheduled: [{ id: 't', agent: 'assistant', cron: '61 * * * *', message: 'x' }] },
      },
      'surfaces.scheduled[0].cron',
      /invalid cron pattern "61 \* \* \* \*"/,
    );
    await expectRefused(
      {
        stateDir: 'state',
        workspace: { roots: [root] },
        surfaces: { scheduled: [{ id: 't', agent: 'asistant', cron: '0 9 * * *', message: 'x' }] },
      },
      'surfaces.scheduled[0].agent',
      /unknown agent "asistant"; did you mean "assistant"\?$/,
    );
  });

  it('refuses a stateDir that is a file, or lies under a file, naming the field', async () => {
    await expectRefused(
      { stateDir: 'notes.txt', workspace: { roots: [root] } },
      'stateDir',
      /notes\.txt" is a file, not a directory$/,
    );
    await expectRefused(
      { stateDir: 'notes.txt/state', workspace: { roots: [root] } },
      'stateDir',
      /cannot be created: ".*notes\.txt" is not a directory$/,
    );
  });

  it('gives a JSON syntax error by line and column, never a character offset', async () => {
    await expectRefused(
      '{\n  "stateDir": "state",\n  "workspace": { "roots": [] },,\n}',
      'not valid JSON',
      /^not valid JSON: line 3, column 32: expected a double-quoted property name, found ","$/,
    );
    await expectRefused(
      '{"stateDir": "state"',
      'not valid JSON',
      /line 1, column 21: expected "," or "}", found the end of the file$/,
    );
    await expectRefused('{"stateDir": tru}', 'not valid JSON', /line 1, column 14: expected a value/);
  });

  it('refuses an approvals.ttlMs that is not a positive integer and accepts one that is', async () => {
    await expectRefused(
      { stateDir: 'state', workspace: { roots: [root] }, approvals: { ttlMs: -5 } },
      'approvals.ttlMs',
      /expected number to be >0|too small/i,
    );
    const ws = workspace({ stateDir: 'state', workspace: { roots: [root] }, approvals: { ttlMs: 60_000 } });
    expect(loadConfig(ws.file).config.approvals.ttlMs).toBe(60_000);
  });
});
