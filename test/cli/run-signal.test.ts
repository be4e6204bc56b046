import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../surfaces/cli/main.ts';
import { eventually } from '../support/runtime.ts';
import {
  auditKinds,
  BIN,
  eventOf,
  exitOf,
  runWorkspace,
  snotra,
  startCli,
  type RunWorkspace,
} from './run-helpers.ts';

const spaces: RunWorkspace[] = [];
afterAll(() => {
  for (const s of spaces) s.cleanup();
});

type Event = Record<string, unknown> & { type: string };

describe('snotra run interrupted by a signal', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s while an approval is open: exit 1 naming the run to resume; the approval stays open; --resume finishes the call once',
    async (signal) => {
      const ws = runWorkspace([
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'write_file', args: { path: 'out.txt', content: 'once' } }],
          },
        },
        { expect: { kind: 'tool.result', tool: 'write_file' }, respond: { kind: 'final', text: 'written' } },
      ]);
      spaces.push(ws);
      const cli = startCli(process.execPath, [BIN, 'run', '--config', ws.config, '--json', 'write it']);
      const requested = (await eventOf(cli, 'approval.requested')) as Event;
      const runId = String(requested.runId);
      cli.child.kill(signal);
      expect(await exitOf(cli)).toBe(1);
      expect(cli.err()).toContain(
        `snotra run: interrupted; the run is saved: snotra run --resume ${runId}\n`,
      );
      expect(existsSync(join(ws.project, 'out.txt'))).toBe(false);

      // Nothing was decided for the human: the approval is still open in the Inbox.
      const inbox = snotra(['inbox', 'list', '--config', ws.config, '--json']);
      expect(inbox.status, inbox.stderr).toBe(0);
      expect(inbox.stdout).toContain(String(requested.approvalId));

      const approve = snotra(['inbox', 'approve', String(requested.approvalId), '--config', ws.config]);
      expect(approve.status, approve.stderr).toBe(0);
      const resumed = snotra(['run', '--config', ws.config, '--json', '--resume', runId]);
      expect(resumed.status, resumed.stderr).toBe(0);
      await eventually(() => existsSync(join(ws.project, 'out.txt')), 10_000, 'the approved write');
      expect(readFileSync(join(ws.project, 'out.txt'), 'utf8')).toBe('once');
      const kinds = auditKinds(ws.stateDir, runId);
      expect(kinds.filter((k) => k === 'started')).toHaveLength(1);
      expect(kinds.filter((k) => k === 'completed')).toHaveLength(1);
    },
    120_000,
  );

  it('a signal caught while the run is still being submitted interrupts it once it has an id (it was lost)', async () => {
    const ws = runWorkspace([
      {
        respond: {
          kind: 'calls',
          calls: [{ id: 'c1', tool: 'write_file', args: { path: 'out.txt', content: 'once' } }],
        },
      },
    ]);
    spaces.push(ws);
    const out: string[] = [];
    const err: string[] = [];
    // The command's own SIGTERM listener is called the moment it is added, from a microtask: while
    // the command awaits the run's submission (nothing else in this process is signalled).
    const onNew = (event: string | symbol, listener: (...args: unknown[]) => void) => {
      if (event !== 'SIGTERM') return;
      process.off('newListener', onNew);
      queueMicrotask(() => listener('SIGTERM'));
    };
    const before = { term: process.listenerCount('SIGTERM'), int: process.listenerCount('SIGINT') };
    process.on('newListener', onNew);
    try {
      const code = await runCli(
        ['run', '--config', ws.config, '--json', 'write it'],
        {
          stdout: (t: string) => void out.push(t),
          stderr: (t: string) => void err.push(t),
          stdinLines: async function* () {
            yield '';
          },
        },
        ws.dir,
      );
      expect(code, err.join('')).toBe(1);
    } finally {
      process.off('newListener', onNew);
    }
    const runId = out
      .join('')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Event)[0]?.runId;
    expect(err.join('')).toMatch(
      /snotra run: interrupted; the run is saved: snotra run --resume worker:\S+\n/,
    );
    if (runId !== undefined) expect(err.join('')).toContain(`--resume ${String(runId)}`);
    // The command leaves no listener behind.
    expect({ term: process.listenerCount('SIGTERM'), int: process.listenerCount('SIGINT') }).toEqual(before);
    expect(existsSync(join(ws.project, 'out.txt'))).toBe(false);
  }, 60_000);
});
