import { describe, expect, it } from 'vitest';
import { parseRequest } from '../../surfaces/join/server.ts';

const line = (body: Record<string, unknown>) => JSON.stringify({ v: 1, req: 1, ...body });

describe('the join requests of snotra chat', () => {
  it.each([
    [{ type: 'chat-submit', agent: 'assistant', text: 'hi' }],
    [{ type: 'chat-submit', agent: 'assistant', text: 'hi', session: 'joined-1' }],
    [{ type: 'run-control', runId: 'assistant:r1', action: 'interrupt' }],
    [{ type: 'run-control', runId: 'assistant:r1', action: 'cancel', reason: 'a new message' }],
    [{ type: 'sessions', op: 'list' }],
    [{ type: 'sessions', op: 'latest' }],
    [{ type: 'session', op: 'get', session: 's' }],
    [{ type: 'session', op: 'create', agent: 'assistant', session: 'named' }],
    [{ type: 'session', op: 'compact', session: 's' }],
    [{ type: 'agents' }],
    [{ type: 'set-mode', agent: 'assistant', mode: 'allow' }],
    [{ type: 'inbox' }],
    [{ type: 'checkpoints', session: 's' }],
    [{ type: 'roots' }],
    [{ type: 'roots', agent: 'assistant' }],
    [{ type: 'rewind', checkpoint: 'ck-1', dryRun: true, surface: 'chat' }],
  ])('accepts %j', (body) => {
    const parsed = parseRequest(line(body));
    expect(parsed).toEqual({ request: { v: 1, req: 1, ...body } });
  });

  it.each([
    // Each refusal names the field that was wrong.
    [{ type: 'set-mode', agent: 'assistant', mode: 'yolo' }, 'mode'],
    [{ type: 'set-mode', agent: 'assistant', mode: 'ALLOW' }, 'mode'],
    [{ type: 'set-mode', agent: '', mode: 'allow' }, 'agent'],
    [{ type: 'run-control', runId: 'assistant:r1', action: 'kill' }, 'action'],
    [{ type: 'run-control', runId: 'assistant:r1', action: 'resume', reason: 'x'.repeat(2001) }, 'reason'],
    [{ type: 'sessions', op: 'remove' }, 'op'],
    [{ type: 'session', op: 'rm', session: 's' }, 'op'],
    [{ type: 'session', op: 'get', session: 'x'.repeat(513) }, 'session'],
    [{ type: 'chat-submit', agent: 'assistant', text: '' }, 'text'],
    [{ type: 'chat-submit', agent: 'assistant', text: 'x'.repeat(100_001) }, 'text'],
    // Who decides is the server's user, never a field a client sends.
    [{ type: 'set-mode', agent: 'assistant', mode: 'allow', user: 'local:root' }, 'user'],
    [{ type: 'chat-submit', agent: 'assistant', text: 'hi', unattended: true }, 'unattended'],
    [{ type: 'inbox', all: true }, 'all'],
    [{ type: 'rewind', checkpoint: 'ck-1', dryRun: true, surface: 'web' }, 'surface'],
    // The roots read changes nothing: no field may carry roots or a mode to set.
    [{ type: 'roots', agent: '' }, 'agent'],
    [{ type: 'roots', agent: 'x'.repeat(513) }, 'agent'],
    [{ type: 'roots', agent: 7 }, 'agent'],
    [{ type: 'roots', roots: [{ id: 'home', path: '/', access: 'read-write' }] }, 'roots'],
    [{ type: 'roots', agent: 'assistant', mode: 'allow' }, 'mode'],
    [{ type: 'roots', user: 'local:root' }, 'user'],
  ])('refuses %j, naming %s', (body, field) => {
    const parsed = parseRequest(line(body));
    expect('error' in parsed).toBe(true);
    if (!('error' in parsed)) return;
    expect(parsed.error.code).toBe('invalid_request');
    expect(parsed.error.message).toMatch(/^join socket: /);
    expect(parsed.error.message).toContain(field);
  });

  it('refuses an unknown request type and a future version', () => {
    for (const body of [
      { v: 1, req: 1, type: 'set-roots', roots: [] },
      { v: 2, req: 1, type: 'inbox' },
    ]) {
      const parsed = parseRequest(JSON.stringify(body));
      expect(parsed).toMatchObject({ error: { code: 'invalid_request' } });
    }
  });
});
