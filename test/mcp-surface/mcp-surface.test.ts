import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configDir, until } from '../sidecar/client.ts';
import { eventually } from '../support/runtime.ts';
import { BIN, startSnotra, stopProcess } from '../support/snotra-process.ts';
import { connectMcp, type McpConnection } from './client.ts';

const STRAY = new URL('./fixtures/stray-print.mjs', import.meta.url).pathname;

function snotra(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    timeout: 30_000,
    killSignal: 'SIGKILL',
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

let dir: string;
let config: string;
let stateDir: string;
let mcp: McpConnection;

beforeAll(async () => {
  const fireAt = new Date(Date.now() + 1500).toISOString().replace(/\.\d+Z$/, '');
  dir = configDir(
    {
      agents: {
        writer: { mode: 'ask', model: { provider: 'scripted', script: 'writer.json' } },
        greeter: { mode: 'ask', model: { provider: 'scripted', script: 'greeter.json' } },
        nightly: { mode: 'ask', model: { provider: 'scripted', script: 'greeter.json' } },
      },
      // A run of another surface in the same runtime: the MCP tools must not show it.
      surfaces: {
        scheduled: [{ id: 'n1', agent: 'nightly', cron: fireAt, message: 'hi', missed: 'run-once' }],
      },
    },
    {
      writer: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'write_file', args: { path: 'notes.txt', content: 'secret-plan' } }],
          },
        },
        {
          expect: { kind: 'tool.result', tool: 'write_file' },
          respond: { kind: 'final', text: 'notes written' },
        },
      ],
      greeter: [{ respond: { kind: 'final', text: 'hello from snotra' } }],
    },
  );
  config = join(dir, 'snotra.config.json');
  stateDir = join(dir, 'state');
  mcp = await connectMcp(['--config', config]);
}, 90_000);

