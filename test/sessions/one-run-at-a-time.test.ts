import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel, type ScriptedStep } from '../../actors/model/scripted.ts';
import type { ModelProvider, ModelStepRequest } from '../../actors/model/provider.ts';
import { SessionBusyError } from '../../runtime/sessions/errors.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';
import { openStore, Redactor } from '../../store/index.ts';
import { join } from 'node:path';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';

let fx: RuntimeFixture | null = null;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
  fx = null;
});

const NOTIFY: ScriptedStep[] = [
  {
    respond: {
      kind: 'calls',
      calls: [{ id: 'c1', tool: 'send_message', args: { channel: '#ops', text: 'done' } }],
    },
  },
  { expect: { kind: 'tool.result', tool: 'send_message' }, respond: { kind: 'final', text: 'notified' } },
];

/**
 * A scripted model that also records what each step was sent; a run whose newest user message
 * is `anything else?` is answered at once (scripts restart at step 0 for every run).
 */
class Recording implements ModelProvider {
  readonly seen: ModelStepRequest[] = [];
  constructor(private readonly inner: ModelProvider) {}
  async step(request: ModelStepRequest) {
    this.seen.push(request);
    const last = request.transcript.at(-1);
    if (last?.role === 'user' && last.text === 'anything else?')
      return { kind: 'final' as const, text: 'second' };
    return this.inner.step(request);
  }
}

const config = { agents: { worker: { mode: 'ask' }, helper: { mode: 'ask' } } };

async function parkedApproval(runtime: Runtime, runId: string) {
  return eventually(
    () =>
      runtimeInternals(runtime)
        .store.approvals.listPending({})
        .find((a) => a.runId === runId),
    10_000,
    'the run parked on its approval',
  );
}

