import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { ModelProvider, ModelStepRequest } from '../../actors/model/provider.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { startSidecar, type Sidecar } from '../../surfaces/sidecar/server.ts';
import { call } from '../sidecar/client.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';

const TOKEN = 'S'.repeat(16) + 'abcdefghijklmnopqrstuvwxyz012345';
const SECRET = 'hunter2-Vq8Zr3Lm6Tp1Xd9K';

let fx: RuntimeFixture | null = null;
let rt: Runtime | null = null;
let sidecar: Sidecar | null = null;
afterEach(async () => {
  await sidecar?.close();
  await rt?.stop();
  fx?.cleanup();
  sidecar = null;
  rt = null;
  fx = null;
});

/** Answers every step at once, echoing nothing; records what it was sent. */
class Echo implements ModelProvider {
  readonly seen: ModelStepRequest[] = [];
  async step(request: ModelStepRequest) {
    this.seen.push(request);
    return { kind: 'final' as const, text: `answer ${this.seen.length}` };
  }
}

async function boot(model: ModelProvider = new Echo()) {
  fx = runtimeFixture({ agents: { assistant: { mode: 'ask' }, helper: { mode: 'ask' } } });
  rt = await fx.start(model);
  sidecar = await startSidecar({ runtime: rt, token: TOKEN, port: 0, allowedOrigins: [] });
  return { rt, port: sidecar.port };
}

const auth = { Authorization: `Bearer ${TOKEN}` };
const json = { ...auth, 'Content-Type': 'application/json' };

describe('sidecar sessions routes', () => {
  it('POST /v1/sessions creates one, chat messages continue it, GET lists it and its messages', async () => {
    const model = new Echo();
    const { port, rt: runtime } = await boot(model);
    const created = await call(port, 'POST', '/v1/sessions', {
      headers: json,
      body: JSON.stringify({ agent: 'assistant', name: 'plans' }),
    });
    expect(created.status).toBe(201);
    expect(created.json()).toMatchObject({ session: { sessionId: 'plans', agentId: 'assistant', runs: 0 } });
    const unnamed = await call(port, 'POST', '/v1/sessions', {
      headers: json,
      body: '{"agent":"assistant"}',
    });
    expect(unnamed.status).toBe(201);
    expect((unnamed.json() as { session: { sessionId: string } }).session.sessionId).toMatch(/^chat:/);

    for (const text of ['first, the plan', `then keep password=${SECRET} safe`]) {
      const sent = await call(port, 'POST', '/v1/chat/assistant/messages', {
        headers: json,
        body: JSON.stringify({ text, sessionId: 'plans' }),
      });
      expect(sent.status).toBe(202);
      await runtime.waitForRun((sent.json() as { runId: string }).runId);
    }
    // The second run was sent the first exchange first.
    expect(model.seen.at(-1)?.transcript.map((e) => (e.role === 'observation' ? '' : e.text))).toEqual([
      'first, the plan',
      'answer 1',
      `then keep password=${SECRET} safe`,
    ]);

    const list = await call(port, 'GET', '/v1/sessions', { headers: auth });
    expect(list.status).toBe(200);
    const sessions = (list.json() as { sessions: { sessionId: string; runs: number }[] }).sessions;
    expect(sessions.find((s) => s.sessionId === 'plans')).toMatchObject({
      runs: 2,
      title: 'first, the plan',
    });

    const messages = await call(port, 'GET', '/v1/sessions/plans/messages', { headers: auth });
    expect(messages.status).toBe(200);
    const body = messages.json() as { session: { entries: number }; messages: { entry: { text: string } }[] };
    expect(body.session.entries).toBe(4);
    expect(body.messages.map((m) => m.entry.text)[0]).toBe('first, the plan');
    // Stored and shown redacted: the password value never leaves.
    expect(messages.text).not.toContain(SECRET);
    expect(messages.text).toContain('then keep password=');
  });

  it('every session route needs the token, a good Host and an allowed Origin; bad input gets a specific error', async () => {
    const { port } = await boot();
    for (const [method, path] of [
      ['GET', '/v1/sessions'],
      ['POST', '/v1/sessions'],
      ['GET', '/v1/sessions/x/messages'],
    ] as const) {
      expect((await call(port, method, path)).status, `${method} ${path} without a token`).toBe(401);
      expect(
        (await call(port, method, path, { headers: { Authorization: `Bearer ${TOKEN.slice(1)}x` } })).status,
      ).toBe(401);
      expect(
        (await call(port, method, path, { headers: { ...auth, Host: `evil.test:${port}` } })).status,
      ).toBe(403);
      expect(
        (await call(port, method, path, { headers: { ...auth, Origin: 'http://evil.test' } })).status,
      ).toBe(403);
    }
    const missing = await call(port, 'GET', '/v1/sessions/nope/messages', { headers: auth });
    expect(missing.status).toBe(404);
    expect(missing.json()).toEqual({ error: { code: 'session_not_found', message: 'no such session' } });
    const noAgent = await call(port, 'POST', '/v1/sessions', { headers: json, body: '{"agent":"ghost"}' });
    expect(noAgent.status).toBe(404);
    expect(noAgent.json()).toMatchObject({ error: { code: 'unknown_agent' } });
    const extra = await call(port, 'POST', '/v1/sessions', {
      headers: json,
      body: '{"agent":"assistant","x":1}',
    });
    expect(extra.status).toBe(400);
    expect(extra.json()).toMatchObject({ error: { code: 'invalid_body' } });
    const notJson = await call(port, 'POST', '/v1/sessions', {
      headers: { ...auth, 'Content-Type': 'text/plain' },
      body: '{"agent":"assistant"}',
    });
    expect(notJson.status).toBe(415);
    const body = JSON.stringify({ agent: 'assistant', name: 'twice' });
    expect((await call(port, 'POST', '/v1/sessions', { headers: json, body })).status).toBe(201);
    const twice = await call(port, 'POST', '/v1/sessions', { headers: json, body });
    expect(twice.status).toBe(409);
    expect(twice.json()).toMatchObject({ error: { code: 'session_exists' } });
    const control = await call(port, 'POST', '/v1/sessions', {
      headers: json,
      body: JSON.stringify({ agent: 'assistant', name: 'a\nb' }),
    });
    expect(control.status).toBe(400);
    expect(control.json()).toMatchObject({ error: { code: 'invalid_session' } });
  });

  it('a chat message to a session a parked run holds is 409 session_busy', async () => {
    const steps = [
      {
        respond: {
          kind: 'calls' as const,
          calls: [{ id: 'c1', tool: 'send_message', args: { channel: '#a', text: 'x' } }],
        },
      },
    ];
    const { port, rt: runtime } = await boot(new ScriptedModel({ assistant: steps }));
    const runId = await runtime.runs.submit('assistant', 'send it', {
      sessionId: 'held',
      interaction: 'unattended',
    });
    await eventually(
      () => runtime.read.pendingApprovals().find((a) => a.runId === runId),
      10_000,
      'the park',
    );
    const busy = await call(port, 'POST', '/v1/chat/assistant/messages', {
      headers: json,
      body: JSON.stringify({ text: 'hello?', sessionId: 'held' }),
    });
    expect(busy.status).toBe(409);
    expect(busy.json()).toMatchObject({ error: { code: 'session_busy' } });
    expect((busy.json() as { error: { message: string } }).error.message).toContain(
      `run ${runId} is still waiting for approval`,
    );
  });
});
