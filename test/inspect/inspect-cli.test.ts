import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { inspectCommand } from '../../surfaces/cli/inspect.ts';
import { OutputClosedError, type CliIo } from '../../surfaces/cli/io.ts';
import { call, configDir, until } from '../sidecar/client.ts';
import { BIN, startSnotra, stopProcess, type StartedProcess } from '../support/snotra-process.ts';

/** `snotra inspect ARGS` as a real child process. */
function inspect(args: string[]) {
  const child = spawn(process.execPath, [BIN, 'inspect', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TZ: 'UTC' },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (err += String(d)));
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  return { child, exited, stdout: () => out, stderr: () => err };
}

const TOKEN = randomBytes(32).toString('base64url');
const AUTH = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };
let dir: string;
let configPath: string;
let snotra: StartedProcess;
let port: number;

beforeAll(async () => {
  dir = configDir(
    { agents: { worker: { mode: 'ask', model: { provider: 'scripted', script: 'worker.json' } } } },
    { worker: [{ respond: { kind: 'final', text: 'hello' } }] },
  );
  configPath = join(dir, 'snotra.config.json');
  snotra = startSnotra(['start', '--config', configPath], { SNOTRA_SIDECAR_TOKEN: TOKEN });
  port = Number(new URL((await snotra.ready(60_000)).sidecar as string).port);
}, 90_000);

afterAll(async () => {
  if (snotra !== undefined) await stopProcess(snotra);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

async function chat(): Promise<string> {
  const a = await call(port, 'POST', '/v1/chat/worker/messages', { headers: AUTH, body: '{"text":"hi"}' });
  expect(a.status).toBe(202);
  return (a.json() as { runId: string }).runId;
}

describe('snotra inspect', () => {
  it('without a running runtime: exit 1 naming the state dir (JSON error under --json)', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'snotra-inspect-'));
    try {
      const text = inspect(['--state-dir', empty]);
      expect(await text.exited).toBe(1);
      expect(text.stderr()).toMatch(
        /^snotra inspect: no runtime is running on the state dir .+snotra start\n$/,
      );
      expect(text.stdout()).toBe('');
      const json = inspect(['--json', '--state-dir', empty]);
      expect(await json.exited).toBe(1);
      expect(JSON.parse(json.stdout())).toMatchObject({ error: { code: 'not_running' } });
      const bad = inspect(['--jsonn']);
      expect(await bad.exited).toBe(2);
      expect(bad.stderr()).toContain('--json');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  }, 60_000);

  it('prints the tree, then the tree again after each change, naming the change', async () => {
    const p = inspect(['--config', configPath]);
    try {
      await until(() => p.stdout().includes('worker  agent  ready'), 30_000, 'the first tree');
      expect(p.stdout()).toMatch(/^seq \d+: actors\n└─ worker {2}agent {2}ready {2}\[runs 0\/16\]\n\n/);
      const runId = await chat();
      await until(() => p.stdout().includes(`actor.created run ${runId}`), 30_000, 'the run created');
      await until(() => p.stdout().includes(`actor.stopped run ${runId}`), 30_000, 'the run ended');
      // Under its agent, with its state, status and budgets.
      expect(p.stdout()).toMatch(
        new RegExp(
          `\\n   └─ ${runId}  run  running\\.\\w+  \\(running\\)  \\[modelCalls 0/50, toolCalls 0/100\\]\\n`,
        ),
      );
      p.child.kill('SIGINT');
      expect(await p.exited).toBe(0);
      expect(p.stderr()).toBe('');
    } finally {
      p.child.kill('SIGKILL');
    }
  }, 60_000);

  it('ends quietly with 0 when the reader of its output goes away (EPIPE)', async () => {
    const p = inspect(['--json', '--config', configPath]);
    try {
      await until(() => p.stdout().includes('\n'), 30_000, 'the first line');
      p.child.stdout.destroy(); // The reader is gone: the next change's write hits EPIPE.
      await chat();
      expect(await p.exited).toBe(0);
      expect(p.stderr()).toBe('');
    } finally {
      p.child.kill('SIGKILL');
    }
  }, 60_000);

  it('ends at the EPIPE of a write even when no further change comes to write', async () => {
    // A pipe write "succeeds" and its EPIPE arrives after it: the command must end then, not at a
    // next write that may never come (nothing changes on an idle runtime).
    const lines: string[] = [];
    let closed: (() => void) | null = null;
    const io: CliIo = {
      stdout: (t) => void lines.push(t),
      stderr: () => {},
      stdinLines: () => (async function* () {})(),
      onStdoutClosed: (l) => {
        closed = l;
        return () => (closed = null);
      },
    };
    const done = inspectCommand(['--json', '--config', configPath], io, dir);
    await until(() => lines.length > 0, 30_000, 'the first line');
    expect(closed).not.toBeNull();
    (closed as unknown as () => void)();
    await expect(done).rejects.toBeInstanceOf(OutputClosedError);
  }, 60_000);

  it('the WebSocket feed carries the same actor.* changes', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/ws`, ['snotra.v1', `snotra.token.${TOKEN}`]);
    const got: {
      type: string;
      seq: number;
      event: { type: string; actor?: { id: string; parentId: string | null } };
    }[] = [];
    ws.on('message', (d) => got.push(JSON.parse(String(d)) as (typeof got)[number]));
    try {
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      const runId = await chat();
      await until(
        () => got.some((m) => m.event.type === 'actor.stopped' && m.event.actor?.id === runId),
        30_000,
        'the run stopped on the WebSocket',
      );
      const created = got.find((m) => m.event.type === 'actor.created' && m.event.actor?.id === runId);
      expect(created).toMatchObject({ type: 'event', event: { actor: { kind: 'run', parentId: 'worker' } } });
    } finally {
      ws.close();
    }
  }, 60_000);

  it('when the runtime stops: exit 1, "the runtime stopped"', async () => {
    const p = inspect(['--config', configPath]);
    try {
      await until(() => p.stdout().includes('worker  agent  ready'), 30_000, 'the first tree');
      expect(await stopProcess(snotra)).toBe(0);
      expect(await p.exited).toBe(1);
      expect(p.stderr()).toBe('snotra inspect: the runtime stopped\n');
    } finally {
      p.child.kill('SIGKILL');
    }
  }, 60_000);
});
