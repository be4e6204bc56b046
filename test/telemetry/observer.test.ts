import { metrics } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RunFeedEvent } from '../../runtime/events.ts';
import { createMetrics } from '../../runtime/telemetry/metrics.ts';
import { TelemetryObserver } from '../../runtime/telemetry/observer.ts';
import { fromTraceparent, toTraceparent } from '../../runtime/telemetry/trace-context.ts';
import { Redactor } from '../../store/index.ts';
import { runs } from '../support/laws.ts';

const SECRET = 'sk-observer-test-0123456789abcdef';
const head = { runId: 'lead:r1', agentId: 'lead', parentRunId: null };

/** An observer over a real tracer exporting to memory; `traces` is the store it persists to. */
function observer(
  traces: Map<string, { traceparent: string; attrs: Record<string, string> }>,
  captureContent = true,
) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const redactor = new Redactor();
  redactor.registerSecret(SECRET);
  const obs = new TelemetryObserver({
    tracer: provider.getTracer('test'),
    metrics: createMetrics(metrics.getMeter('noop'), () => 0),
    redactor,
    captureContent,
    modelOf: () => ({ provider: 'openai-compatible', model: 'm-1' }),
    saveTrace: (runId, traceparent, attrs) => void traces.set(runId, { traceparent, attrs }),
    loadTrace: (runId) => traces.get(runId) ?? null,
    approval: () => null,
  });
  const send = (ts: number, body: Record<string, unknown>) =>
    obs.listener({ ...head, ts, ...body } as RunFeedEvent);
  return { obs, exporter, send };
}