describe('one run holds a session at a time', () => {
  it('a second message while a run is parked is refused with session_busy; after the run ends the session takes it, with the history', async () => {
    fx = runtimeFixture(config);
    const model = new Recording(
      new ScriptedModel({ worker: NOTIFY, helper: [{ respond: { kind: 'final', text: 'hi' } }] }),
    );
    rt = await fx.start(model);
    const first = await rt.runs.submit('worker', 'tell #ops', {
      sessionId: 'ops',
      interaction: 'unattended',
    });
    const approval = await parkedApproval(rt, first);

    const busy = await rt.runs
      .submit('worker', 'anything else?', { sessionId: 'ops' })
      .then(() => null)
      .catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(SessionBusyError);
    expect(busy).toMatchObject({ code: 'session_busy', sessionId: 'ops', runId: first });
    expect((busy as Error).message).toBe(
      `session "ops" is busy: run ${first} is still waiting for approval; decide its approval (snotra inbox) or wait for it to end, then send again`,
    );
    // Look-alikes: a run on its own with the same session id, and another session, are not held back.
    const alone = await rt.runs.submit('helper', 'hi', { sessionId: 'ops', conversation: false });
    expect(await rt.waitForRun(alone)).toMatchObject({ status: 'completed' });
    const elsewhere = await rt.runs.submit('helper', 'hi', { sessionId: 'other' });
    expect(await rt.waitForRun(elsewhere)).toMatchObject({ status: 'completed' });
    expect(rt.sessions.get('ops')).toMatchObject({ activeRunId: first, runs: 0 });

    expect(rt.decide(approval.id, 'approved', 'local:me')).toMatchObject({ ok: true });
    expect(await rt.waitForRun(first)).toMatchObject({ status: 'completed', text: 'notified' });
    expect(fx.sent()).toEqual(['#ops done']);

    // Tried again once the run ended: the session is free, and its history comes first.
    const second = await rt.runs.submit('worker', 'anything else?', { sessionId: 'ops' });
    expect(await rt.waitForRun(second)).toMatchObject({ status: 'completed', text: 'second' });
    const last = model.seen.at(-1) as ModelStepRequest;
    expect(last.transcript.map((e) => e.role)).toEqual([
      'user',
      'assistant',
      'observation',
      'assistant',
      'user',
    ]);
    expect(last.transcript[0]).toEqual({ role: 'user', text: 'tell #ops' });
    expect(last.transcript.at(-1)).toEqual({ role: 'user', text: 'anything else?' });
  });

  it('a run parked across a restart appends its part once, however often it is resumed and ended', async () => {
    fx = runtimeFixture(config);
    rt = await fx.start(new ScriptedModel({ worker: NOTIFY }));
    const runId = await rt.runs.submit('worker', 'tell #ops', {
      sessionId: 'ops',
      interaction: 'unattended',
    });
    const approval = await parkedApproval(rt, runId);
    await rt.stop();

    rt = await fx.start(new ScriptedModel({ worker: NOTIFY }));
    expect(rt.sessions.get('ops')).toMatchObject({ activeRunId: runId, runs: 0, entries: 0 });
    expect(rt.decide(approval.id, 'approved', 'local:me')).toMatchObject({ ok: true });
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed' });
    expect(rt.sessions.get('ops')).toMatchObject({ activeRunId: null, runs: 1, entries: 4 });
    // The end is told again (a repair at boot, a second delivery): nothing more is appended.
    const store = runtimeInternals(rt).store;
    const ctx = runtimeInternals(rt).runs.contextOf(runId);
    expect(ctx).not.toBeNull();
    runtimeInternals(rt).sessions.runEnded(ctx as NonNullable<typeof ctx>);
    expect(store.sessions.entries('ops')).toHaveLength(4);
    await rt.stop();
    rt = await fx.start(new ScriptedModel({}));
    expect(rt.sessions.get('ops')).toMatchObject({ runs: 1, entries: 4 });
    expect(fx.sent()).toEqual(['#ops done']);
  });

  it('a run that ended but was not appended (a crash in between) is appended at the next boot, once', async () => {
    fx = runtimeFixture(config);
    rt = await fx.start(new ScriptedModel({ worker: [{ respond: { kind: 'final', text: 'hello' } }] }));
    const runId = await rt.runs.submit('worker', 'hi', { sessionId: 'crashy' });
    expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed' });
    await rt.stop();
    rt = null;
    // The crash: the run's end is stored, its append is not (the session still names it as holder).
    const store = openStore({ path: join(fx.stateDir, 'snotra.db'), redactor: new Redactor() });
    const db = store.connection;
    db.prepare('DELETE FROM session_entries').run();
    db.prepare('DELETE FROM session_runs').run();
    db.prepare(
      "UPDATE sessions SET entries = 0, runs = 0, active_run_id = ? WHERE session_id = 'crashy'",
    ).run(runId);
    store.close();

    rt = await fx.start(new ScriptedModel({}));
    expect(rt.sessions.get('crashy')).toMatchObject({ activeRunId: null, runs: 1, entries: 2 });
    expect(rt.sessions.messages('crashy').map((m) => m.entry)).toEqual([
      { role: 'user', text: 'hi' },
      { role: 'assistant', text: 'hello' },
    ]);
    await rt.stop();
    rt = await fx.start(new ScriptedModel({}));
    expect(rt.sessions.get('crashy')).toMatchObject({ runs: 1, entries: 2 });
  });

  it('a message that comes by the bus (a platform chat) is never refused: it starts with the history as it is, and both parts are appended', async () => {
    fx = runtimeFixture(config);
    const model = new Recording(new ScriptedModel({ worker: NOTIFY }));
    rt = await fx.start(model);
    const message = (messageId: string, text: string) => ({
      messageId,
      sessionId: 'platform:tg:1',
      taskId: null,
      parentRunId: null,
      surface: 'platform',
      interaction: 'unattended' as const,
      text,
      conversation: true,
    });
    await rt.runs.send('worker', message('m1', 'tell #ops'));
    const approval = await parkedApproval(rt, 'worker:m1');
    await rt.runs.send('worker', message('m2', 'anything else?'));
    expect(await rt.waitForRun('worker:m2')).toMatchObject({ status: 'completed', text: 'second' });
    // m1 held the session and had not ended: m2 saw no history, and m1 still holds it.
    expect(model.seen.at(-1)?.transcript).toEqual([{ role: 'user', text: 'anything else?' }]);
    expect(rt.sessions.get('platform:tg:1')).toMatchObject({ activeRunId: 'worker:m1', runs: 1, entries: 2 });
    expect(rt.decide(approval.id, 'approved', 'local:me')).toMatchObject({ ok: true });
    expect(await rt.waitForRun('worker:m1')).toMatchObject({ status: 'completed' });
    expect(rt.sessions.get('platform:tg:1')).toMatchObject({ activeRunId: null, runs: 2, entries: 6 });
    expect(rt.sessions.messages('platform:tg:1').map((m) => m.runId)).toEqual([
      'worker:m2',
      'worker:m2',
      'worker:m1',
      'worker:m1',
      'worker:m1',
      'worker:m1',
    ]);
  });
});
