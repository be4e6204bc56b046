import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeModelServer } from '../model/fake-server.ts';
import { call, configDir, until } from '../sidecar/client.ts';
import { eventually } from '../support/runtime.ts';
import { startSnotra, stopProcess, type StartedProcess } from '../support/snotra-process.ts';
import { BIN, exitOf, startOnPty, type LiveCli } from './run-helpers.ts';

const TOKEN = randomBytes(32).toString('base64url');
const AUTH = { Authorization: `Bearer ${TOKEN}` };

const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
/** A streamed answer, with the usage chunk `stream_options.include_usage` asks for. */
const text = (...parts: string[]): string[] => [
  ...parts.map((p) => chunk({ content: p })),
  chunk({}, 'stop'),
  `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 3 } })}\n\n`,
  'data: [DONE]\n\n',
];
const toolCall = (id: string, name: string, args: unknown): string[] => [
  chunk({ tool_calls: [{ index: 0, id, function: { name, arguments: JSON.stringify(args) } }] }),
  chunk({}, 'tool_calls'),
  'data: [DONE]\n\n',
];

let model: FakeModelServer;
let dir: string;
let config: string;
let start: StartedProcess;
let port: number;
const gates: Array<() => void> = [];

function gate(): { open: () => void; opened: Promise<void> } {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  gates.push(open);
  return { open, opened };
}

const count = (s: string, needle: string) => s.split(needle).length - 1;