describe('telemetry observer', () => {
  it('traceparent round-trips any valid span context and refuses malformed or all-zero ones', () => {
    const hex = (n: number) => fc.stringMatching(new RegExp(`^[0-9a-f]{${n}}$`));
    fc.assert(
      fc.property(hex(32), hex(16), fc.boolean(), (traceId, spanId, sampled) => {
        fc.pre(!/^0+$/.test(traceId) && !/^0+$/.test(spanId));
        const ctx = { traceId, spanId, traceFlags: sampled ? 1 : 0, isRemote: true };
        expect(fromTraceparent(toTraceparent(ctx))).toEqual(ctx);
      }),
      { numRuns: runs(100) },
    );
    for (const bad of [
      '',
      '00-abc-def-01',
      `01-${'a'.repeat(32)}-${'b'.repeat(16)}-01`,
      `00-${'0'.repeat(32)}-${'b'.repeat(16)}-01`,
      `00-${'A'.repeat(32)}-${'b'.repeat(16)}-01`,
    ])
      expect(fromTraceparent(bad), bad).toBeNull();
  });

  it('a run seen again by a fresh observer (a restart) continues the stored trace under its first span', () => {
    const traces = new Map<string, { traceparent: string; attrs: Record<string, string> }>();
    const before = observer(traces);
    before.send(1, {
      type: 'run.started',
      sessionId: 's1',
      taskId: 't1',
      interaction: 'unattended',
      surface: 'task',
    });
    before.send(2, { type: 'tool.proposed', callId: 'c1', tool: 'send_message', args: { text: 'x' } });
    before.send(3, { type: 'run.parked', approvalId: 'a1' });
    const after = observer(traces);
    after.send(10, {
      type: 'approval.resolved',
      approvalId: 'a1',
      callId: 'c1',
      decision: 'approved',
      by: 'alice',
      reason: null,
    });
    after.send(11, {
      type: 'tool.completed',
      callId: 'c1',
      tool: 'send_message',
      ok: true,
      content: 'ok',
      truncated: false,
    });
    after.send(12, { type: 'run.completed', outcome: 'completed', reason: 'final_answer', text: 'done' });
    const first = before.exporter.getFinishedSpans().find((s) => s.name === 'invoke_agent lead')!;
    const resumed = after.exporter.getFinishedSpans().find((s) => s.name === 'invoke_agent lead')!;
    expect(resumed.spanContext().traceId).toBe(first.spanContext().traceId);
    expect(resumed.parentSpanContext?.spanId).toBe(first.spanContext().spanId);
    expect(resumed.attributes).toMatchObject({ 'snotra.run.resumed': true, 'gen_ai.conversation.id': 's1' });
    const wait = after.exporter.getFinishedSpans().find((s) => s.name === 'await_approval')!;
    expect(wait.attributes['snotra.approval.decided_by']).toBe('alice');
    expect(
      after.exporter.getFinishedSpans().every((s) => s.spanContext().traceId === first.spanContext().traceId),
    ).toBe(true);
  });

  it('traceOf: the open run span while the run is live, its stored context once parked, null when unseen', () => {
    const traces = new Map<string, { traceparent: string; attrs: Record<string, string> }>();
    const { obs, exporter, send } = observer(traces);
    expect(obs.traceOf('lead:r1')).toBeNull();
    send(1, {
      type: 'run.started',
      sessionId: 's1',
      taskId: null,
      interaction: 'unattended',
      surface: 'task',
    });
    const live = obs.traceOf('lead:r1');
    expect(live).toEqual({ traceparent: traces.get('lead:r1')!.traceparent });
    send(2, { type: 'run.parked', approvalId: 'a1' });
    const span = exporter.getFinishedSpans().find((s) => s.name === 'invoke_agent lead')!;
    expect(live?.traceparent).toBe(toTraceparent(span.spanContext()));
    expect(obs.traceOf('lead:r1')).toEqual(live);
    expect(obs.traceOf('lead:other')).toBeNull();
  });

  it('a run continued from a context that came in a message header (no attributes) gets its own', () => {
    const traceparent = `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-01`;
    const traces = new Map([['lead:r1', { traceparent, attrs: {} }]]);
    const { exporter, send } = observer(traces);
    send(5, { type: 'run.completed', outcome: 'completed', reason: 'final_answer', text: 'ok' });
    const [span] = exporter.getFinishedSpans();
    expect(span?.spanContext().traceId).toBe('ab'.repeat(16));
    expect(span?.parentSpanContext?.spanId).toBe('cd'.repeat(8));
    expect(span?.attributes).toMatchObject({
      'gen_ai.agent.name': 'lead',
      'snotra.run.id': 'lead:r1',
      'snotra.run.resumed': true,
    });
  });

  it('a run whose message came with a traceparent starts under it; a malformed one, or another run’s, is ignored', () => {
    const { obs, exporter, send } = observer(new Map());
    const parent = `00-${'12'.repeat(16)}-${'34'.repeat(8)}-01`;
    obs.parentArrived('lead:r1', parent);
    obs.parentArrived('lead:other', `00-${'56'.repeat(16)}-${'78'.repeat(8)}-01`);
    send(1, { type: 'run.started', sessionId: 's1', taskId: null, interaction: 'attended', surface: 'cli' });
    send(2, { type: 'run.completed', outcome: 'completed', reason: 'final_answer', text: 'ok' });
    const bad = observer(new Map());
    for (const v of [
      '',
      `00-${'0'.repeat(32)}-${'34'.repeat(8)}-01`,
      `00-${'AB'.repeat(16)}-${'34'.repeat(8)}-01`,
    ])
      bad.obs.parentArrived('lead:r1', v);
    bad.send(1, {
      type: 'run.started',
      sessionId: 's1',
      taskId: null,
      interaction: 'attended',
      surface: 'cli',
    });
    bad.send(2, { type: 'run.completed', outcome: 'completed', reason: 'final_answer', text: 'ok' });
    const [span] = exporter.getFinishedSpans();
    expect(span?.spanContext().traceId).toBe('12'.repeat(16));
    expect(span?.parentSpanContext?.spanId).toBe('34'.repeat(8));
    const [root] = bad.exporter.getFinishedSpans();
    expect(root?.parentSpanContext).toBeUndefined();
  });

  it('gen_ai.response.model is the model the server named, redacted, with or without usage; absent when it named none', () => {
    const { obs, exporter, send } = observer(new Map());
    const named = (ts: number, step: number, responseModel: string) =>
      obs.stepModel({ ...head, ts, step, responseModel });
    send(1, { type: 'run.started', sessionId: 's1', taskId: null, interaction: 'attended', surface: 'chat' });
    named(2, 0, 'm-1-2026');
    send(2, { type: 'model.usage', step: 0, inputTokens: 3, outputTokens: 1, responseModel: 'm-1-2026' });
    send(3, { type: 'tool.proposed', callId: 'c1', tool: 'list_dir', args: { path: '.' } });
    send(4, { type: 'model.usage', step: 1, inputTokens: 3, outputTokens: 1 });
    send(5, { type: 'tool.proposed', callId: 'c2', tool: 'list_dir', args: { path: '.' } });
    named(6, 2, `x-${SECRET}`);
    send(6, { type: 'model.usage', step: 2, inputTokens: 3, outputTokens: 1 });
    send(7, { type: 'tool.proposed', callId: 'c3', tool: 'list_dir', args: { path: '.' } });
    // A server that names its model but reports no usage (no model.usage event at all).
    named(8, 3, 'served-without-usage');
    send(9, { type: 'run.completed', outcome: 'completed', reason: 'final_answer', text: 'ok' });
    const chats = exporter.getFinishedSpans().filter((s) => s.name.startsWith('chat'));
    expect(chats.map((c) => c.attributes['gen_ai.request.model'])).toEqual(['m-1', 'm-1', 'm-1', 'm-1']);
    expect(chats.map((c) => c.attributes['gen_ai.response.model'])).toEqual([
      'm-1-2026',
      undefined,
      'x-[REDACTED]',
      'served-without-usage',
    ]);
    expect(chats[3]?.attributes['gen_ai.usage.input_tokens']).toBeUndefined();
  });

  it('a secret in any event field (or a look-alike key) never reaches a span, with captureContent on', () => {
    const { exporter, send } = observer(new Map());
    const variants = [SECRET, `prefix ${SECRET} suffix`, `"${SECRET}"`];
    for (const v of variants) {
      send(1, { type: 'run.started', sessionId: v, taskId: v, interaction: 'attended', surface: v });
      send(2, { type: 'model.text', delta: v });
      send(3, {
        type: 'tool.proposed',
        callId: 'c',
        tool: 'shell',
        args: { command: v, [v]: 1, api_key: 'plain-value-x' },
      });
      send(4, { type: 'tool.proposed', callId: 'd', tool: v, args: {} });
      send(4, { type: 'tool.denied', callId: 'd', tool: v, reason: v, message: v });
      send(4, { type: 'tool.completed', callId: 'c', tool: 'shell', ok: true, content: v, truncated: false });
      send(5, { type: 'run.failed', outcome: 'failed', reason: v, message: v });
    }
    const spans = exporter.getFinishedSpans();
    expect(spans.length).toBeGreaterThan(0);
    const text = JSON.stringify(spans.map((s) => ({ name: s.name, attrs: s.attributes, status: s.status })));
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('plain-value-x'); // redacted by its key name
    // The benign look-alike stays: content is exported, only the secret is cut.
    expect(text).toContain('prefix [REDACTED] suffix');
  });

  it('without captureContent no argument, result or model text is set', () => {
    const { exporter, send } = observer(new Map(), false);
    send(1, { type: 'run.started', sessionId: 's', taskId: null, interaction: 'attended', surface: 'chat' });
    send(2, { type: 'model.text', delta: 'hello there' });
    send(3, { type: 'tool.proposed', callId: 'c', tool: 'read_file', args: { path: 'notes.txt' } });
    send(4, {
      type: 'tool.completed',
      callId: 'c',
      tool: 'read_file',
      ok: true,
      content: 'file body',
      truncated: false,
    });
    send(5, { type: 'run.completed', outcome: 'completed', reason: 'final_answer', text: 'bye' });
    const text = JSON.stringify(exporter.getFinishedSpans().map((s) => s.attributes));
    for (const word of ['hello there', 'notes.txt', 'file body', 'bye']) expect(text).not.toContain(word);
    expect(text).toContain('read_file');
  });
});
