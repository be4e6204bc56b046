import { afterAll, describe, expect, it } from 'vitest';
import { runCliInProcess } from '../support/cli-in-process.ts';
import { runWorkspace, type RunWorkspace } from '../cli/run-helpers.ts';

const spaces: RunWorkspace[] = [];
afterAll(() => {
  for (const s of spaces) s.cleanup();
});

/** A workspace whose agent answers every message at once (each run replays step 0). */
function workspace(): RunWorkspace {
  const ws = runWorkspace([{ respond: { kind: 'final', text: 'noted' } }]);
  spaces.push(ws);
  return ws;
}

const cli = (ws: RunWorkspace, ...argv: string[]) => runCliInProcess(argv, ws.dir);

describe('snotra run --session / --continue and snotra sessions', () => {
  it('continues a named session, then the latest one with --continue; lists, shows and removes it', async () => {
    const ws = workspace();
    expect(await cli(ws, 'run', '--session', 'notes', 'remember the colour teal')).toMatchObject({ code: 0 });
    expect(await cli(ws, 'run', '--continue', 'which colour?')).toMatchObject({ code: 0 });

    const list = await cli(ws, 'sessions', 'list', '--json');
    expect(list.code).toBe(0);
    const sessions = list.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(sessions).toEqual([
      expect.objectContaining({
        sessionId: 'notes',
        agentId: 'worker',
        runs: 2,
        entries: 4,
        activeRunId: null,
        title: 'remember the colour teal',
        workspace: ws.project,
      }),
    ]);

    const shown = await cli(ws, 'sessions', 'show', 'notes', '--json');
    expect(shown.code).toBe(0);
    const body = JSON.parse(shown.out) as { messages: { seq: number; entry: unknown }[]; usage: unknown };
    // The scripted model reports no tokens: the session's usage is null (summed when reported).
    expect(body.usage).toBeNull();
    expect(body.messages.map((m) => m.entry)).toEqual([
      { role: 'user', text: 'remember the colour teal' },
      { role: 'assistant', text: 'noted' },
      { role: 'user', text: 'which colour?' },
      { role: 'assistant', text: 'noted' },
    ]);
    const text = await cli(ws, 'sessions', 'show', 'notes');
    expect(text.out.split('\n').slice(1, 3)).toEqual([
      '0  user: remember the colour teal',
      '1  assistant: noted',
    ]);

    expect(await cli(ws, 'sessions', 'rm', 'notes', '--json')).toMatchObject({
      code: 0,
      out: '{"removed":"notes"}\n',
    });
    const gone = await cli(ws, 'sessions', 'show', 'notes', '--json');
    expect(gone.code).toBe(1);
    expect(JSON.parse(gone.out)).toEqual({
      error: { code: 'session_not_found', message: 'no session "notes"' },
    });
    expect((await cli(ws, 'sessions', 'rm', 'notes')).code).toBe(1);
  });

  it('--continue with no conversation yet fails naming the workspace; bad flags are usage errors', async () => {
    const ws = workspace();
    const none = await cli(ws, 'run', '--continue', 'hello');
    expect(none.code).toBe(1);
    expect(none.err).toContain(`--continue: no conversation yet in this workspace (${ws.project})`);
    const both = await cli(ws, 'run', '--session', 's', '--continue', 'hello');
    expect(both.code).toBe(2);
    expect(both.err).toContain('give --session S or --continue, not both');
    const control = await cli(ws, 'run', '--session', 'a\u001bb', 'hello');
    expect(control.code).toBe(2);
    expect(control.err).toContain('--session: a session name must not contain control characters');
    const resume = await cli(ws, 'run', '--resume', 'worker:x', '--continue');
    expect(resume.code).toBe(2);
    expect((await cli(ws, 'sessions', 'show')).code).toBe(2);
    expect((await cli(ws, 'sessions', 'list', 'extra')).code).toBe(2);
  });

  it('a plain run begins its own session, which --continue then continues', async () => {
    const ws = workspace();
    expect((await cli(ws, 'run', 'first')).code).toBe(0);
    expect((await cli(ws, 'run', '--continue', 'second')).code).toBe(0);
    const list = (await cli(ws, 'sessions', 'list', '--json')).out.trim().split('\n');
    expect(list).toHaveLength(1);
    expect(JSON.parse(list[0] as string)).toMatchObject({
      runs: 2,
      entries: 4,
      sessionId: expect.stringMatching(/^cli:/),
    });
  });
});
