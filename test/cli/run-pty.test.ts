import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/runtime.ts';
import {
  BIN,
  exitOf,
  runWorkspace,
  snotra,
  startOnPty,
  type LiveCli,
  type RunWorkspace,
} from './run-helpers.ts';

const spaces: RunWorkspace[] = [];
afterAll(() => {
  for (const s of spaces) s.cleanup();
});

/** Runs `snotra ARGS` on a pseudo-terminal (util-linux `script`), stdin and output through it. */
function onPty(args: string[]): LiveCli {
  return startOnPty([process.execPath, BIN, ...args]);
}

function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/** Waits for the `n`-th occurrence of `needle` in the terminal output, then types `answer`. */
async function answer(cli: LiveCli, needle: string, n: number, typed: string): Promise<void> {
  await eventually(
    () => count(cli.out(), needle) >= n,
    30_000,
    `prompt ${n} (${needle}); output so far:\n${cli.out()}`,
  );
  cli.child.stdin?.write(`${typed}\r`);
}

describe('snotra run on a terminal (pseudo-terminal)', () => {
  it('asks each approval with its card and diff; once, for the session, always for the target, and deny with a reason the model sees', async () => {
    const ws = runWorkspace([
      {
        respond: {
          kind: 'calls',
          calls: [
            { id: 'c1', tool: 'write_file', args: { path: 'a.txt', content: 'v1\u001b]0;pwned\u0007\n' } },
          ],
        },
      },
      {
        expect: { kind: 'tool.result', tool: 'write_file' },
        respond: {
          kind: 'calls',
          calls: [{ id: 'c2', tool: 'write_file', args: { path: 'b.txt', content: 'v2\n' } }],
        },
      },
      {
        expect: { kind: 'tool.result', tool: 'write_file' },
        respond: {
          kind: 'calls',
          calls: [{ id: 'c3', tool: 'write_file', args: { path: 'c.txt', content: 'v3\n' } }],
        },
      },
      {
        expect: { kind: 'tool.result', tool: 'write_file' },
        respond: {
          kind: 'calls',
          calls: [{ id: 'c4', tool: 'send_message', args: { channel: '#ops', text: 'hi' } }],
        },
      },
      {
        expect: { kind: 'tool.failed', tool: 'send_message' },
        respond: {
          kind: 'calls',
          calls: [{ id: 'c5', tool: 'send_message', args: { channel: '#ops', text: 'again' } }],
        },
      },
      {
        expect: { kind: 'tool.failed', tool: 'send_message' },
        respond: {
          kind: 'calls',
          calls: [{ id: 'c6', tool: 'edit_file', args: { path: 'a.txt', old: 'v1', new: 'v9' } }],
        },
      },
      {
        expect: { kind: 'tool.denied', reason: 'approval_denied', contains: 'keep v1 as it is' },
        respond: { kind: 'final', text: 'finished' },
      },
    ]);
    spaces.push(ws);
    const cli = onPty(['run', '--config', ws.config, '--session', 'desk-1', 'edit the files']);
    try {
      await answer(cli, '  answer ', 1, 'o');
      await answer(cli, '  answer ', 2, 's');
      await answer(cli, '  answer ', 3, 'a');
      await answer(cli, '  answer ', 4, 'd');
      await answer(cli, 'reason for the model', 1, 'keep v1 as it is');
      expect(await exitOf(cli)).toBe(0);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
    const out = cli.out();
    // Four prompts: c3 rode on the session grant, c5 on the standing grant.
    expect(count(out, '  answer ')).toBe(4);
    expect(out).toContain('▸ write_file  allow (session_approval)');
    expect(out).toContain('▸ send_message  allow (standing_approval)  #ops');
    // The card: tool and risk, reason, rule, resolved target with its root, and the diff.
    expect(out).toContain('  tool:    write_file (write-local)');
    expect(out).toContain('  why:     mode_ask');
    expect(out).toContain('  rule:    mode.ask (mode)');
    expect(out).toContain(`  target:  ${join(ws.project, 'a.txt')}  (path, root project, read-write)`);
    expect(out).toContain('    +v1\\x1b]0;pwned\\x07');
    expect(out).toContain('    -v1\\x1b]0;pwned\\x07');
    expect(out).toContain('    +v9\\x1b]0;pwned\\x07');
    expect(out).not.toContain('\u001b]0;pwned');
    // Grants are offered only where eligible: "always" only for the external tool with a target.
    expect(out).toContain('answer [o]nce  [s]ession  [d]eny');
    expect(out).toContain('answer [o]nce  [s]ession  [a]lways for this target  [d]eny');
    expect(out).toContain('approval denied by local:');
    expect(out).toContain('a human denied this call: keep v1 as it is');
    expect(out).toContain('finished');
    expect(readFileSync(join(ws.project, 'a.txt'), 'utf8')).toBe('v1\u001b]0;pwned\u0007\n');
    expect(readFileSync(join(ws.project, 'c.txt'), 'utf8')).toBe('v3\n');

    const grants = snotra(['grants', 'list', '--config', ws.config, '--json']);
    expect(grants.status).toBe(0);
    const list = grants.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; kind: string; tool: string; target: string | null });
    expect(list).toEqual([
      expect.objectContaining({ kind: 'session', sessionId: 'desk-1', tool: 'write_file', target: null }),
      expect.objectContaining({
        kind: 'standing',
        ownerTaskId: 'desk-1',
        tool: 'send_message',
        target: '#ops',
      }),
    ]);
    for (const g of list) {
      const r = snotra(['grants', 'revoke', g.id, '--config', ws.config]);
      expect(r.status).toBe(0);
      expect(r.stdout).toContain(`${g.id}: revoked by local:`);
    }
    expect(snotra(['grants', 'list', '--config', ws.config]).stdout).toBe('no active grants\n');
    const twice = snotra(['grants', 'revoke', list[0]!.id, '--config', ws.config]);
    expect(twice.status).toBe(1);
    expect(twice.stderr).toContain('already revoked');
    const unknown = snotra(['grants', 'revoke', 'nope', '--config', ws.config]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('no session or standing grant with id "nope"');
  }, 180_000);

  it('Ctrl-C after an inline approval interrupts the run (the terminal still held by the prompt): saved, resumable, exit 1', async () => {
    const ws = runWorkspace([
      {
        respond: {
          kind: 'calls',
          calls: [{ id: 'c1', tool: 'shell', args: { command: 'sleep 120' } }],
        },
      },
      { expect: { kind: 'tool.result', tool: 'shell' }, respond: { kind: 'final', text: 'slept' } },
    ]);
    spaces.push(ws);
    const cli = onPty(['run', '--config', ws.config, 'please sleep']);
    try {
      await answer(cli, '  answer ', 1, 'o');
      // The approved call is running (its sleep has started) when Ctrl-C comes.
      await eventually(
        () => cli.out().includes('approved') || cli.out().includes('▸'),
        30_000,
        `the approved call under way; output:\n${cli.out()}`,
      );
      cli.child.stdin?.write('\u0003');
      expect(await exitOf(cli)).toBe(1);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
    expect(cli.out()).toContain('snotra run: interrupted; the run is saved: snotra run --resume worker:');
    expect(cli.out()).not.toContain('slept');
  }, 120_000);

  it('Ctrl-C at the approval question denies (fail closed), as before', async () => {
    const ws = runWorkspace([
      {
        respond: {
          kind: 'calls',
          calls: [{ id: 'c1', tool: 'write_file', args: { path: 'y.txt', content: 'y' } }],
        },
      },
    ]);
    spaces.push(ws);
    const cli = onPty(['run', '--config', ws.config, 'write y']);
    try {
      await eventually(() => cli.out().includes('  answer '), 30_000, `the prompt; output:\n${cli.out()}`);
      cli.child.stdin?.write('\u0003');
      expect(await exitOf(cli)).toBe(1);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
    expect(cli.out()).toContain('run denied (approval_denied)');
    expect(existsSync(join(ws.project, 'y.txt'))).toBe(false);
  }, 120_000);

  it('fails closed: end of input on the terminal denies, and the run ends denied (exit 1)', async () => {
    const ws = runWorkspace([
      {
        respond: {
          kind: 'calls',
          calls: [{ id: 'c1', tool: 'write_file', args: { path: 'x.txt', content: 'x' } }],
        },
      },
    ]);
    spaces.push(ws);
    const cli = onPty(['run', '--config', ws.config, 'write x']);
    try {
      await eventually(() => cli.out().includes('  answer '), 30_000, `the prompt; output:\n${cli.out()}`);
      cli.child.stdin?.write('maybe\r');
      await eventually(
        () => cli.out().includes('not an offered answer'),
        30_000,
        'the refusal of a bad answer',
      );
      cli.child.stdin?.write('\u0004'); // Ctrl-D: end of input
      expect(await exitOf(cli)).toBe(1);
    } finally {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
    }
    expect(cli.out()).toContain('approval denied by local:');
    expect(cli.out()).toContain('run denied (approval_denied)');
    // Said once, by the run's own output: no raw JSON log line about it on the terminal.
    expect(cli.out()).not.toContain('"level"');
    expect(cli.out().split('run denied').length - 1).toBe(1);
    expect(existsSync(join(ws.project, 'x.txt'))).toBe(false);
  }, 120_000);
});
