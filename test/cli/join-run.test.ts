import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeModelServer } from '../model/fake-server.ts';
import { startSnotra, stopProcess, type StartedProcess } from '../support/snotra-process.ts';
import { eventually } from '../support/runtime.ts';
import { call, configDir, until } from '../sidecar/client.ts';
import { BIN, eventOf, exitOf, startCli, startOnPty, type LiveCli } from './run-helpers.ts';

const TOKEN = randomBytes(32).toString('base64url');
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const KEY = 'sk-join-feed-5d1c9e7a3b2f8e6d4c0a';

let dir: string;
let config: string;
let start: StartedProcess;
let port: number;
let model: FakeModelServer;

const chunk = (content: string): string =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

/** `snotra run ARGS` beside the running start, stdin a pipe (no terminal). */
function run(args: string[]): LiveCli {
  return startCli(process.execPath, [BIN, 'run', '--config', config, ...args]);
}

beforeAll(async () => {
  model = await FakeModelServer.start();
  model.route = () => ({
    sse: [
      chunk('Joined '),
      chunk(`and streaming; the key is ${KEY.slice(0, 10)}`),
      chunk(`${KEY.slice(10)}.`),
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
      'data: [DONE]\n\n',
    ],
  });
  dir = configDir(
    {
      secrets: { backend: 'env' },
      agents: {
        worker: { mode: 'ask', model: { provider: 'scripted', script: 'worker.json' } },
        streamer: {
          mode: 'ask',
          tools: ['read_file'],
          model: {
            provider: 'openai-compatible',
            baseUrl: `${model.url}/v1`,
            model: 'test-model',
            apiKey: { secret: 'openai-key' },
          },
        },
        helper: { mode: 'ask', model: { provider: 'scripted', script: 'helper.json' } },
        typist: { mode: 'ask', model: { provider: 'scripted', script: 'typist.json' } },
        blocker: { mode: 'ask', model: { provider: 'scripted', script: 'blocker.json' } },
      },
    },
    {
      worker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'write_file', args: { path: 'notes.txt', content: 'hello' } }],
          },
        },
        { expect: { kind: 'tool.result', tool: 'write_file' }, respond: { kind: 'final', text: 'written' } },
      ],
      typist: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c2', tool: 'write_file', args: { path: 'tty.txt', content: 'typed' } }],
          },
        },
        {
          expect: { kind: 'tool.result', tool: 'write_file' },
          respond: { kind: 'final', text: 'approved on the terminal' },
        },
      ],
      helper: [{ respond: { kind: 'final', text: 'embedded again' } }],
      blocker: [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c3', tool: 'write_file', args: { path: 'blocked.txt', content: 'no' } }],
          },
        },
        { respond: { kind: 'final', text: 'denied, fine' } },
      ],
    },
  );
  config = join(dir, 'snotra.config.json');
  start = startSnotra(['start', '--config', config], {
    SNOTRA_SIDECAR_TOKEN: TOKEN,
    SNOTRA_SECRET_OPENAI_KEY: KEY,
  });
  port = Number(new URL((await start.ready(60_000)).sidecar as string).port);
}, 90_000);

afterAll(async () => {
  if (start !== undefined && start.child.exitCode === null) await stopProcess(start);
  await model?.close();
  if (dir !== undefined) (await import('node:fs')).rmSync(dir, { recursive: true, force: true });
});