afterAll(async () => {
  await mcp?.close().catch(() => {});
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('snotra mcp driven by the SDK client over stdio', () => {
  it('offers exactly run_task, get_run and list_inbox: nothing that decides, approves, grants or changes roots or modes', async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['get_run', 'list_inbox', 'run_task']);
    for (const t of tools) expect(t.name).not.toMatch(/decid|approv|deny|grant|revoke|root|mode|polic/i);
    expect(tools.find((t) => t.name === 'get_run')?.annotations?.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === 'list_inbox')?.annotations?.readOnlyHint).toBe(true);
  });

  it('a tools/call with a made-up name (decide, approve, inbox_approve, set_mode) is a protocol error, and the server goes on', async () => {
    for (const name of ['decide', 'approve', 'inbox_approve', 'set_mode', 'grant', 'RUN_TASK', 'run_task ']) {
      await expect(mcp.client.callTool({ name, arguments: { id: 'x' } }), name).rejects.toThrow(/not found/i);
    }
    expect((await mcp.client.listTools()).tools).toHaveLength(3);
  });

  it('bad input is an MCP error naming the field, never a crash: wrong types, extra keys, unknown agent or run', async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['run_task', { agent: 7, text: 'x' }, /agent/],
      ['run_task', { agent: 'writer' }, /text/],
      ['run_task', { agent: 'writer', text: '' }, /text/],
      ['run_task', { agent: '../etc', text: 'x' }, /agent/],
      ['run_task', { agent: 'writer', text: 'x', waitMs: -1 }, /waitMs/],
      ['run_task', { agent: 'writer', text: 'x', mode: 'allow' }, /mode|unrecognized/i],
      ['run_task', { agent: 'nobody', text: 'x' }, /unknown_agent.*nobody/],
      ['get_run', {}, /runId/],
      ['get_run', { runId: 'writer:does-not-exist' }, /unknown_run/],
      ['list_inbox', { all: true }, /unrecognized|all/i],
    ];
    for (const [name, args, message] of cases) {
      const r = await mcp.call(name, args);
      expect(r.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
      expect(r.text, `${name} ${JSON.stringify(args)}`).toMatch(message);
    }
    const ok = await mcp.call('run_task', { agent: 'greeter', text: 'say hello' });
    expect(ok.isError).toBe(false);
    expect(ok.value).toMatchObject({
      status: 'completed',
      outcome: { status: 'completed', text: 'hello from snotra' },
    });
  });

  it('run_task → parked approval in the Inbox → `snotra inbox approve` from the CLI → get_run shows completion, the write happened once', async () => {
    const started = await mcp.call('run_task', { agent: 'writer', text: 'write the notes' });
    expect(started.isError).toBe(false);
    const runId = started.value.runId as string;
    expect(runId).toMatch(/^writer:/);
    expect(started.value).toMatchObject({ status: 'waiting_for_approval', outcome: null });
    const pending = started.value.pendingApprovals as { id: string; tool: string }[];
    expect(pending).toHaveLength(1);
    // By id and tool only: the arguments (and what they contain) stay with the human surfaces.
    expect(Object.keys(pending[0] as object).sort()).toEqual(['id', 'tool']);
    expect(pending[0]?.tool).toBe('write_file');
    expect(JSON.stringify(started)).not.toContain('secret-plan');
    expect(existsSync(join(dir, 'project', 'notes.txt'))).toBe(false);

    const inbox = await mcp.call('list_inbox', {});
    const listed = inbox.value.approvals as { id: string; tool: string; runId: string }[];
    expect(listed.map((a) => a.id)).toEqual([pending[0]?.id]);
    expect(listed[0]).toMatchObject({ tool: 'write_file', runId, risk: 'write-local' });
    expect(JSON.stringify(listed)).not.toContain('secret-plan');

    const cli = snotra(['inbox', 'list', '--state-dir', stateDir, '--json']);
    expect(cli.stdout).toContain(pending[0]?.id);
    const approve = snotra(['inbox', 'approve', pending[0]?.id as string, '--state-dir', stateDir, '--json']);
    expect(approve.status).toBe(0);
    expect(JSON.parse(approve.stdout)).toMatchObject({ status: 'approved', runtimeNotified: true });

    const final = await until(
      async () => {
        const r = await mcp.call('get_run', { runId });
        return r.value.status === 'completed' ? r.value : null;
      },
      20_000,
      'get_run to show the run completed',
    );
    expect(final).toMatchObject({
      runId,
      status: 'completed',
      outcome: { status: 'completed', text: 'notes written' },
      pendingApprovals: [],
    });
    expect(readFileSync(join(dir, 'project', 'notes.txt'), 'utf8')).toBe('secret-plan');
    const audit = snotra(['audit', '--state-dir', stateDir, '--run', runId, '--json']);
    const kinds = audit.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; surface?: string });
    expect(kinds.filter((e) => e.kind === 'started')).toHaveLength(1);
    expect(kinds.filter((e) => e.kind === 'completed')).toHaveLength(1);
    expect((await mcp.call('list_inbox', {})).value.approvals).toEqual([]);
  }, 60_000);

  it('shows only runs started through MCP: a scheduled run of the same runtime is unknown to get_run', async () => {
    const scheduled = await eventually(
      () => {
        const r = snotra(['runs', 'list', '--state-dir', stateDir, '--json']);
        return r.stdout
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { runId: string; surface: string })
          .find((x) => x.surface === 'scheduled');
      },
      20_000,
      'the scheduled run',
    );
    const r = await mcp.call('get_run', { runId: scheduled.runId });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('unknown_run');
  });

  it('waitMs 0 returns the run id at once; the run goes on and get_run finds it', async () => {
    const r = await mcp.call('run_task', { agent: 'greeter', text: 'quick', waitMs: 0 });
    expect(r.isError).toBe(false);
    expect(['queued', 'running', 'completed']).toContain(r.value.status);
    const runId = r.value.runId as string;
    const seen = await until(
      async () => {
        const x = await mcp.call('get_run', { runId });
        return x.value.status === 'completed' ? x.value : null;
      },
      20_000,
      'the run to complete',
    );
    expect(seen).toMatchObject({ runId, outcome: { text: 'hello from snotra' } });
  });
});

