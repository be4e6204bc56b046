import { existsSync, readFileSync, writeFileSync } from 'node:fs';
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

function workspace(steps: unknown[]): RunWorkspace {
  const ws = runWorkspace(steps);
  spaces.push(ws);
  return ws;
}

type Event = Record<string, unknown> & { type: string };

describe('snotra run --json (end to end, separate processes)', () => {
  it('streams an allowed call, a denied call the model continues after, an approval decided by `snotra inbox approve` and a denial with a reason the model sees', async () => {
    const ws = workspace([
      {
        respond: {
          kind: 'calls',
          text: 'Reading first.',
          calls: [
            { id: 'c1', tool: 'read_file', args: { path: 'a.txt' } },
            { id: 'c2', tool: 'read_file', args: { path: '../outside.txt' } },
          ],
        },
      },
      {
        expect: { kind: 'tool.denied', tool: 'read_file', reason: 'outside_roots' },
        respond: {
          kind: 'calls',
          calls: [
            {
              id: 'c3',
              tool: 'write_file',
              args: { path: 'notes.txt', content: 'password=hunter2hunter2\n' },
            },
          ],
        },
      },
      {
        expect: { kind: 'tool.result', tool: 'write_file' },
        respond: {
          kind: 'calls',
          calls: [{ id: 'c4', tool: 'write_file', args: { path: 'other.txt', content: 'x' } }],
        },
      },
      {
        expect: { kind: 'tool.denied', reason: 'approval_denied', contains: 'only notes.txt, please' },
        respond: { kind: 'final', text: 'All done.' },
      },
    ]);
    writeFileSync(join(ws.project, 'a.txt'), 'hello\ntoken: abcdef0123456789\n');
    writeFileSync(join(ws.dir, 'outside.txt'), 'not yours');
    const cli = startCli(process.execPath, [BIN, 'run', '--config', ws.config, '--json', 'take notes']);

    const first = (await eventOf(cli, 'approval.requested')) as Event;
    expect(first).toMatchObject({
      callId: 'c3',
      tool: 'write_file',
      risk: 'write-local',
      reason: 'mode_ask',
      interaction: 'attended',
    });
    expect(first.targets).toEqual([
      expect.objectContaining({ argument: 'path', resolved: join(ws.project, 'notes.txt'), root: 'project' }),
    ]);
    expect(first.options).toEqual({ session: true, standing: false });
    // The hint goes to stderr, a separate pipe: it may reach us after the event on stdout.
    await eventually(
      () => cli.err().includes(`snotra inbox approve ${String(first.approvalId)}`),
      20_000,
      'the hint on stderr',
    );
    expect(existsSync(join(ws.project, 'notes.txt'))).toBe(false);
    const approve = snotra(['inbox', 'approve', String(first.approvalId), '--config', ws.config, '--json']);
    expect(approve.stderr).toBe('');
    expect(JSON.parse(approve.stdout)).toMatchObject({ status: 'approved', runtimeNotified: true });

    const second = (await eventOf(cli, 'approval.requested', (e) => e.callId === 'c4')) as Event;
    const deny = snotra([
      'inbox',
      'deny',
      String(second.approvalId),
      '--config',
      ws.config,
      '--reason',
      'only notes.txt, please',
    ]);
    expect(deny.status).toBe(0);

    expect(await exitOf(cli)).toBe(0);
    const events = cli.events();
    for (const e of events) {
      expect(typeof e.runId).toBe('string');
      expect(typeof e.ts).toBe('number');
    }
    const runId = events[0]?.runId;
    expect(events.every((e) => e.runId === runId)).toBe(true);
    expect(
      events
        .filter((e) => e.type !== 'model.text')
        .map((e) => `${e.type}${e.callId ? `:${String(e.callId)}` : ''}`),
    ).toEqual([
      'run.started',
      'tool.proposed:c1',
      'tool.decided:c1',
      'tool.completed:c1',
      'tool.proposed:c2',
      'tool.decided:c2',
      'tool.denied:c2',
      'tool.proposed:c3',
      'tool.decided:c3',
      'approval.requested:c3',
      'approval.resolved:c3',
      'tool.completed:c3',
      'tool.proposed:c4',
      'tool.decided:c4',
      'approval.requested:c4',
      'approval.resolved:c4',
      'tool.denied:c4',
      'run.completed',
    ]);
    const byType = (t: string, callId?: string) =>
      events.find((e) => e.type === t && (callId === undefined || e.callId === callId)) as Event;
    expect(byType('model.text')).toMatchObject({ delta: 'Reading first.' });
    expect(byType('tool.decided', 'c1')).toMatchObject({
      decision: { decision: 'allow', reason: 'mode_allow' },
    });
    expect(byType('tool.completed', 'c1')).toMatchObject({ ok: true });
    expect(String(byType('tool.completed', 'c1').content)).toContain('hello');
    expect(String(byType('tool.completed', 'c1').content)).not.toContain('abcdef0123456789');
    expect(byType('tool.decided', 'c2')).toMatchObject({
      decision: { decision: 'deny', reason: 'outside_roots' },
    });
    expect(byType('tool.denied', 'c2')).toMatchObject({ reason: 'outside_roots' });
    expect(byType('tool.proposed', 'c3')).toMatchObject({
      args: { path: 'notes.txt', content: 'password=[REDACTED]\n' },
    });
    expect(byType('approval.resolved', 'c3')).toMatchObject({
      decision: 'approved',
      by: expect.stringMatching(/^local:/),
      reason: null,
    });
    expect(byType('approval.resolved', 'c4')).toMatchObject({
      decision: 'denied',
      reason: 'only notes.txt, please',
    });
    expect(byType('tool.denied', 'c4')).toMatchObject({
      reason: 'approval_denied',
      message: 'a human denied this call: only notes.txt, please',
    });
    expect(byType('run.completed')).toMatchObject({
      outcome: 'completed',
      reason: 'final_answer',
      text: 'All done.',
    });
    expect(cli.out()).not.toContain('hunter2');
    expect(cli.err()).not.toContain('hunter2');
    expect(readFileSync(join(ws.project, 'notes.txt'), 'utf8')).toBe('password=hunter2hunter2\n');
    expect(existsSync(join(ws.project, 'other.txt'))).toBe(false);
    const shown = snotra(['inbox', 'show', String(second.approvalId), '--config', ws.config]);
    expect(shown.stdout).toMatch(/\n {2}decision: denied by local:[^:]+: only notes\.txt, please\n/);
  }, 120_000);

  it('--unattended parks (exit 20, the Inbox id printed); --resume waits while undecided, then finishes the run once after `snotra inbox approve`', async () => {
    const ws = workspace([
      {
        respond: {
          kind: 'calls',
          calls: [{ id: 'c1', tool: 'write_file', args: { path: 'out.txt', content: 'once' } }],
        },
      },
      { expect: { kind: 'tool.result', tool: 'write_file' }, respond: { kind: 'final', text: 'written' } },
    ]);
    const parked = snotra(['run', '--config', ws.config, '--json', '--unattended', 'write it']);
    expect(parked.status).toBe(20);
    const events = parked.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Event);
    const requested = events.find((e) => e.type === 'approval.requested') as Event;
    expect(requested).toMatchObject({ interaction: 'unattended', tool: 'write_file' });
    expect(events.at(-1)).toMatchObject({ type: 'run.parked', approvalId: requested.approvalId });
    const runId = String(requested.runId);
    expect(existsSync(join(ws.project, 'out.txt'))).toBe(false);

    const text = snotra(['run', '--config', ws.config, '--resume', runId]);
    expect(text.status).toBe(20);
    expect(text.stdout).toContain(`waits for approval ${String(requested.approvalId)}`);

    const approve = snotra([
      'inbox',
      'approve',
      String(requested.approvalId),
      '--config',
      ws.config,
      '--json',
    ]);
    expect(JSON.parse(approve.stdout)).toMatchObject({ status: 'approved', runtimeNotified: false });

    const resumed = snotra(['run', '--config', ws.config, '--json', '--resume', runId]);
    expect(resumed.stderr).not.toContain('"level":50');
    expect(resumed.status).toBe(0);
    const after = resumed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Event);
    expect(after.map((e) => e.type)).toEqual([
      'approval.resolved',
      'tool.completed',
      'model.text',
      'run.completed',
    ]);
    expect(after[0]).toMatchObject({ decision: 'approved', approvalId: requested.approvalId });
    expect(after[1]).toMatchObject({ callId: 'c1', ok: true });
    expect(after[3]).toMatchObject({ text: 'written' });
    expect(readFileSync(join(ws.project, 'out.txt'), 'utf8')).toBe('once');

    // Resuming a finished run runs nothing again.
    const again = snotra(['run', '--config', ws.config, '--json', '--resume', runId]);
    expect(again.status).toBe(0);
    const kinds = auditKinds(ws.stateDir, runId);
    expect(kinds.filter((k) => k === 'started')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'completed')).toHaveLength(1);
  }, 120_000);

  it('shows a sub-agent’s events under its own run id with the parent’s as parentRunId; --agent picks among several', async () => {
    const ws = runWorkspace(
      [
        {
          respond: {
            kind: 'calls',
            calls: [{ id: 'c1', tool: 'spawn_agent', args: { profile: 'explorer', task: 'look' } }],
          },
        },
        {
          expect: { kind: 'tool.result', tool: 'spawn_agent', contains: 'child saw it' },
          respond: { kind: 'final', text: 'parent done' },
        },
      ],
      {},
      {
        explorer: [
          {
            respond: {
              kind: 'calls',
              calls: [
                { id: 'e1', tool: 'read_file', args: { path: 'a.txt' } },
                { id: 'e2', tool: 'write_file', args: { path: 'z.txt', content: 'no' } },
              ],
            },
          },
          { respond: { kind: 'final', text: 'child saw it' } },
        ],
      },
    );
    spaces.push(ws);
    writeFileSync(join(ws.project, 'a.txt'), 'hi');
    expect(snotra(['run', '--config', ws.config, 'no agent picked']).stderr).toContain(
      'pick one with --agent',
    );
    const r = snotra(['run', '--config', ws.config, '--agent', 'worker', '--json', 'go']);
    expect(r.status).toBe(0);
    const events = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Event);
    const parent = events[0]?.runId as string;
    const child = `${parent}/c1`;
    const childEvents = events.filter((e) => e.runId === child);
    expect(childEvents.every((e) => e.parentRunId === parent && e.agentId === 'explorer')).toBe(true);
    expect(childEvents.map((e) => `${e.type}${e.callId ? `:${String(e.callId)}` : ''}`)).toEqual([
      'run.started',
      'tool.proposed:e1',
      'tool.decided:e1',
      'tool.completed:e1',
      'tool.proposed:e2',
      'tool.decided:e2',
      'tool.denied:e2',
      'model.text',
      'run.completed',
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', runId: parent, text: 'parent done' });
    expect(existsSync(join(ws.project, 'z.txt'))).toBe(false);
  }, 60_000);

  it('--unattended without --json prints the parked line and the Inbox id last', () => {
    const ws = workspace([
      { respond: { kind: 'calls', calls: [{ id: 'c1', tool: 'shell', args: { command: 'touch made' } }] } },
    ]);
    const r = snotra(['run', '--config', ws.config, '--unattended', 'touch it']);
    expect(r.status).toBe(20);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('▸ shell  approval-required (mode_ask)  touch made');
    expect(lines).toContainEqual(expect.stringMatching(/^approval apr:worker:.*:c1 is in the Inbox$/));
    expect(lines.at(-2)).toMatch(/^parked: approval apr:worker:.*:c1 waits in the Inbox/);
    expect(lines.at(-1)).toMatch(/^apr:worker:[0-9a-f-]+:c1$/);
    expect(existsSync(join(ws.project, 'made'))).toBe(false);
  }, 60_000);

  it('reads the message from stdin with `-` and fails with exit 1 when the model fails', () => {
    const ws = workspace([{ respond: { kind: 'final', text: 'from stdin' } }]);
    const ok = snotra(['run', '--config', ws.config, '-'], 'hello\nthere\n');
    expect(ok.status).toBe(0);
    expect(ok.stdout).toBe('from stdin\n');
    // The script has one step: a second run of the same agent asks step 0 again, so break the script.
    writeFileSync(join(ws.dir, 'steps.json'), JSON.stringify([]));
    const failed = snotra(['run', '--config', ws.config, '--json', 'again']);
    expect(failed.status).toBe(1);
    const last = JSON.parse(failed.stdout.trim().split('\n').at(-1) as string) as Event;
    expect(last).toMatchObject({ type: 'run.failed', outcome: 'failed', reason: 'model_error' });
    expect(String(last.message)).toContain('unexpected_step');
  }, 60_000);
});