/** Waits for `needle`, then for the chat's prompt after it (what is typed then reaches the prompt). */
async function answered(cli: LiveCli, needle: string, what = needle): Promise<void> {
  try {
    await eventually(
      () => {
        const at = cli.out().lastIndexOf(needle);
        return at !== -1 && cli.out().indexOf('›', at) !== -1;
      },
      60_000,
      `${what} and the prompt after it`,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; output so far:\n${cli.out()}\n${cli.err()}`);
  }
}

async function seen(cli: LiveCli, needle: string, what = needle): Promise<void> {
  try {
    await eventually(() => cli.out().includes(needle), 60_000, what);
  } catch (err) {
    throw new Error(`${(err as Error).message}; output so far:\n${cli.out()}\n${cli.err()}`);
  }
}

beforeAll(async () => {
  model = await FakeModelServer.start();
  dir = configDir(
    {
      agents: {
        assistant: {
          mode: 'ask',
          model: { provider: 'openai-compatible', baseUrl: `${model.url}/v1`, model: 'test-model' },
        },
      },
    },
    {},
  );
  config = join(dir, 'snotra.config.json');
  start = startSnotra(['start', '--config', config], { SNOTRA_SIDECAR_TOKEN: TOKEN });
  port = Number(new URL((await start.ready(60_000)).sidecar as string).port);
}, 90_000);

afterAll(async () => {
  for (const open of gates) open();
  if (start !== undefined && start.child.exitCode === null) await stopProcess(start);
  await model?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('snotra chat beside a running snotra start joins it', () => {
  it('streams, asks an approval at the prompt that the start’s Inbox shows too, runs the slash commands (/compact in the start), Ctrl-C interrupts and /resume goes on, leaving keeps the start running, and a start that stops under a chat ends it (exit 1)', async () => {
    const first = gate();
    const held = gate();
    const requests = (needle: string) => model.requests.filter((r) => r.raw.includes(needle));
    model.route = (req, n) => {
      const users = ((req.body.messages ?? []) as Array<{ role: string; content: unknown }>).filter(
        (m) => m.role === 'user',
      );
      const message = String(users.at(-1)?.content ?? '');
      if (message === 'stream please')
        return {
          sse: text('Hello ', 'from the ', 'running runtime.'),
          gate: { after: 1, open: first.opened },
        };
      if (message === 'write a note')
        return String(model.requests[n]?.raw ?? '').includes('"role":"tool"')
          ? { sse: text('noted.') }
          : { sse: toolCall('c1', 'write_file', { path: 'NOTE.md', content: 'one\ntwo\n' }) };
      if (message.startsWith('Summarize the conversation above'))
        return { sse: text('Greeted; wrote NOTE.md for the user.') };
      if (message === 'take your time')
        return requests('take your time').length === 1
          ? { sse: text('Thinking', ' hard'), gate: { after: 1, open: held.opened } }
          : { sse: text('resumed answer.') };
      return undefined;
    };
    const cli = startOnPty([process.execPath, BIN, 'chat', '--config', config, '--session', 'joined-1'], {
      NO_COLOR: '1',
    });
    try {
      await answered(cli, `Joined the running runtime (pid ${start.pid})`, 'the banner');

      cli.child.stdin?.write('stream please\r');
      await seen(cli, 'Hello ', 'the first streamed delta');
      expect(cli.out()).not.toContain('running runtime.');
      first.open();
      await answered(cli, 'from the running runtime.', 'the rest of the answer');

      cli.child.stdin?.write('write a note\r');
      await seen(cli, '  answer ', 'the approval prompt');
      // The question asked at the chat's prompt is the start's: its Inbox (the web app's) has it.
      const pending = await until(
        async () =>
          (
            (await call(port, 'GET', '/v1/inbox', { headers: AUTH })).json() as {
              approvals: { id: string; status: string; tool: string }[];
            }
          ).approvals.find((a) => a.tool === 'write_file'),
        30_000,
        'the chat’s approval in the start’s Inbox',
      );
      expect(pending.status).toBe('pending');
      cli.child.stdin?.write('o\r');
      await answered(cli, 'noted.', 'the answer after the approved write');
      expect(cli.out()).toContain('✓ wrote NOTE.md (+2 −0)');
      expect(readFileSync(join(dir, 'project', 'NOTE.md'), 'utf8')).toBe('one\ntwo\n');

      cli.child.stdin?.write('/inbox\r');
      await answered(cli, 'the Inbox is empty', '/inbox');
      cli.child.stdin?.write('/session list\r');
      await answered(cli, '* joined-1  assistant  2 runs', '/session list');
      cli.child.stdin?.write('/mode\r');
      await answered(cli, 'mode of assistant: ask', '/mode');
      cli.child.stdin?.write('/rewind\r');
      await answered(cli, '/rewind ID shows the diff', '/rewind');
      expect(cli.out()).toMatch(/ck-[0-9a-z]+-[0-9a-f]{8} +\S+  +write_file +call c\d+ +changed since: 1/);

      // The diff back to it comes from the start (its rewind, dry run): nothing is changed.
      const ck = /(ck-[0-9a-z]+-[0-9a-f]{8}) +\S+ +write_file/.exec(cli.out())?.[1];
      cli.child.stdin?.write(`/rewind ${ck}\r`);
      await answered(cli, `to put the files back: /rewind ${ck} confirm`, 'the rewind’s diff');
      expect(cli.out()).toContain(`rewind to ${ck} would change (1 path):`);
      expect(readFileSync(join(dir, 'project', 'NOTE.md'), 'utf8')).toBe('one\ntwo\n');

      cli.child.stdin?.write('/compact\r');
      await answered(cli, 'summary: Greeted; wrote NOTE.md', '/compact');
      expect(cli.out()).toMatch(/compacted \d+ entries of session joined-1 into a summary/);

      cli.child.stdin?.write('take your time\r');
      await seen(cli, 'Thinking', 'the held answer begins');
      cli.child.stdin?.write('\u0003');
      await answered(cli, 'interrupted; the run is saved', 'the interruption');
      cli.child.stdin?.write('/resume\r');
      await answered(cli, 'resumed answer.', 'the resumed run');
      // The compaction ran in the start: the model is shown its summary in place of what it summarized.
      const resumed = requests('take your time').at(-1)?.raw ?? '';
      expect(resumed).toContain('Greeted; wrote NOTE.md');
      expect(resumed).not.toContain('stream please');

      cli.child.stdin?.write('/usage\r');
      await answered(cli, 'this chat: ', '/usage');
      // Counted from the start's feed: this chat's runs only, each answer's usage once.
      expect(cli.out()).toMatch(/this chat: [1-9]\d* model calls, [1-9]\d* tokens in, [1-9]\d* tokens out/);
      // A mode changed from this chat is the start's: the next chat's /roots shows it (below).
      cli.child.stdin?.write('/mode deny\r');
      await answered(cli, 'mode of assistant is now deny', '/mode deny');
      cli.child.stdin?.write('/exit\r');
      expect(await exitOf(cli), `the chat's output:\n${cli.out()}\n${cli.err()}`).toBe(0);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
    const out = cli.out();
    expect(out).not.toContain('"level"');
    expect(out).not.toMatch(/state_dir_locked|in use by another/);
    expect(count(out, '  answer ')).toBe(1);

    // The agent is one of the running runtime's, named as such when it is not.
    const wrong = startOnPty([process.execPath, BIN, 'chat', '--config', config, '--agent', 'nope']);
    expect(await exitOf(wrong), wrong.out()).toBe(2);
    expect(wrong.out()).toContain(
      `--agent "nope" is not an agent of the running runtime (pid ${start.pid}); agents: assistant`,
    );

    // Leaving the chat left the start running: it still holds the state dir and answers.
    expect(start.child.exitCode).toBeNull();
    expect(readFileSync(join(dir, 'state', 'runtime.lock.owner'), 'utf8')).toBe(String(start.pid));
    const sessions = (await call(port, 'GET', '/v1/sessions', { headers: AUTH })).json() as {
      sessions: { sessionId: string }[];
    };
    expect(sessions.sessions.map((s) => s.sessionId)).toContain('joined-1');

    // The chat's own config now has another root the running start never had.
    mkdirSync(join(dir, 'extra'));
    const edited = JSON.parse(readFileSync(config, 'utf8')) as {
      workspace: { roots: Array<Record<string, unknown>> };
    };
    edited.workspace.roots = [
      ...edited.workspace.roots.map((r) => ({ ...r, primary: true })),
      { id: 'extra', path: 'extra', access: 'read' },
    ];
    writeFileSync(config, JSON.stringify(edited));

    // A start that stops under a joined chat stops cleanly (SIGTERM); the chat, idle at its prompt
    // with nothing typed, says so at once and ends (exit 1), the terminal back in its normal mode
    // (`stty -a` on the same terminal after it).
    const orphan = startOnPty(
      ['sh', '-c', '"$@"; s=$?; stty -a; exit $s', 'sh', process.execPath, BIN, 'chat', '--config', config],
      { NO_COLOR: '1' },
    );
    try {
      await answered(orphan, `Joined the running runtime (pid ${start.pid})`, 'the second chat’s banner');
      // /roots: the start's roots and mode now, not this chat's config (its `extra` root).
      orphan.child.stdin?.write('/roots\r');
      await answered(orphan, `roots of the running runtime (pid ${start.pid}) now`, '/roots');
      const roots = orphan.out().slice(orphan.out().lastIndexOf('roots of the running runtime'));
      expect(roots).toContain('mode of assistant: deny');
      expect(roots).toContain(`project  ${join(dir, 'project')}  read-write`);
      expect(roots).not.toContain('extra');
      expect(await stopProcess(start)).toBe(0);
      expect(await exitOf(orphan), orphan.out()).toBe(1);
      expect(orphan.out()).toContain('snotra chat: the running runtime stopped');
      const stty = orphan.out().slice(orphan.out().lastIndexOf('snotra chat: the running runtime stopped'));
      expect(stty).toMatch(/(^|\s)icanon\s/);
      expect(stty).toMatch(/(^|\s)echo\s/);
      expect(stty).not.toMatch(/-icanon|-echo\s/);
    } finally {
      if (orphan.child.exitCode === null) orphan.child.kill('SIGKILL');
    }
  }, 240_000);
});
