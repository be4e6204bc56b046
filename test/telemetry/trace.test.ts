import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { jetstream } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../actors/model/scripted.ts';
import { encodeEnvelope, subject, traceHeaders, TRACEPARENT_HEADER } from '../../runtime/bus/index.ts';
import { RUNTIME_KINDS } from '../../runtime/messages.ts';
import type { Runtime } from '../../runtime/runtime.ts';
import { runtimeInternals } from '../../runtime/testing.ts';
import { eventually, runtimeFixture, type RuntimeFixture } from '../support/runtime.ts';
import { OtlpReceiver, type ExportedSpan } from './otlp-receiver.ts';
import { renderWaterfall } from './waterfall.ts';

const KEY_VAR = 'OTLP_TRACE_TEST_API_KEY';
const SECRET = `otel-secret-${randomBytes(12).toString('hex')}`;
const usage = { inputTokens: 120, outputTokens: 7 };

const receiver = new OtlpReceiver();
beforeAll(async () => {
  process.env[KEY_VAR] = SECRET;
  await receiver.start();
});
afterAll(async () => {
  delete process.env[KEY_VAR];
  await receiver.stop();
});

function fixture(captureContent: boolean): RuntimeFixture {
  return runtimeFixture({
    agents: {
      lead: {
        mode: 'ask',
        model: { provider: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1', model: 'lead-model-1' },
      },
    },
    telemetry: {
      otlp: { endpoint: receiver.url, headers: { 'x-api-key': { env: KEY_VAR } } },
      captureContent,
    },
  });
}

/**
 * lead spawns an explorer (one list_dir) with the secret in its task, then asks to send a
 * message: with the secret when the run does not cross a restart (arguments holding a secret
 * are not kept across one: the call would be interrupted).
 */
function model(secretInSend: boolean): ScriptedModel {
  return new ScriptedModel({
    lead: [
      {
        respond: {
          kind: 'calls',
          calls: [
            {
              id: 's1',
              tool: 'spawn_agent',
              args: { profile: 'explorer', task: `look around, key ${SECRET}`, tools: ['list_dir'] },
            },
          ],
          usage,
        },
      },
      {
        expect: { kind: 'tool.result', tool: 'spawn_agent' },
        respond: {
          kind: 'calls',
          calls: [
            {
              id: 'm1',
              tool: 'send_message',
              args: { channel: '#ops', text: secretInSend ? `key is ${SECRET}` : 'all clear' },
            },
          ],
          usage,
        },
      },
      {
        expect: { kind: 'tool.result', tool: 'send_message' },
        respond: { kind: 'final', text: 'done', usage },
      },
    ],
    explorer: [
      { respond: { kind: 'calls', calls: [{ id: 'e1', tool: 'list_dir', args: { path: '.' } }] } },
      { expect: { kind: 'tool.result', tool: 'list_dir' }, respond: { kind: 'final', text: 'seen it' } },
    ],
  });
}

/** The send_message executor answers with the secret in its result. */
function leakyResult(fx: RuntimeFixture): void {
  fx.executors.send_message = { execute: async () => ({ delivered: true, echo: `sent with ${SECRET}` }) };
}

function byName(spans: ExportedSpan[], name: string): ExportedSpan[] {
  return spans.filter((s) => s.name === name);
}

describe('OpenTelemetry export', () => {
  it('a run with a sub-agent, a tool call and an approval parked across a restart is one trace, with the GenAI attributes and no secret', async () => {
    const fx = fixture(true);
    leakyResult(fx);
    const scripted = model(false);
    let rt: Runtime | null = await fx.start(scripted);
    try {
      const runId = await rt.runs.runTask('lead', 'nightly', 'look around, then tell #ops');
      const pending = await eventually(
        () => (rt && runtimeInternals(rt))?.store.approvals.listPending({ taskId: 'nightly' })[0],
        30_000,
        'the send_message approval',
      );
      await eventually(() => !(rt && runtimeInternals(rt))?.runs.isLive(runId), 30_000, 'the run to park');
      const stored = runtimeInternals(rt).store.runTraces.get(runId);
      expect(stored?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      await rt.stop();
      rt = await fx.start(scripted);
      expect(rt.decide(pending.id, 'approved', 'alice').ok).toBe(true);
      const outcome = await rt.waitForRun(runId);
      expect(outcome, JSON.stringify(outcome)).toMatchObject({ status: 'completed', text: 'done' });
      expect(fx.sent()).toEqual([]); // the executor was replaced: nothing else ran it
      await rt.stop();
      rt = null;

      const spans = receiver.spans();
      const traceId = stored!.traceparent.split('-')[1];
      const ours = spans.filter((s) => s.attrs['snotra.run.id'] === runId || s.traceId === traceId);
      // One trace id, first span to last: before the park and after the restart.
      expect(new Set(ours.map((s) => s.traceId))).toEqual(new Set([traceId]));
      const ids = new Map(ours.map((s) => [s.spanId, s]));
      // Every parent is in the trace (the first invoke_agent is the root).
      for (const s of ours) if (s.parentSpanId !== '') expect(ids.has(s.parentSpanId), s.name).toBe(true);

      const runs = byName(ours, 'invoke_agent lead');
      expect(runs).toHaveLength(2); // the part before the park, and the resumed part under it
      const [first, resumed] = runs as [ExportedSpan, ExportedSpan];
      expect(first.parentSpanId).toBe('');
      expect(first.attrs).toMatchObject({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'lead',
        'snotra.run.id': runId,
        'snotra.task.id': 'nightly',
        'snotra.run.parked': true,
      });
      expect(typeof first.attrs['gen_ai.conversation.id']).toBe('string');
      expect(resumed.parentSpanId).toBe(first.spanId);
      expect(resumed.attrs).toMatchObject({ 'snotra.run.resumed': true, 'snotra.run.outcome': 'completed' });

      // The sub-agent's run is a child of the lead's spawn_agent call.
      const spawn = byName(ours, 'execute_tool spawn_agent')[0]!;
      const child = byName(ours, 'invoke_agent explorer')[0]!;
      expect(child.parentSpanId).toBe(spawn.spanId);
      expect(child.attrs['snotra.run.parent_id']).toBe(runId);
      const listDir = byName(ours, 'execute_tool list_dir')[0]!;
      expect(listDir.parentSpanId).toBe(child.spanId);
      expect(listDir.attrs).toMatchObject({
        'gen_ai.tool.name': 'list_dir',
        'gen_ai.tool.call.id': 'e1',
        'snotra.policy.decision': 'allow',
        'snotra.policy.human_required': false,
      });

      // Model calls: request model and token usage.
      const chats = byName(ours, 'chat lead-model-1');
      expect(chats).toHaveLength(3);
      for (const c of chats)
        expect(c.attrs).toMatchObject({
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'lead-model-1',
          'gen_ai.usage.input_tokens': 120,
          'gen_ai.usage.output_tokens': 7,
        });

      // The call that needed a human: its decision before the park, its approval wait after.
      const sends = byName(ours, 'execute_tool send_message');
      expect(sends[0]!.attrs).toMatchObject({
        'gen_ai.tool.call.id': 'm1',
        'snotra.policy.decision': 'approval-required',
        'snotra.policy.reason': 'mode_ask',
        'snotra.policy.human_required': true,
        'snotra.tool.parked': true,
      });
      expect(typeof sends[0]!.attrs['snotra.policy.rule']).toBe('string');
      const wait = byName(ours, 'await_approval')[0]!;
      expect(wait.attrs).toMatchObject({
        'snotra.approval.id': pending.id,
        'snotra.approval.decision': 'approved',
        'snotra.approval.decided_by': 'alice',
      });
      expect(wait.start).toBe(pending.createdAt);
      expect(sends[1]!.attrs).toMatchObject({
        'snotra.tool.resumed': true,
        'snotra.policy.human_required': true,
      });
      expect(String(sends[1]!.attrs['gen_ai.tool.call.result'])).toContain('[REDACTED]');
      expect(String(sends[0]!.attrs['gen_ai.tool.call.arguments'])).toContain('#ops');
      expect(String(spawn.attrs['gen_ai.tool.call.arguments'])).toContain('look around, key [REDACTED]');

      // The header secret reached the receiver as a header, and never in any exported byte.
      expect(receiver.requests.every((r) => r.headers['x-api-key'] === SECRET)).toBe(true);
      expect(receiver.allBytes().includes(Buffer.from(SECRET))).toBe(false);
      expect(receiver.allBytes().includes(Buffer.from(SECRET.slice(0, 20)))).toBe(false);

      // The picture in docs/telemetry.md: SNOTRA_TRACE_SVG=docs/screenshots/telemetry-trace.svg.
      const svgPath = process.env.SNOTRA_TRACE_SVG;
      if (svgPath !== undefined) writeFileSync(svgPath, renderWaterfall(ours));

      const metrics = receiver.metricNames();
      for (const m of [
        'snotra.runs.started',
        'snotra.runs.ended',
        'snotra.policy.decisions',
        'snotra.approvals.waiting',
        'snotra.approval.wait',
        'snotra.tool.duration',
        'gen_ai.client.token.usage',
      ])
        expect(metrics.has(m), m).toBe(true);
    } finally {
      await rt?.stop();
      fx.cleanup();
    }
  });

  it('a message to an agent that comes with a traceparent header starts a run inside that trace', async () => {
    const fx = fixture(false);
    const rt = await fx.start(new ScriptedModel({ lead: [{ respond: { kind: 'final', text: 'ok' } }] }));
    const callerTrace = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const message = {
      messageId: 'from-a-traced-service',
      sessionId: 'svc:1',
      taskId: null,
      parentRunId: null,
      surface: 'cli',
      interaction: 'unattended' as const,
      text: 'hello',
    };
    const runId = `lead:${message.messageId}`;
    try {
      // Published by someone else on the bus (a service with its own trace), not by the runtime.
      const { json } = encodeEnvelope(RUNTIME_KINDS, 'agent.message', message, 'a-service');
      const headers = traceHeaders({ traceparent: `00-${callerTrace}-${callerSpan}-01` });
      await jetstream(runtimeInternals(rt).bus.nats).publish(subject('agent', 'lead', 'message'), json, {
        msgID: message.messageId,
        ...(headers !== undefined ? { headers } : {}),
      });
      await eventually(
        () => runtimeInternals(rt).store.snapshots.get(runId)?.status === 'completed',
        30_000,
        'the run the message started to complete',
      );
    } finally {
      await rt.stop();
      fx.cleanup();
    }
    const span = receiver
      .spans()
      .find((s) => s.name === 'invoke_agent lead' && s.attrs['snotra.run.id'] === runId);
    expect(span?.traceId).toBe(callerTrace);
    expect(span?.parentSpanId).toBe(callerSpan);
  });

  it('a goal’s first iteration starts a trace of its own; the next, sent by the runtime, continues it under the run before it', async () => {
    const fx = runtimeFixture({
      agents: { worker: { mode: 'ask' } },
      surfaces: { goalLoops: [{ id: 'g', agent: 'worker', objective: 'tidy up', maxIterations: 2 }] },
      telemetry: { otlp: { endpoint: receiver.url } },
    });
    const rt = await fx.start(
      new ScriptedModel({ worker: [{ respond: { kind: 'final', text: 'not yet' } }] }),
    );
    // The messages the runtime sends the agent, as any subscriber of the bus sees them.
    const sent: string[] = [];
    runtimeInternals(rt).bus.nats.subscribe(subject('agent', 'worker', 'message'), {
      callback: (_err, m) => {
        sent.push(m.headers?.get(TRACEPARENT_HEADER) ?? '');
      },
    });
    try {
      expect(rt.goals.control('g', 'start', 'alice').result).toBe('ok');
      await eventually(
        () => {
          const g = runtimeInternals(rt).store.goals.get('g');
          return g !== null && g.status !== 'active' && g.status !== 'paused';
        },
        30_000,
        'the goal to stop after two iterations',
      );
      await eventually(() => sent.length === 2, 10_000, 'both iteration messages on the bus');
    } finally {
      await rt.stop();
      fx.cleanup();
    }
    const spanOf = (runId: string) =>
      receiver.spans().find((s) => s.name === 'invoke_agent worker' && s.attrs['snotra.run.id'] === runId);
    const first = spanOf('worker:goal:g:1:1');
    const second = spanOf('worker:goal:g:1:2');
    expect(first?.parentSpanId).toBe(''); // started by a human: nothing traced sent it
    expect(second?.traceId).toBe(first?.traceId);
    expect(second?.parentSpanId).toBe(first?.spanId);
    // The first message has no trace context; the second carries the first run's.
    expect(sent[0]).toBe('');
    expect(sent[1]).toBe(`00-${first?.traceId}-${first?.spanId}-01`);
  });

  it('without captureContent no argument, result or model text is exported', async () => {
    const fx = fixture(false);
    leakyResult(fx);
    const before = receiver.requests.length;
    const rt = await fx.start(model(true));
    try {
      const runId = await rt.runs.runTask('lead', 'plain', 'go');
      const pending = await eventually(
        () => runtimeInternals(rt).store.approvals.listPending({ taskId: 'plain' })[0],
        30_000,
        'the approval',
      );
      expect(rt.decide(pending.id, 'approved', 'bob').ok).toBe(true);
      expect(await rt.waitForRun(runId)).toMatchObject({ status: 'completed' });
    } finally {
      await rt.stop();
      fx.cleanup();
    }
    const bytes = Buffer.concat(receiver.requests.slice(before).map((r) => r.body)).toString('utf8');
    expect(bytes).toContain('execute_tool send_message');
    for (const key of [
      'gen_ai.tool.call.arguments',
      'gen_ai.tool.call.result',
      'gen_ai.output.messages',
      '#ops',
      'seen it',
    ])
      expect(bytes, key).not.toContain(key);
    expect(bytes).not.toContain(SECRET);
  });
});
