import { jetstream } from '@nats-io/jetstream';
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';

let fx: RuntimeFixture;
let rt: Runtime | null = null;
afterEach(async () => {
  await rt?.stop();
  rt = null;
  fx?.cleanup();
});

describe('bad input on the bus', () => {
  it('drops and counts malformed agent messages, logs no body, and keeps serving valid ones', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'ask' } } });
    const model = new ScriptedModel({ worker: [{ respond: { kind: 'final', text: 'hello' } }] });
    rt = await fx.start(model);
    const js = jetstream(runtimeInternals(rt).bus.nats);
    const subject = 'snotra.v1.agent.worker.message';
    const secretish = 'sk-live-should-never-be-logged';
    await js.publish(subject, `not json ${secretish}`);
    await js.publish(
      subject,
      JSON.stringify({ v: 99, id: 'x', kind: 'agent.message', ts: 'now', source: 's', payload: {} }),
    );
    await js.publish(
      subject,
      JSON.stringify({
        v: 1,
        id: 'e3b0c442-98fc-1c14-9afb-f4c8996fb924',
        kind: 'agent.message',
        ts: new Date().toISOString(),
        source: 's',
        payload: { text: secretish },
      }),
    );
    await eventually(
      () => runtimeInternals(rt!).queue.invalid >= 3,
      10_000,
      'three invalid messages counted',
    );
    const runId = await rt.runs.runTask('worker', 't1', 'say hello');
    expect(await rt.waitForRun(runId)).toEqual({
      status: 'completed',
      reason: 'final_answer',
      text: 'hello',
    });
    expect(fx.logs.join('')).not.toContain(secretish);
    expect(fx.logs.join('')).toContain('invalid agent message dropped');
  });

  it('a model step that fails ends the run failed with a clear reason, and the runtime goes on', async () => {
    fx = runtimeFixture({ agents: { worker: { mode: 'ask' } } });
    const model = new ScriptedModel({ worker: [] });
    rt = await fx.start(model);
    const runId = await rt.runs.runTask('worker', 't1', 'anything');
    expect(await rt.waitForRun(runId)).toEqual({
      status: 'failed',
      reason: 'model_error',
      message: expect.stringMatching(/the script has only 0 steps/),
    });
    await expect(rt.runs.runTask('nobody', 't', 'x')).rejects.toThrow(/unknown agent "nobody"/);
  });
});
