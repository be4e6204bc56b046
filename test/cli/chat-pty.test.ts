import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeModelServer, type FakeReply } from '../model/fake-server.ts';
import { eventually } from '../support/runtime.ts';
import { BIN, exitOf, startOnPty, type LiveCli } from './run-helpers.ts';

const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const text = (...parts: string[]): string[] => [
  ...parts.map((p) => chunk({ content: p })),
  chunk({}, 'stop'),
  'data: [DONE]\n\n',
];
const call = (id: string, name: string, args: unknown): string[] => [
  chunk({ tool_calls: [{ index: 0, id, function: { name, arguments: JSON.stringify(args) } }] }),
  chunk({}, 'tool_calls'),
  'data: [DONE]\n\n',
];
/** Any SGR (colour) escape sequence. */
// eslint-disable-next-line no-control-regex
const SGR = /\u001b\[[0-9;]*m/;

let server: FakeModelServer;
let dir: string;
let config: string;
const gates: Array<() => void> = [];
/** The replies by the user message they answer (the last user message of the request). */
let replies: (message: string, n: number) => FakeReply | undefined = () => undefined;

beforeAll(async () => {
  server = await FakeModelServer.start();
  server.route = (req, n) => {
    const messages = (req.body.messages ?? []) as Array<{ role: string; content: unknown }>;
    const users = messages.filter((m) => m.role === 'user');
    return replies(String(users.at(-1)?.content ?? ''), n);
  };
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'snotra-chat-')));
  mkdirSync(join(dir, 'project'));
  config = join(dir, 'snotra.config.json');
  writeFileSync(
    config,
    JSON.stringify({
      stateDir: 'state',
      workspace: { roots: [{ id: 'project', path: 'project', access: 'read-write' }] },
      agents: {
        assistant: {
          mode: 'ask',
          model: { provider: 'openai-compatible', baseUrl: `${server.url}/v1`, model: 'test-model' },
        },
      },
    }),
  );
});
afterAll(async () => {
  for (const open of gates) open();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `snotra ARGS` on a pseudo-terminal (util-linux `script`), with `env` set for it. */
function onPty(args: string[], env: Record<string, string> = {}): LiveCli {
  return startOnPty([process.execPath, BIN, ...args], env);
}

const count = (s: string, needle: string) => s.split(needle).length - 1;

/** Waits until `needle` has appeared `n` times in the terminal output. */
async function seen(cli: LiveCli, needle: string, n = 1, what = needle): Promise<void> {
  try {
    await eventually(() => count(cli.out(), needle) >= n, 60_000, what);
  } catch (err) {
    throw new Error(`${(err as Error).message}; output so far:\n${cli.out()}`);
  }
}

/**
 * Waits for `needle`, then for the chat's prompt after it: what is typed then reaches the prompt
 * (typed ahead, between two prompts, it can be lost: see the report of issue 32).
 */
async function answered(cli: LiveCli, needle: string, what = needle): Promise<void> {
  await seen(cli, needle, 1, what);
  try {
    await eventually(
      () => cli.out().indexOf('›', cli.out().lastIndexOf(needle)) !== -1,
      60_000,
      `the prompt after ${what}`,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; output so far:\n${cli.out()}`);
  }
}

function gate(): { open: () => void; opened: Promise<void> } {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  gates.push(open);
  return { open, opened };
}

describe('snotra chat on a terminal (pseudo-terminal, streaming model server)', () => {
  it('streams, answers an approval at the prompt, runs slash commands, Ctrl-C interrupts (resumable) and twice exits; NO_COLOR has no colour', async () => {
    const first = gate();
    const held = gate();
    replies = (message, n) => {
      if (message === 'stream please')
        return { sse: text('Hello ', 'there, ', 'streamed.'), gate: { after: 1, open: first.opened } };
      if (message === 'write a note')
        return n === 1 || !String(server.requests[n]?.raw ?? '').includes('"role":"tool"')
          ? { sse: call('c1', 'write_file', { path: 'NOTE.md', content: 'one\ntwo\n' }) }
          : { sse: text('noted.') };
      if (message.startsWith('Summarize the conversation above'))
        return { sse: text('Said hello; wrote NOTE.md with two lines at the user’s request.') };
      if (message === 'take your time')
        // Held until the test lets it go: the first ask is interrupted; the resumed ask answers.
        return server.requests.filter((r) => r.raw.includes('take your time')).length === 1
          ? { sse: text('Thinking', ' hard'), gate: { after: 1, open: held.opened } }
          : { sse: text('resumed answer.') };
      return undefined;
    };
    const cli = onPty(['chat', '--config', config, '--session', 'pty-1'], { NO_COLOR: '1' });
    try {
      await answered(cli, 'snotra chat with assistant', 'the banner');
      cli.child.stdin?.write('stream please\r');
      // The first delta is on the screen while the server still holds the rest of the answer.
      await seen(cli, 'Hello ', 1, 'the first streamed delta');
      expect(cli.out()).not.toContain('streamed.');
      first.open();
      await answered(cli, 'there, streamed.', 'the rest of the answer');

      cli.child.stdin?.write('write a note\r');
      await seen(cli, '  answer ', 1, 'the approval prompt');
      expect(cli.out()).toContain('  tool:    write_file (write-local)');
      cli.child.stdin?.write('o\r');
      await answered(cli, 'noted.', 'the answer after the approved write');
      expect(cli.out()).toContain('✓ wrote NOTE.md (+2 −0)');
      expect(readFileSync(join(dir, 'project', 'NOTE.md'), 'utf8')).toBe('one\ntwo\n');

      cli.child.stdin?.write('/session\r');
      await answered(cli, '\nsession pty-1\r', '/session');
      cli.child.stdin?.write('/roots\r');
      await answered(cli, 'roots of this chat’s runtime now; mode of assistant: ask', '/roots');
      expect(cli.out()).toContain(`  project  ${join(dir, 'project')}  read-write  (primary)`);
      cli.child.stdin?.write('/nope\r');
      await answered(cli, 'unknown command "/nope"', 'an unknown slash command');
      cli.child.stdin?.write('/compact\r');
      await answered(cli, 'summary: Said hello; wrote NOTE.md', '/compact');
      expect(cli.out()).toMatch(/compacted \d+ entries of session pty-1 into a summary/);

      cli.child.stdin?.write('take your time\r');
      await seen(cli, 'Thinking', 1, 'the held answer begins');
      cli.child.stdin?.write('\u0003');
      await answered(cli, 'interrupted; the run is saved', 'the interruption');
      expect(cli.out()).not.toContain('Thinking hard');
      // The interrupted run goes on from where it was saved (its model step is asked again).
      cli.child.stdin?.write('/resume\r');
      await answered(cli, 'resumed answer.', 'the resumed run');
      // After /compact the model is shown the summary in place of the earlier messages.
      const after = server.requests.filter((r) => r.raw.includes('take your time')).at(-1)?.raw ?? '';
      expect(after).toContain('Said hello; wrote NOTE.md');
      expect(after).not.toContain('stream please');

      cli.child.stdin?.write('/usage\r');
      await answered(cli, 'this chat: ', '/usage');
      cli.child.stdin?.write('\u0003');
      await answered(cli, 'Ctrl-C again to exit', 'the first Ctrl-C at the prompt');
      cli.child.stdin?.write('\u0003');
      expect(await exitOf(cli), `the chat's output:\n${cli.out()}\n${cli.err()}`).toBe(0);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
    const out = cli.out();
    expect(out).not.toMatch(SGR);
    expect(out).not.toContain('"level"');
    // The interrupted turn's run ended resumed: one question per approval, the note written once.
    expect(count(out, '  answer ')).toBe(1);
  }, 240_000);

  it('keeps line history across chats (a second chat recalls the first one’s entry), and colours without NO_COLOR', async () => {
    const history = join(dir, 'state', 'chat-history');
    expect(readFileSync(history, 'utf8')).toContain('"take your time"');
    expect(statSync(history).mode & 0o777).toBe(0o600);
    replies = (message) => (message === 'again' ? { sse: text('again and again.') } : undefined);
    const cli = onPty(['chat', '--config', config, '--continue']);
    try {
      await answered(cli, 'session pty-1', 'the banner of the continued session');
      cli.child.stdin?.write('\u001b[A');
      // Up arrow: the previous chat's last entry comes back to the prompt.
      await seen(cli, '/usage', 1, 'the recalled entry');
      cli.child.stdin?.write('\u0015again\r');
      await answered(cli, 'again and again.', 'the answer');
      cli.child.stdin?.write('/exit\r');
      expect(await exitOf(cli)).toBe(0);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
    expect(cli.out()).toMatch(SGR);
  }, 120_000);

  it('Ctrl-C after an inline approval interrupts the approved command: its process ends, the turn is saved', async () => {
    // A duration no other test uses: its process is found by its command line (a pid-derived
    // fraction: a second run of this file on the machine has a sleep of its own).
    const sleep = `sleep 117.${String(process.pid).padStart(7, '0')}`;
    replies = (message) =>
      message === 'please sleep' ? { sse: call('s1', 'shell', { command: sleep }) } : undefined;
    const sleeping = (): boolean =>
      readdirSync('/proc').some((pid) => {
        try {
          return (
            /^\d+$/.test(pid) &&
            readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(sleep.replace(' ', '\0'))
          );
        } catch {
          return false;
        }
      });
    const cli = onPty(['chat', '--config', config, '--session', 'pty-sleep']);
    try {
      await answered(cli, 'with assistant, session pty-sleep', 'the banner');
      cli.child.stdin?.write('please sleep\r');
      await seen(cli, '  answer ', 1, 'the approval prompt');
      cli.child.stdin?.write('o\r');
      await eventually(sleeping, 60_000, 'the approved command running');
      cli.child.stdin?.write('\u0003');
      await answered(cli, 'interrupted; the run is saved', 'the interruption');
      await eventually(() => !sleeping(), 30_000, 'the interrupted command’s process gone');
      cli.child.stdin?.write('/exit\r');
      expect(await exitOf(cli)).toBe(0);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
    expect(cli.out()).not.toContain('"level"');
  }, 120_000);

  it('/rewind lists the session’s checkpoints, shows the diff first, and puts the files back on confirm (undoable)', async () => {
    const file = join(dir, 'project', 'RW.md');
    writeFileSync(file, 'before\n');
    replies = (message, n) =>
      message === 'rewrite it'
        ? String(server.requests[n]?.raw ?? '').includes('"role":"tool"')
          ? { sse: text('rewritten.') }
          : { sse: call('w1', 'write_file', { path: 'RW.md', content: 'after\n' }) }
        : undefined;
    // A state dir of its own: a run an earlier test left interrupted on the shared one comes back
    // with its runtime and, live, holds the rewind lock on the same root.
    const own = join(dir, 'snotra.rewind.config.json');
    writeFileSync(
      own,
      readFileSync(config, 'utf8').replace('"stateDir":"state"', '"stateDir":"state-rewind"'),
    );
    expect(readFileSync(own, 'utf8')).toContain('"stateDir":"state-rewind"');
    const cli = onPty(['chat', '--config', own, '--session', 'pty-rewind'], { NO_COLOR: '1' });
    try {
      await answered(cli, 'with assistant, session pty-rewind', 'the banner');
      cli.child.stdin?.write('rewrite it\r');
      await seen(cli, '  answer ', 1, 'the approval prompt');
      cli.child.stdin?.write('o\r');
      await answered(cli, 'rewritten.', 'the answer after the write');
      expect(readFileSync(file, 'utf8')).toBe('after\n');
      cli.child.stdin?.write('/rewind\r');
      await answered(cli, '/rewind ID shows the diff', 'the checkpoint list');
      const id = /(ck-[0-9a-z]+-[0-9a-f]{8}) +\S+ +write_file +call \S+ +changed since: 1/.exec(
        cli.out(),
      )?.[1];
      expect(id, cli.out()).toBeDefined();
      cli.child.stdin?.write(`/rewind ${id}\r`);
      await answered(cli, `to put the files back: /rewind ${id} confirm`, 'the diff');
      expect(cli.out()).toContain(`rewind to ${id} would change (1 path):`);
      expect(cli.out()).toMatch(/-after\r?\n\+before/);
      expect(readFileSync(file, 'utf8')).toBe('after\n');
      cli.child.stdin?.write('/rewind ck-00000000-00000000 confirm\r');
      await answered(cli, 'no checkpoint "ck-00000000-00000000" in this session', 'an unknown checkpoint');
      cli.child.stdin?.write(`/rewind ${id} confirm\r`);
      await answered(cli, 'undo this rewind with: /rewind ', 'the rewind');
      expect(readFileSync(file, 'utf8')).toBe('before\n');
      const undo = /undo this rewind with: \/rewind (ck-[0-9a-z]+-[0-9a-f]{8}) confirm/.exec(cli.out())?.[1];
      cli.child.stdin?.write(`/rewind ${undo} confirm\r`);
      await answered(cli, `rewound to ${undo}`, 'the undo');
      expect(readFileSync(file, 'utf8')).toBe('after\n');
      cli.child.stdin?.write('/exit\r');
      expect(await exitOf(cli)).toBe(0);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
    expect(cli.out()).not.toContain('"level"');
  }, 180_000);

  it('a Ctrl-C that reaches the chat as a signal (the terminal in its normal mode) is a Ctrl-C: twice exits 0 with the runtime stopped', async () => {
    const cli = onPty(['chat', '--config', config, '--session', 'pty-signal']);
    try {
      await answered(cli, 'with assistant, session pty-signal', 'the banner');
      // The chat's process (under `script` and `env`) is the one holding the state dir.
      const pid = Number(readFileSync(join(dir, 'state', 'runtime.lock.owner'), 'utf8'));
      process.kill(pid, 'SIGINT');
      await answered(cli, 'Ctrl-C again to exit', 'the first signalled Ctrl-C');
      process.kill(pid, 'SIGINT');
      expect(await exitOf(cli), `the chat's output:\n${cli.out()}\n${cli.err()}`).toBe(0);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
    // Stopped, not killed: the state dir is free for the next runtime at once.
    expect(existsSync(join(dir, 'state', 'runtime.lock.owner'))).toBe(false);
  }, 120_000);
});