describe('snotra run joins a running snotra start', () => {
  it('the join socket is 0600 in the 0700 state dir', () => {
    const stateDir = join(dir, 'state');
    expect(statSync(join(stateDir, 'join.sock')).mode & 0o777).toBe(0o600);
    expect(statSync(stateDir).mode & 0o777).toBe(0o700);
  });

  it('submits, follows the feed, and its attended approval shows in the start’s Inbox, where deciding it finishes the run', async () => {
    const cli = run(['--agent', 'worker', '--json', 'write the notes']);
    const asked = await eventOf(cli, 'approval.requested', () => true, 60_000);
    expect(cli.events()[0]?.type).toBe('run.started');
    // The start's own sidecar (what its web app and every other surface reads) lists it.
    const inbox = await until(
      async () =>
        (
          (await call(port, 'GET', '/v1/inbox', { headers: AUTH })).json() as {
            approvals: { id: string; status: string }[];
          }
        ).approvals.find((a) => a.id === asked.approvalId),
      30_000,
      'the joined run’s approval in the start’s Inbox',
    );
    expect(inbox.status).toBe('pending');
    const decided = await call(
      port,
      'POST',
      `/v1/inbox/${encodeURIComponent(String(asked.approvalId))}/decision`,
      {
        headers: { ...AUTH, 'Content-Type': 'application/json' },
        body: JSON.stringify({ decision: 'approve' }),
      },
    );
    expect(decided.status, decided.text).toBe(200);
    expect(await exitOf(cli), cli.err()).toBe(0);
    const types = cli.events().map((e) => e.type);
    expect(types).toContain('approval.resolved');
    expect(types.at(-1)).toBe('run.completed');
    expect(cli.err()).not.toMatch(/state_dir_locked|in use by another/);
    // The run ran in the start's process: its write is there, and this CLI never opened the state dir's lock.
    expect(readFileSync(join(dir, 'project', 'notes.txt'), 'utf8')).toBe('hello');
    expect(readFileSync(join(dir, 'state', 'runtime.lock.owner'), 'utf8')).toBe(String(start.pid));
  });

  it('snotra rewind beside the start rewinds through it: refused naming a live run that can write the root, then exact and undoable', async () => {
    const cliOf = async (args: string[]) => {
      const cli = startCli(process.execPath, [BIN, 'rewind', ...args, '--config', config, '--json']);
      const code = await exitOf(cli);
      return { code, out: cli.out(), err: cli.err() };
    };
    const listed = await cliOf(['--list']);
    expect(listed.code, listed.err).toBe(0);
    const checkpoints = listed.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; tool: string; changedSince: { path: string }[] });
    const ck = checkpoints.find(
      (c) => c.tool === 'write_file' && c.changedSince.some((x) => x.path === 'notes.txt'),
    );
    expect(ck, listed.out).toBeDefined();
    const id = String(ck?.id);

    const blocker = run(['--agent', 'blocker', '--json', 'block the rewind']);
    const asked = await eventOf(blocker, 'approval.requested', () => true, 60_000);
    const blocked = await cliOf([id]);
    expect(blocked.code).toBe(1);
    expect(blocked.out).toContain('rewind_blocked_by_run');
    expect(blocked.out).toContain(`run ${String(asked.runId)} is waiting for a human`);
    expect(readFileSync(join(dir, 'project', 'notes.txt'), 'utf8')).toBe('hello');
    const denied = await call(
      port,
      'POST',
      `/v1/inbox/${encodeURIComponent(String(asked.approvalId))}/decision`,
      {
        headers: { ...AUTH, 'Content-Type': 'application/json' },
        body: JSON.stringify({ decision: 'deny' }),
      },
    );
    expect(denied.status, denied.text).toBe(200);
    await exitOf(blocker);

    const done = await cliOf([id]);
    expect(done.code, done.err + done.out).toBe(0);
    const report = JSON.parse(done.out) as { undo: string; user: string };
    expect(report.user).toMatch(/^local:/);
    expect(existsSync(join(dir, 'project', 'notes.txt'))).toBe(false);
    const undone = await cliOf([report.undo]);
    expect(undone.code, undone.err + undone.out).toBe(0);
    expect(readFileSync(join(dir, 'project', 'notes.txt'), 'utf8')).toBe('hello');
    expect(readFileSync(join(dir, 'state', 'runtime.lock.owner'), 'utf8')).toBe(String(start.pid));
  });

  it('streams model.delta over the join socket; a secret split across deltas is in no line it prints', async () => {
    const cli = run(['--agent', 'streamer', '--json', 'stream please']);
    expect(await exitOf(cli), cli.err()).toBe(0);
    const events = cli.events();
    const deltas = events.filter((e) => e.type === 'model.delta').map((e) => String(e.delta));
    const text = events.find((e) => e.type === 'model.text')?.delta;
    expect(deltas.length).toBeGreaterThanOrEqual(1);
    expect(deltas.join('')).toBe(text);
    expect(text).toBe('Joined and streaming; the key is [REDACTED].');
    for (const needle of [KEY, KEY.slice(0, 10), KEY.slice(10)]) {
      expect(cli.out()).not.toContain(needle);
      expect(cli.err()).not.toContain(needle);
    }
  });

  it('on a terminal (pseudo-terminal) the joined run asks its approval there and the answer goes to the start', async () => {
    const cli = startOnPty([
      process.execPath,
      BIN,
      'run',
      '--config',
      config,
      '--agent',
      'typist',
      'write on tty',
    ]);
    await eventually(
      () => /approve\?|\[o\]nce|once/i.test(cli.out()),
      60_000,
      `the prompt; output: ${cli.out()}`,
    );
    cli.child.stdin?.write('y\r');
    expect(await exitOf(cli), cli.out()).toBe(0);
    expect(cli.out()).toContain('approved on the terminal');
    expect(readFileSync(join(dir, 'project', 'tty.txt'), 'utf8')).toBe('typed');
  });

  it('an unknown agent is refused by the running runtime, naming its agents', async () => {
    const cli = run(['--agent', 'nobody', 'hi']);
    expect(await exitOf(cli)).toBe(2);
    expect(cli.err()).toMatch(
      /"nobody" is not an agent of the running runtime \(pid \d+\).*worker, streamer, helper/,
    );
  });

  it('after the start dies (SIGKILL: stale socket, stale lock), snotra run starts an embedded runtime as before', async () => {
    start.child.kill('SIGKILL');
    await start.exited;
    expect(existsSync(join(dir, 'state', 'join.sock'))).toBe(true);
    const cli = run(['--agent', 'helper', '--json', 'alone now']);
    expect(await exitOf(cli), cli.err()).toBe(0);
    expect(cli.events().find((e) => e.type === 'model.text')?.delta).toBe('embedded again');
    expect(cli.err()).not.toMatch(/state_dir_locked/);
  });
});