describe('snotra mcp process', () => {
  it('writes nothing but JSON-RPC on stdout: logs, the ready line and stray prints of any module go to stderr', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'mcp', '--config', config, '--state-dir', join(dir, 'state-raw')],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, TZ: 'UTC', NODE_OPTIONS: `--import ${STRAY}` },
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (err += String(d)));
    const exited = new Promise((r) => child.once('exit', (code) => r(code)));
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    await eventually(() => out.includes('"id":1'), 30_000, 'the initialize answer');
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'run_task', arguments: { agent: 'greeter', text: 'hi' } },
    });
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'approve', arguments: {} } });
    await eventually(() => out.includes('"id":2') && out.includes('"id":3'), 30_000, 'both answers');
    await eventually(() => err.includes('"event":"ready"'), 10_000, 'the ready line on stderr');
    child.kill('SIGUSR2');
    await eventually(() => err.includes('STRAY-STDOUT-WRITE'), 10_000, 'the stray prints on stderr');
    child.stdin.end();
    expect(await exited).toBe(0);
    const lines = out.split('\n').filter((l) => l !== '');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const l of lines) expect((JSON.parse(l) as { jsonrpc: string }).jsonrpc).toBe('2.0');
    expect(out).not.toContain('STRAY');
    expect(err).toContain('STRAY-CONSOLE-LOG');
    expect(err).toContain('"msg":"run started"');
    expect(err).toContain('"event":"ready"');
    expect(JSON.parse(lines.find((l) => l.includes('"id":3')) as string)).toMatchObject({
      error: { code: -32602 },
    });
  }, 60_000);

  it('on a state dir a running `snotra start` holds, it exits 1 naming the holder’s pid and the fix (--state-dir); with its own --state-dir it serves', async () => {
    const other = configDir(
      { agents: { greeter: { mode: 'ask', model: { provider: 'scripted', script: 'g.json' } } } },
      {
        g: [{ respond: { kind: 'final', text: 'hi' } }],
      },
    );
    const cfg = join(other, 'snotra.config.json');
    const start = startSnotra(['start', '--config', cfg]);
    try {
      await start.ready(30_000);
      const r = spawnSync(process.execPath, [BIN, 'mcp', '--config', cfg], {
        encoding: 'utf8',
        input: '',
        timeout: 30_000,
        killSignal: 'SIGKILL',
      });
      expect(r.status).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('is in use by another Snotra runtime');
      expect(r.stderr).toContain(`pid ${start.pid}`);
      expect(r.stderr).toContain('--state-dir');
      const own = await connectMcp(['--config', cfg, '--state-dir', join(other, 'mcp-state')]);
      try {
        const x = await own.call('run_task', { agent: 'greeter', text: 'hi' });
        expect(x.value).toMatchObject({ status: 'completed' });
      } finally {
        await own.close();
      }
    } finally {
      await stopProcess(start);
      rmSync(other, { recursive: true, force: true });
    }
  }, 90_000);

  it('bad flags and configs fail before serving, on stderr only (stdout stays the protocol’s)', () => {
    const cases: [string[], number, RegExp][] = [
      [
        ['mcp', '--wait-ms', 'soon', '--config', config],
        2,
        /--wait-ms: expected a whole number of ms from 0 to 600000, got "soon"/,
      ],
      [['mcp', '--wait-ms', '600001', '--config', config], 2, /--wait-ms/],
      [['mcp', '--wait-mss', '5', '--config', config], 2, /did you mean "--wait-ms"/],
      [['mcp', '--config', join(dir, 'missing.json')], 1, /missing\.json: invalid config\s+file not found/],
      [['mcp', '--log-level', 'loud', '--config', config], 2, /--log-level/],
    ];
    for (const [args, status, message] of cases) {
      const r = spawnSync(process.execPath, [BIN, ...args], {
        encoding: 'utf8',
        input: '',
        timeout: 30_000,
        killSignal: 'SIGKILL',
      });
      expect(r.status, args.join(' ')).toBe(status);
      expect(r.stdout, args.join(' ')).toBe('');
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
  });

  it('closing the client ends the server: exit, the state dir is free again', async () => {
    const c = await connectMcp(['--config', config, '--state-dir', join(dir, 'state-close')]);
    expect(existsSync(join(dir, 'state-close', 'runtime.lock.owner'))).toBe(true);
    await c.close();
    expect(existsSync(join(dir, 'state-close', 'runtime.lock.owner'))).toBe(false);
    expect(existsSync(join(dir, 'state-close', 'control.sock'))).toBe(false);
  }, 60_000);
});