describe('snotra run usage', () => {
  const io = () => {
    const out: string[] = [];
    const err: string[] = [];
    return {
      out,
      err,
      io: {
        stdout: (t: string) => void out.push(t),
        stderr: (t: string) => void err.push(t),
        stdinLines: async function* () {
          yield '';
        },
      },
    };
  };

  it.each([
    [['run', '--config', 'CONFIG'], 'a message is needed'],
    [['run', '--config', 'CONFIG', 'one', 'two'], 'as one argument'],
    [['run', '--config', 'CONFIG', '--agent', 'nobody', 'hi'], '--agent "nobody" is not an agent'],
    [['run', '--config', 'CONFIG', '--resume', 'r', 'hi'], '--resume takes no message'],
    [['run', '--config', 'CONFIG', '--bogus', 'hi'], "Unknown option '--bogus'"],
    [['run', '--config', 'CONFIG', '-'], 'the message on stdin is empty'],
    [['run', '--config', 'CONFIG', '   '], 'the message is empty'],
  ])('%j exits 2 naming the problem', async (argv, message) => {
    const ws = workspace([]);
    const t = io();
    const code = await runCli(
      argv.map((a) => (a === 'CONFIG' ? ws.config : a)),
      t.io,
      ws.dir,
    );
    expect(code).toBe(2);
    expect(t.err.join('')).toContain(message);
  });

  it('--resume of an unknown run fails with exit 1 naming it', async () => {
    const ws = workspace([{ respond: { kind: 'final', text: 'x' } }]);
    expect(snotra(['run', '--config', ws.config, 'make state']).status).toBe(0);
    const t = io();
    expect(await runCli(['run', '--config', ws.config, '--resume', 'worker:nope'], t.io, ws.dir)).toBe(1);
    expect(t.err.join('')).toContain('no run "worker:nope"');
  }, 60_000);
});
